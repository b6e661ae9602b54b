"""The building blocks: ``Module``, ``Neuron`` and ``Layer``, and the nonlinearities they apply.

micrograd's modules, typed and validated, with every random number drawn
from a ``random.Random`` the caller can seed, never from the global
generator. :class:`~minigrad.teach.nn.mlp.MLP` stacks Layers; SGD, which
trains any of them, is in :mod:`minigrad.teach.nn.optim`.
"""

from __future__ import annotations

import abc
import operator
import random
from collections.abc import Callable, Iterable, Sequence

from minigrad.core._random import check_rng as _check_rng
from minigrad.core._validate import as_int
from minigrad.core.value import Value

__all__ = ["NONLINEARITIES", "Layer", "Module", "Neuron"]


#: The names ``nonlin`` accepts, each mapped to the Value method it applies
#: (``"linear"`` applies none). The method is looked up on each call, as
#: micrograd's ``act.tanh()`` does: a student's ``Value.tanh = my_tanh`` reaches
#: every model, made before or after.
_ACTIVATIONS: dict[str, Callable[[Value], Value] | None] = {
    name: operator.methodcaller(name) for name in ("relu", "tanh", "sigmoid", "gelu", "softplus")
} | {"linear": None}

#: Every nonlinearity a Neuron, Layer or MLP accepts.
NONLINEARITIES: tuple[str, ...] = tuple(_ACTIVATIONS)

#: How ``str()`` names a neuron of each nonlinearity, micrograd's way
#: (``ReLUNeuron(2)``, ``LinearNeuron(16)``).
_MICROGRAD_NAMES = {
    "relu": "ReLU",
    "tanh": "Tanh",
    "sigmoid": "Sigmoid",
    "gelu": "GELU",
    "softplus": "Softplus",
    "linear": "Linear",
}


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
    ``repr`` shows the call that makes such a neuron; ``str`` (what ``print``
    shows) is micrograd's, e.g. ``ReLUNeuron(3)``.

    Args:
        nin: How many inputs the neuron takes (at least 1).
        nonlin: One of :data:`NONLINEARITIES`; ``"linear"`` for none. As in
            micrograd, ``True`` is ``"relu"`` and ``False`` is ``"linear"``.
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
        >>> linear = Neuron(3, False)  # micrograd's form: no nonlinearity
        >>> linear
        Neuron(3, nonlin='linear')
        >>> print(linear)
        LinearNeuron(3)
    """

    def __init__(
        self, nin: int, nonlin: str | bool = "relu", *, rng: random.Random | None = None
    ) -> None:
        _check_count(nin, "Neuron: nin")
        name = _nonlin_name(nonlin, "Neuron")
        self._act = _ACTIVATIONS[name]
        rng = _check_rng(rng, "Neuron")
        self.nin = nin
        self.nonlin = name
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

    def __str__(self) -> str:
        return f"{_MICROGRAD_NAMES[self.nonlin]}Neuron({self.nin})"

    # The activation is a method of Value that pickle cannot name; it follows
    # from ``nonlin``, so it is left out of the pickle and looked up again.
    def __getstate__(self) -> dict[str, object]:
        state = self.__dict__.copy()
        del state["_act"]
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._act = _ACTIVATIONS[_nonlin_name(self.nonlin, "Neuron")]


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

    ``repr`` shows the call that makes such a layer; ``str`` is micrograd's,
    ``Layer of [ReLUNeuron(2), ...]``.

    Args:
        nin: Inputs per neuron (at least 1).
        nout: How many neurons (at least 1).
        nonlin: One of :data:`NONLINEARITIES` (or micrograd's ``True`` for
            ``"relu"``, ``False`` for ``"linear"``), used by every neuron.
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
        >>> print(Layer(2, 2, nonlin=False))  # micrograd's form
        Layer of [LinearNeuron(2), LinearNeuron(2)]
    """

    def __init__(
        self,
        nin: int,
        nout: int,
        *,
        nonlin: str | bool = "relu",
        rng: random.Random | None = None,
    ) -> None:
        _check_count(nin, "Layer: nin")
        _check_count(nout, "Layer: nout")
        name = _nonlin_name(nonlin, "Layer")
        rng = _check_rng(rng, "Layer")
        self.nin = nin
        self.nout = nout
        self.nonlin = name
        self.neurons = [Neuron(nin, nonlin=name, rng=rng) for _ in range(nout)]

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

    def __str__(self) -> str:
        return f"Layer of [{', '.join(str(n) for n in self.neurons)}]"


def _zero_grads(params: Iterable[Value]) -> None:
    """The one place that clears gradients: for a Module's parameters and SGD's."""
    for p in params:
        # The slot, as backward writes it: the .grad setter checks a number a
        # user gives (~8x the cost), and this runs on every parameter each step.
        p._grad = 0.0


def _check_count(n: object, what: str) -> None:
    """Raise unless ``n`` is an int >= 1 (a bool is not a size)."""
    as_int(n, what, least=1)


def _nonlin_name(nonlin: object, who: str) -> str:
    """The name in :data:`NONLINEARITIES` that ``nonlin`` means, or an error listing the choices.

    micrograd's ``True`` and ``False`` (ReLU or none) mean ``"relu"`` and ``"linear"``.
    """
    if isinstance(nonlin, bool):
        return "relu" if nonlin else "linear"
    if not isinstance(nonlin, str):
        raise TypeError(
            f"{who}: nonlin must be a str such as 'relu' (or micrograd's True or False), "
            f"got {type(nonlin).__name__} {nonlin!r}"
        )
    if nonlin not in _ACTIVATIONS:
        choices = ", ".join(repr(name) for name in NONLINEARITIES)
        raise ValueError(
            f"{who}: nonlin must be one of {choices} (or micrograd's True or False), got {nonlin!r}"
        )
    return nonlin
