"""The multi-layer perceptron: :class:`MLP`, layers of neurons, and its files.

A stack of :class:`~minigrad.teach.nn.modules.Layer`, the last one linear.
An MLP saves its parameters to a JSON file and loads them back
(:meth:`MLP.save`, :meth:`MLP.load`), and pickles; the format itself is
written and read in :mod:`minigrad.teach.nn.saving`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from minigrad.core._random import check_rng as _check_rng
from minigrad.core.value import Value
from minigrad.teach.nn.modules import Layer, _check_count, _nonlin_name, _Outputs
from minigrad.teach.nn.saving import load_json, read_state, save_json, write_state

# typing costs an import; annotations need it only for mypy (see engine.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import os
    from pathlib import Path

__all__ = ["MLP"]


class MLP(_Outputs):
    """A multi-layer perceptron: layers of sizes ``nouts`` after ``nin`` inputs.

    Every layer but the last applies ``nonlin``; the last is linear, as in
    micrograd, so its outputs are raw scores for any loss. ``repr`` shows the
    call that makes such a model; ``str`` (what ``print`` shows) is
    micrograd's, ``MLP of [Layer of [ReLUNeuron(2), ...], ...]``.

    Args:
        nin: How many inputs (at least 1).
        nouts: The size of each layer in turn, e.g. ``[16, 16, 1]``.
        nonlin: One of :data:`NONLINEARITIES` for the hidden layers (or
            micrograd's ``True`` for ``"relu"``, ``False`` for ``"linear"``).
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
        >>> print(MLP(2, [2, 1]))  # micrograd's text
        MLP of [Layer of [ReLUNeuron(2), ReLUNeuron(2)], Layer of [LinearNeuron(2)]]
    """

    def __init__(
        self,
        nin: int,
        nouts: Sequence[int],
        *,
        nonlin: str | bool = "relu",
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
        name = _nonlin_name(nonlin, "MLP")
        rng = _check_rng(rng, "MLP")
        self.nin = nin
        self.nouts = list(nouts)
        self.nonlin = name
        sizes = [nin, *nouts]
        last = len(nouts) - 1
        self.layers = [
            Layer(sizes[i], sizes[i + 1], nonlin=name if i < last else "linear", rng=rng)
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
        return write_state(self)

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
        return read_state(cls, state, source=source)

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
        return save_json(self, path)

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
        return load_json(cls, path)

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

    def __str__(self) -> str:
        return f"MLP of [{', '.join(str(layer) for layer in self.layers)}]"
