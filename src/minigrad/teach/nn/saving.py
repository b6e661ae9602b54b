"""Saving an MLP: its state as plain JSON-ready data, and that state as a JSON file.

The work behind :meth:`~minigrad.teach.nn.mlp.MLP.state`,
:meth:`~minigrad.teach.nn.mlp.MLP.from_state`,
:meth:`~minigrad.teach.nn.mlp.MLP.save` and
:meth:`~minigrad.teach.nn.mlp.MLP.load`, whose docstrings describe the
format: the architecture, and ``layers[i][j]`` listing neuron j of layer i,
its weights and then its bias, every float written so it reads back bit for
bit.
"""

from __future__ import annotations

import math
import random

# typing costs an import; annotations need it only for mypy (see engine.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import os
    from pathlib import Path

    from minigrad.teach.nn.mlp import MLP

#: What :meth:`MLP.state` writes as its ``format`` and ``version``.
_FORMAT = "minigrad.nn.MLP"
_VERSION = 1


def _describe(value: object) -> str:
    """A short account of a value for an error message: its type and size."""
    if isinstance(value, list):
        return f"a list of {len(value)}"
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


def write_state(model: MLP) -> dict[str, object]:
    """The architecture and every parameter of ``model``: :meth:`MLP.state`."""
    return {
        "format": _FORMAT,
        "version": _VERSION,
        "nin": model.nin,
        "nouts": list(model.nouts),
        "nonlin": model.nonlin,
        "layers": [
            [[p.data for p in n.parameters()] for n in layer.neurons] for layer in model.layers
        ],
    }


def read_state(cls: type[MLP], state: object, *, source: str = "state") -> MLP:
    """The model of class ``cls`` that ``state`` describes: :meth:`MLP.from_state`."""
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
    nonlin = state["nonlin"]
    if not isinstance(nonlin, str):
        # The file names its nonlinearity; micrograd's True and False are for calls only.
        raise ValueError(
            f"{where}: 'nonlin' must be a name such as 'relu', got "
            f"{type(nonlin).__name__} {nonlin!r}"
        )
    try:
        model = cls(state["nin"], state["nouts"], nonlin=nonlin, rng=random.Random(0))
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


def save_json(model: MLP, path: str | os.PathLike[str]) -> Path:
    """Write ``model.state()`` to ``path`` as JSON, one neuron per line: :meth:`MLP.save`."""
    import json
    from pathlib import Path

    state = model.state()
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
        "  [\n" + ",\n".join(f"    {json.dumps(row)}" for row in rows) + "\n  ]" for rows in layers
    )
    target = Path(path)
    target.write_text(f'{head},\n "layers": [\n{body}\n ]}}\n', encoding="utf-8")
    return target


def load_json(cls: type[MLP], path: str | os.PathLike[str]) -> MLP:
    """The model of class ``cls`` saved to ``path``: :meth:`MLP.load`."""
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
