"""Engines: the same user code runs on each autograd library through these few hooks.

minigrad and the floor (``floor.Bare``) are always there; micrograd and torch
when installed. Plain floats are not an engine (they have no backward): the
workloads take them directly, with :func:`float_relu`.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import metadata
from typing import Any

import minigrad
from floor import Bare

MINIGRAD = "minigrad"
MICROGRAD = "micrograd"
TORCH = "torch 0-d float64"
BARE = "floor: bare node per op"
#: minigrad.compile's generated code: a row of the MLP step, not an engine
#: (it runs a whole traced function, not one op at a time).
COMPILED = "minigrad.compile"
#: The same, with relu a custom Rule called by reference
COMPILED_CUSTOM = "minigrad.compile, custom relu"
#: minigrad with relu written micrograd's way, a ``_backward`` closure on each node
CLOSURE = "minigrad, relu a _backward closure"
#: Rows that are not engines: the same workloads on floats.
FLOATS = "plain floats, forward only"
HANDWRITTEN = "plain floats, hand-written reverse pass"


@dataclass(frozen=True)
class Engine:
    """How one autograd library makes a leaf, applies relu and runs backward."""

    name: str
    #: The installed distribution and its version, for the report's header;
    #: empty for the floor, which is this folder's own code.
    package: str
    version: str
    leaf: Callable[[float], Any]
    relu: Callable[[Any], Any]
    backward: Callable[[Any], None]
    zero: Callable[[Any], None]
    grad: Callable[[Any], float]
    data: Callable[[Any], float]
    #: The nodes a node was made from, for counting a graph's nodes; None where
    #: tracemalloc cannot see the nodes (torch's live in C++).
    children: Callable[[Any], Sequence[Any]] | None = None
    #: Run once only at the sizes of a million ops and more (it takes minutes).
    slow: bool = False


def float_relu(x: float) -> float:
    """relu on a plain float, called the way the engines' relu is."""
    return x if x > 0.0 else 0.0


def _zero_float(p: Any) -> None:
    p.grad = 0.0


def _zero_int(p: Any) -> None:
    p.grad = 0  # as micrograd's own zero_grad


def value_like(
    name: str,
    package: str,
    version: str,
    cls: type[Any],
    children: Callable[[Any], Sequence[Any]],
    zero: Callable[[Any], None] = _zero_float,
) -> Engine:
    """An engine whose nodes have micrograd's shape.

    That is: a leaf is ``cls(x)``; a node has ``.relu()``, ``.backward()``,
    ``.data`` and ``.grad``. relu and backward are the class's own functions,
    not wrapped in a lambda: the timed code calls them directly.
    """
    return Engine(
        name=name,
        package=package,
        version=version,
        leaf=cls,
        relu=cls.relu,
        backward=cls.backward,
        zero=zero,
        grad=lambda p: float(p.grad),
        data=lambda v: float(v.data),
        children=children,
    )


def minigrad_engine() -> Engine:
    value = minigrad.Value
    return value_like(MINIGRAD, "minigrad", minigrad.__version__, value, lambda v: v.parents)


def bare_engine() -> Engine:
    return value_like(BARE, "", "", Bare, Bare.parents)


def micrograd_engine() -> Engine | None:
    try:
        value = importlib.import_module("micrograd.engine").Value
    except ImportError:
        return None
    version = _dist_version("micrograd")
    return value_like(MICROGRAD, "micrograd", version, value, lambda v: tuple(v._prev), _zero_int)


def torch_engine() -> Engine | None:
    try:
        with warnings.catch_warnings():
            # torch warns when numpy is missing; 0-d tensors do not need it.
            warnings.simplefilter("ignore")
            torch = importlib.import_module("torch")
    except ImportError:
        return None
    f64 = torch.float64

    def leaf(x: float) -> Any:
        return torch.tensor(x, dtype=f64, requires_grad=True)

    def zero(p: Any) -> None:
        p.grad = None

    def grad(p: Any) -> float:
        return 0.0 if p.grad is None else float(p.grad.item())

    return Engine(
        name=TORCH,
        package="torch",
        version=f"{torch.__version__} ({torch.get_num_threads()} threads)",
        leaf=leaf,
        relu=torch.relu,
        backward=lambda v: v.backward(),
        zero=zero,
        grad=grad,
        data=lambda v: float(v.item()),
        slow=True,
    )


#: The optional engines: how to load one, and how to install it.
OPTIONAL: tuple[tuple[Callable[[], Engine | None], str, str], ...] = (
    (micrograd_engine, MICROGRAD, "pip install -e '.[bench]'"),
    (torch_engine, TORCH, "pip install torch"),
)


def load_engines() -> tuple[list[Engine], dict[str, str]]:
    """The engines in the order of the report's rows, and the missing ones with a hint.

    minigrad comes first (every ratio is relative to it), the floor last.
    """
    engines = [minigrad_engine()]
    missing = {}
    for make, name, hint in OPTIONAL:
        engine = make()
        if engine is None:
            missing[name] = f"{name.split()[0]} is not installed ({hint}): its rows are skipped."
        else:
            engines.append(engine)
    engines.append(bare_engine())
    return engines, missing


def _dist_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "?"
