"""Neural networks on scalar Values: neurons, layers, multi-layer perceptrons, SGD.

The same building blocks as micrograd's ``nn`` module (``Module``, ``Neuron``,
``Layer``, ``MLP``), typed and validated, with a choice of nonlinearity and
with every random number drawn from a ``random.Random`` the caller can seed,
never from the global generator, so a model is reproducible from its seed.
An MLP saves its parameters to a JSON file and loads them back
(:meth:`MLP.save`, :meth:`MLP.load`), and pickles.

Example:
    >>> import random
    >>> from minigrad.teach.nn import MLP, SGD
    >>> model = MLP(2, [4, 1], rng=random.Random(0))
    >>> opt = SGD(model.parameters(), lr=0.1)
    >>> loss = (model([1.0, -2.0]) - 1.0) ** 2
    >>> before = loss.data
    >>> opt.zero_grad()
    >>> loss.backward()
    >>> opt.step()
    >>> after = ((model([1.0, -2.0]) - 1.0) ** 2).data
    >>> after < before
    True
"""

from __future__ import annotations

import abc
import math
import random
from collections.abc import Callable, Iterable, Sequence

from minigrad.core._random import check_rng as _check_rng
from minigrad.core._validate import as_int, positive
from minigrad.core.value import Value

# typing costs an import; annotations need it only for mypy (see engine.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import os
    from pathlib import Path

__all__ = ["MLP", "NONLINEARITIES", "SGD", "Layer", "Module", "Neuron"]

#: The names ``nonlin`` accepts, each mapped to the Value method it applies
#: (``"linear"`` applies none).
_ACTIVATIONS: dict[str, Callable[[Value], Value] | None] = {
    "relu": Value.relu,
    "tanh": Value.tanh,
    "sigmoid": Value.sigmoid,
    "gelu": Value.gelu,
    "softplus": Value.softplus,
    "linear": None,
}

#: Every nonlinearity a Neuron, Layer or MLP accepts.
NONLINEARITIES: tuple[str, ...] = tuple(_ACTIVATIONS)


class Module:
    """Anything with parameters: the base of Neuron, Layer and MLP.

    Subclass it and override :meth:`parameters` to get :meth:`zero_grad`.

    Example:
        >>> class Scale(Module):
        ...     def __init__(self) -> None:
        ...         self.k = Value(2.0)
        ...     def parameters(self) -> list[Value]:
        ...         return [self.k]
        >>> m = Scale()
        >>> (m.k * 3.0).backward()
        >>> m.k.grad
        3.0
        >>> m.zero_grad()
        >>> m.k.grad
        0.0
    """

    def parameters(self) -> list[Value]:
        """Every trainable Value of this module, in a fixed order (none here).

        Example:
            >>> Module().parameters()
            []
        """
        return []

    def zero_grad(self) -> None:
        """Set ``.grad = 0.0`` on every parameter (backward accumulates).

        Example:
            >>> import random
            >>> n = Neuron(2, rng=random.Random(0))
            >>> n([1.0, 1.0]).backward()
            >>> n.zero_grad()
            >>> [p.grad for p in n.parameters()]
            [0.0, 0.0, 0.0]
        """
        _zero_grads(self.parameters())


class Neuron(Module):
    """One neuron: ``nonlin(w . x + b)``.

    Weights start uniform in [-1, 1] and the bias at 0, as in micrograd.
    They are labelled ``w0``, ``w1``, ... and ``b`` for pictures of the graph.

    Args:
        nin: How many inputs the neuron takes (at least 1).
        nonlin: One of :data:`NONLINEARITIES`; ``"linear"`` for none.
        rng: Where the initial weights come from. Pass ``random.Random(seed)``
            for reproducible weights; None uses a fresh, unseeded
            ``random.Random()`` (never the global generator).

    Raises:
        TypeError: ``nin`` is not an int or ``rng`` is not a ``random.Random``.
        ValueError: ``nin`` < 1 or ``nonlin`` is not a known name.

    Example:
        >>> import random
        >>> n = Neuron(3, nonlin="tanh", rng=random.Random(0))
        >>> n
        Neuron(3, nonlin='tanh')
        >>> y = n([1.0, 2.0, 3.0])
        >>> y.op, len(n.parameters())
        ('tanh', 4)
    """

    def __init__(self, nin: int, *, nonlin: str = "relu", rng: random.Random | None = None) -> None:
        _check_count(nin, "Neuron: nin")
        self._act = _activation(nonlin, "Neuron")
        rng = _check_rng(rng, "Neuron")
        self.nin = nin
        self.nonlin = nonlin
        self.w = [Value(rng.uniform(-1.0, 1.0), label=f"w{i}") for i in range(nin)]
        self.b = Value(0.0, label="b")

    def __call__(self, x: Sequence[Value | float]) -> Value:
        """The neuron's output for inputs ``x`` (Values or plain numbers).

        Raises:
            ValueError: ``x`` does not hold exactly ``nin`` inputs.
        """
        if len(x) != self.nin:
            raise ValueError(f"Neuron: expected {self.nin} inputs, got {len(x)}")
        # sum with the bias as start value: one node per multiply-add, no 0.0 node.
        act = sum((wi * xi for wi, xi in zip(self.w, x, strict=True)), self.b)
        return act if self._act is None else self._act(act)

    def predict(self, x: Sequence[float]) -> float:
        """The output for float inputs as a float, building no graph.

        The same float operations in the same order as :meth:`__call__`, so the
        result equals ``self(x).data`` exactly, at a fraction of the cost: for
        plotting and evaluating, where no gradient is wanted.

        Raises:
            ValueError: ``x`` does not hold exactly ``nin`` inputs.

        Example:
            >>> import random
            >>> n = Neuron(2, nonlin="tanh", rng=random.Random(0))
            >>> n.predict([1.0, -2.0]) == n([1.0, -2.0]).data
            True
        """
        if len(x) != self.nin:
            raise ValueError(f"Neuron: expected {self.nin} inputs, got {len(x)}")
        act = self.b.data
        for wi, xi in zip(self.w, x, strict=True):
            act = act + wi.data * xi
        # The nonlinearity through a Value: one node, and exactly the forward's float.
        return act if self._act is None else self._act(Value(act)).data

    def parameters(self) -> list[Value]:
        """The weights, then the bias.

        Example:
            >>> import random
            >>> [p.label for p in Neuron(2, rng=random.Random(0)).parameters()]
            ['w0', 'w1', 'b']
        """
        return [*self.w, self.b]

    def __repr__(self) -> str:
        return f"Neuron({self.nin}, nonlin={self.nonlin!r})"

    # The activation is a method of Value that pickle cannot name; it follows
    # from ``nonlin``, so it is left out of the pickle and looked up again.
    def __getstate__(self) -> dict[str, object]:
        state = self.__dict__.copy()
        del state["_act"]
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._act = _activation(self.nonlin, "Neuron")


class _Outputs(Module, abc.ABC):
    """A module whose :meth:`forward` gives a list: :class:`Layer` and :class:`MLP`."""

    @abc.abstractmethod
    def forward(self, x: Sequence[Value | float]) -> list[Value]:
        """The outputs, always as a list."""

    def __call__(self, x: Sequence[Value | float]) -> Value | list[Value]:
        """The outputs; a single Value when there is one output.

        This is micrograd's convention (``score = model(x)``); use
        :meth:`forward` for a list whatever the size, e.g. in typed code.

        Raises:
            ValueError: ``x`` does not hold exactly ``nin`` inputs.
        """
        out = self.forward(x)
        return out[0] if len(out) == 1 else out


class Layer(_Outputs):
    """A row of ``nout`` neurons that all see the same ``nin`` inputs.

    Args:
        nin: Inputs per neuron (at least 1).
        nout: How many neurons (at least 1).
        nonlin: One of :data:`NONLINEARITIES`, used by every neuron.
        rng: Where the initial weights come from (see :class:`Neuron`).

    Raises:
        TypeError: ``nin`` or ``nout`` is not an int, or ``rng`` is not a
            ``random.Random``.
        ValueError: ``nin`` or ``nout`` < 1, or ``nonlin`` is not a known name.

    Example:
        >>> import random
        >>> layer = Layer(2, 3, rng=random.Random(0))
        >>> layer
        Layer(2, 3, nonlin='relu')
        >>> len(layer.forward([1.0, -1.0])), len(layer.parameters())
        (3, 9)
    """

    def __init__(
        self, nin: int, nout: int, *, nonlin: str = "relu", rng: random.Random | None = None
    ) -> None:
        _check_count(nin, "Layer: nin")
        _check_count(nout, "Layer: nout")
        _activation(nonlin, "Layer")
        rng = _check_rng(rng, "Layer")
        self.nin = nin
        self.nout = nout
        self.nonlin = nonlin
        self.neurons = [Neuron(nin, nonlin=nonlin, rng=rng) for _ in range(nout)]

    def forward(self, x: Sequence[Value | float]) -> list[Value]:
        """The outputs of every neuron, always as a list.

        Example:
            >>> import random
            >>> [y.op for y in Layer(2, 2, nonlin="tanh", rng=random.Random(0)).forward([1.0, 2.0])]
            ['tanh', 'tanh']
        """
        return [n(x) for n in self.neurons]

    def predict(self, x: Sequence[float]) -> list[float]:
        """The outputs for float inputs as floats, building no graph (see :meth:`Neuron.predict`).

        Example:
            >>> import random
            >>> layer = Layer(2, 2, rng=random.Random(0))
            >>> layer.predict([1.0, 2.0]) == [y.data for y in layer.forward([1.0, 2.0])]
            True
        """
        return [n.predict(x) for n in self.neurons]

    def parameters(self) -> list[Value]:
        """Every neuron's parameters, neuron by neuron.

        Example:
            >>> import random
            >>> [p.label for p in Layer(1, 2, rng=random.Random(0)).parameters()]
            ['w0', 'b', 'w0', 'b']
        """
        return [p for n in self.neurons for p in n.parameters()]

    def __repr__(self) -> str:
        return f"Layer({self.nin}, {self.nout}, nonlin={self.nonlin!r})"


class MLP(_Outputs):
    """A multi-layer perceptron: layers of sizes ``nouts`` after ``nin`` inputs.

    Every layer but the last applies ``nonlin``; the last is linear, as in
    micrograd, so its outputs are raw scores for any loss.

    Args:
        nin: How many inputs (at least 1).
        nouts: The size of each layer in turn, e.g. ``[16, 16, 1]``.
        nonlin: One of :data:`NONLINEARITIES` for the hidden layers.
        rng: Where the initial weights come from. Pass ``random.Random(seed)``
            for a reproducible model; None uses a fresh, unseeded
            ``random.Random()`` (never the global generator).

    Raises:
        TypeError: A size is not an int, ``nouts`` is not a sequence, or
            ``rng`` is not a ``random.Random``.
        ValueError: A size < 1, ``nouts`` is empty, or ``nonlin`` is unknown.

    Example:
        >>> import random
        >>> model = MLP(2, [16, 16, 1], rng=random.Random(0))
        >>> model
        MLP(2, [16, 16, 1], nonlin='relu')
        >>> len(model.parameters())
        337
        >>> score = model([0.5, -1.0])  # one output: a Value, as micrograd
        >>> score.op
        '+'
    """

    def __init__(
        self,
        nin: int,
        nouts: Sequence[int],
        *,
        nonlin: str = "relu",
        rng: random.Random | None = None,
    ) -> None:
        _check_count(nin, "MLP: nin")
        if isinstance(nouts, str) or not isinstance(nouts, Sequence):
            raise TypeError(
                f"MLP: nouts must be a sequence of layer sizes such as [16, 16, 1], "
                f"got {type(nouts).__name__} {nouts!r}"
            )
        if not nouts:
            raise ValueError("MLP: nouts must name at least one layer size, got []")
        for i, n in enumerate(nouts):
            _check_count(n, f"MLP: nouts[{i}]")
        _activation(nonlin, "MLP")
        rng = _check_rng(rng, "MLP")
        self.nin = nin
        self.nouts = list(nouts)
        self.nonlin = nonlin
        sizes = [nin, *nouts]
        last = len(nouts) - 1
        self.layers = [
            Layer(sizes[i], sizes[i + 1], nonlin=nonlin if i < last else "linear", rng=rng)
            for i in range(len(nouts))
        ]

    def forward(self, x: Sequence[Value | float]) -> list[Value]:
        """The outputs of the last layer, always as a list.

        Example:
            >>> import random
            >>> [y.op for y in MLP(2, [3, 2], rng=random.Random(0)).forward([1.0, 2.0])]
            ['+', '+']
        """
        out = self.layers[0].forward(x)
        for layer in self.layers[1:]:
            out = layer.forward(out)
        return out

    def predict(self, x: Sequence[float]) -> list[float]:
        """The outputs for float inputs as floats, building no graph.

        Equal to ``[y.data for y in self.forward(x)]`` exactly and about ten
        times faster: for plotting a decision boundary or scoring test data.

        Example:
            >>> import random
            >>> model = MLP(2, [4, 1], rng=random.Random(0))
            >>> model.predict([0.5, -1.0]) == [model([0.5, -1.0]).data]
            True
        """
        out = self.layers[0].predict(x)
        for layer in self.layers[1:]:
            out = layer.predict(out)
        return out

    def state(self) -> dict[str, object]:
        """The architecture and every parameter, as plain JSON-ready data.

        ``layers[i][j]`` lists neuron j of layer i: its weights, then its bias
        (the order of :meth:`Neuron.parameters`). :meth:`from_state` rebuilds
        the model; :meth:`save` writes this as JSON.

        Example:
            >>> import random
            >>> s = MLP(1, [2, 1], rng=random.Random(0)).state()
            >>> s["format"], s["nin"], s["nouts"], s["nonlin"]
            ('minigrad.nn.MLP', 1, [2, 1], 'relu')
            >>> [[len(neuron) for neuron in layer] for layer in s["layers"]]
            [[2, 2], [3]]
        """
        return {
            "format": _FORMAT,
            "version": _VERSION,
            "nin": self.nin,
            "nouts": list(self.nouts),
            "nonlin": self.nonlin,
            "layers": [
                [[p.data for p in n.parameters()] for n in layer.neurons] for layer in self.layers
            ],
        }

    @classmethod
    def from_state(cls, state: object, *, source: str = "state") -> MLP:
        """The model that :meth:`state` described, with the same parameters bit for bit.

        Args:
            state: What :meth:`state` returned (or the JSON of it, parsed).
            source: Where ``state`` came from, for error messages.

        Raises:
            ValueError: ``state`` is not a model's state; the message says
                what is wrong and where.

        Example:
            >>> import random
            >>> model = MLP(2, [3, 1], rng=random.Random(0))
            >>> copy = MLP.from_state(model.state())
            >>> copy.predict([1.0, 2.0]) == model.predict([1.0, 2.0])
            True
        """
        where = f"MLP: {source}"
        if not isinstance(state, dict):
            raise ValueError(f"{where}: must be a JSON object, got {type(state).__name__}")
        if state.get("format") != _FORMAT:
            raise ValueError(
                f"{where}: not a saved minigrad MLP: its 'format' is "
                f"{state.get('format')!r}, not {_FORMAT!r}"
            )
        if state.get("version") != _VERSION:
            raise ValueError(
                f"{where}: format version {state.get('version')!r}; this minigrad reads "
                f"version {_VERSION}"
            )
        for key in ("nin", "nouts", "nonlin", "layers"):
            if key not in state:
                raise ValueError(f"{where}: {key!r} is missing")
        try:
            model = cls(state["nin"], state["nouts"], nonlin=state["nonlin"], rng=random.Random(0))
        except (TypeError, ValueError) as exc:
            why = str(exc).removeprefix("MLP: ")
            raise ValueError(f"{where}: the architecture is not valid: {why}") from None
        layers = state["layers"]
        if not isinstance(layers, list) or len(layers) != len(model.layers):
            raise ValueError(
                f"{where}: 'layers' must be a list of {len(model.layers)} layers, got "
                f"{_describe(layers)}"
            )
        for i, (rows, layer) in enumerate(zip(layers, model.layers, strict=True)):
            if not isinstance(rows, list) or len(rows) != layer.nout:
                raise ValueError(
                    f"{where}: layers[{i}] must be a list of {layer.nout} neurons, got "
                    f"{_describe(rows)}"
                )
            for j, (row, neuron) in enumerate(zip(rows, layer.neurons, strict=True)):
                params = neuron.parameters()
                if not isinstance(row, list) or len(row) != len(params):
                    raise ValueError(
                        f"{where}: layers[{i}][{j}] must be a list of {len(params)} numbers "
                        f"({neuron.nin} weights, then the bias), got {_describe(row)}"
                    )
                for k, (number, p) in enumerate(zip(row, params, strict=True)):
                    if isinstance(number, bool) or not isinstance(number, int | float):
                        raise ValueError(
                            f"{where}: layers[{i}][{j}][{k}] must be a number, got "
                            f"{type(number).__name__} {number!r}"
                        )
                    if not math.isfinite(number):
                        raise ValueError(
                            f"{where}: layers[{i}][{j}][{k}] must be finite, got {number!r}"
                        )
                    p.data = float(number)
        return model

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the architecture and the parameters to ``path`` as JSON; return the path.

        The file is :meth:`state` as JSON, one neuron per line. Floats are
        written as Python's ``repr`` writes them, so :meth:`load` gets every
        parameter back bit for bit.

        Raises:
            ValueError: A parameter is NaN or infinite (JSON has no such
                number); the message names it.

        Example:
            >>> import pathlib, random, tempfile
            >>> model = MLP(2, [3, 1], rng=random.Random(0))
            >>> with tempfile.TemporaryDirectory() as tmp:
            ...     path = model.save(pathlib.Path(tmp, "model.json"))
            ...     same = MLP.load(path)
            >>> same, same.predict([1.0, 2.0]) == model.predict([1.0, 2.0])
            (MLP(2, [3, 1], nonlin='relu'), True)
        """
        import json
        from pathlib import Path

        state = self.state()
        layers = state.pop("layers")
        assert isinstance(layers, list)
        for i, rows in enumerate(layers):
            for j, row in enumerate(rows):
                for k, number in enumerate(row):
                    if not math.isfinite(number):
                        raise ValueError(
                            f"MLP.save: parameter layers[{i}][{j}][{k}] is {number!r}, which "
                            "JSON cannot hold; the model has diverged"
                        )
        # One neuron per line: a file a person can read and diff.
        head = json.dumps(state)[:-1]
        body = ",\n".join(
            "  [\n" + ",\n".join(f"    {json.dumps(row)}" for row in rows) + "\n  ]"
            for rows in layers
        )
        target = Path(path)
        target.write_text(f'{head},\n "layers": [\n{body}\n ]}}\n', encoding="utf-8")
        return target

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> MLP:
        """The model :meth:`save` wrote to ``path``.

        Raises:
            OSError: The file cannot be read (e.g. FileNotFoundError).
            ValueError: The file is not JSON, or not a saved MLP; the message
                names the file and says what is wrong.

        Example:
            >>> import pathlib, tempfile
            >>> with tempfile.TemporaryDirectory() as tmp:
            ...     bad = pathlib.Path(tmp, "model.json")
            ...     _ = bad.write_text('{"format": "minigrad.nn.MLP", "version": 1}')
            ...     MLP.load(bad)  # doctest: +ELLIPSIS
            Traceback (most recent call last):
                ...
            ValueError: MLP: '.../model.json': 'nin' is missing
        """
        import json
        from pathlib import Path

        target = Path(path)
        text = target.read_text(encoding="utf-8")

        def no_constant(name: str) -> float:
            raise ValueError(f"{name} is not a number JSON allows")

        try:
            state = json.loads(text, parse_constant=no_constant)
        except ValueError as exc:
            raise ValueError(f"MLP: {str(target)!r}: not JSON: {exc}") from None
        return cls.from_state(state, source=repr(str(target)))

    def parameters(self) -> list[Value]:
        """Every layer's parameters, layer by layer.

        Example:
            >>> import random
            >>> len(MLP(3, [4, 2], rng=random.Random(0)).parameters())  # 4 * (3+1) + 2 * (4+1)
            26
        """
        return [p for layer in self.layers for p in layer.parameters()]

    def __repr__(self) -> str:
        return f"MLP({self.nin}, {self.nouts}, nonlin={self.nonlin!r})"


class SGD:
    """Plain stochastic gradient descent: ``p.data -= lr * p.grad``.

    Args:
        params: The Values to train, e.g. ``model.parameters()``.
        lr: The learning rate (> 0). It is a read/write attribute, so a
            schedule can change it between steps.

    Raises:
        TypeError: A parameter is not a Value, or ``lr`` is not a number.
        ValueError: ``params`` is empty or repeats a Value, or ``lr`` is not
            a finite number > 0.

    Example:
        >>> w = Value(1.0)
        >>> opt = SGD([w], lr=0.5)
        >>> (w * w).backward()  # d/dw w**2 = 2
        >>> opt.step()
        >>> w.data
        0.0
        >>> opt.zero_grad()
        >>> w.grad
        0.0
    """

    def __init__(self, params: Iterable[Value], lr: float) -> None:
        if isinstance(params, Value) or not isinstance(params, Iterable):
            raise TypeError(
                f"SGD: params must be an iterable of Values such as model.parameters(), "
                f"got {type(params).__name__}"
            )
        kept = list(params)
        if not kept:
            raise ValueError("SGD: params is empty; there is nothing to train")
        seen: set[Value] = set()
        for i, p in enumerate(kept):
            if not isinstance(p, Value):
                raise TypeError(f"SGD: params[{i}] must be a Value, got {type(p).__name__} {p!r}")
            if p in seen:
                # It would be stepped twice per step(), silently doubling its rate.
                raise ValueError(f"SGD: params[{i}] appears more than once: {p!r}")
            seen.add(p)
        self.params = kept
        self.lr = lr

    @property
    def lr(self) -> float:
        """The learning rate (read/write; a finite number > 0).

        Example:
            >>> opt = SGD([Value(1.0)], lr=1.0)
            >>> for step in range(3):
            ...     opt.lr = 1.0 / (1 + step)  # a schedule
            >>> opt.lr
            0.3333333333333333
        """
        return self._lr

    @lr.setter
    def lr(self, lr: float) -> None:
        lr = positive(lr, "SGD: lr")
        self._lr = float(lr)

    def step(self) -> None:
        """Move every parameter against its gradient: ``p.data -= lr * p.grad``.

        Example:
            >>> w = Value(2.0)
            >>> w.grad = 4.0
            >>> SGD([w], lr=0.25).step()
            >>> w.data
            1.0
        """
        lr = self._lr
        for p in self.params:
            p.data = p.data - lr * p.grad

    def zero_grad(self) -> None:
        """Set ``.grad = 0.0`` on every parameter (backward accumulates).

        Example:
            >>> w = Value(2.0)
            >>> opt = SGD([w], lr=0.1)
            >>> (w * 3.0).backward()
            >>> opt.zero_grad()
            >>> w.grad
            0.0
        """
        _zero_grads(self.params)

    def __repr__(self) -> str:
        return f"SGD({len(self.params)} parameters, lr={self._lr!r})"


#: What :meth:`MLP.state` writes as its ``format`` and ``version``.
_FORMAT = "minigrad.nn.MLP"
_VERSION = 1


def _describe(value: object) -> str:
    """A short account of a value for an error message: its type and size."""
    if isinstance(value, list):
        return f"a list of {len(value)}"
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


def _zero_grads(params: Iterable[Value]) -> None:
    """The one place that clears gradients: for a Module's parameters and SGD's."""
    for p in params:
        p.grad = 0.0


def _check_count(n: object, what: str) -> None:
    """Raise unless ``n`` is an int >= 1 (a bool is not a size)."""
    as_int(n, what, least=1)


def _activation(nonlin: object, who: str) -> Callable[[Value], Value] | None:
    """The Value method ``nonlin`` names, or a ValueError listing the choices."""
    if not isinstance(nonlin, str):
        raise TypeError(f"{who}: nonlin must be a str, got {type(nonlin).__name__} {nonlin!r}")
    try:
        return _ACTIVATIONS[nonlin]
    except KeyError:
        choices = ", ".join(repr(name) for name in NONLINEARITIES)
        raise ValueError(f"{who}: nonlin must be one of {choices}, got {nonlin!r}") from None
