"""The rules the sensitivity section checks: injected errors and realistic mistakes.

Every op here is a custom op of one input: a forward and a derivative, both
written once against a namespace of operations (``ns.sin``, ``ns.where``,
``ns.f32``, ...), so the same lines run on floats (the forward of a
``minigrad.Rule``), on minigrad Values or floats (its partial), on torch
tensors (a ``torch.autograd.Function``) and on JAX arrays (a
``jax.custom_vjp``). :data:`NAMESPACES` holds the namespaces each tool
builds; ``ns.data(x)`` is what a condition may look at (the float inside a
Value; the tensor itself elsewhere).

Injected: the twelve smooth functions of ``sweep.py`` with the derivative
multiplied by ``1 + r``, r = 1e-1 ... 1e-12, at +-1e-8, 1e-6, 1e-4, 1e-2, 0.3,
1, 3, 1e2, 1e4, 1e6 and 1e8 where each is defined.

Realistic (:data:`MISTAKES`): each a forward with the derivative a programmer
could plausibly write for it, at points where the mistake shows:

- ``gelu, tanh-approximate derivative``: the exact forward x * Phi(x) with the
  derivative of the tanh approximation;
- ``float32 derivative``: every smooth function's true derivative rounded to
  float32 (``ns.f32``: a struct round-trip for floats, a cast for tensors);
- ``dropped 1e-6 term``: ``exp(x) + 1e-6 * x * x`` differentiated as ``exp(x)``;
- ``asymptote too early``: ``log(1 + x*x)`` whose derivative switches to the
  large-x asymptote ``2 / x`` from ``|x| >= 1`` on (wrong on part of the domain);
- ``softplus' = 1 above 10``, ``log1p series near 0`` (``1 - x + x*x`` for
  ``|x| < 0.1``) and ``tanh' = 0 for |x| > 10``.

Example:
    >>> import math
    >>> op = injected(FUNCTIONS[3], 1e-3)  # sin(x), derivative 0.1% high
    >>> op.df(FLOATS, 0.5, math.sin(0.5)) / math.cos(0.5)
    1.001
"""

from __future__ import annotations

import math
import struct
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sweep import FUNCTIONS, Fn

#: The relative errors injected, largest first.
ERRORS = tuple(10.0**-k for k in range(1, 13))
#: |x| of the injected sweep.
MAGNITUDES = (1e-8, 1e-6, 1e-4, 1e-2, 0.3, 1.0, 3.0, 1e2, 1e4, 1e6, 1e8)

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


@dataclass(frozen=True)
class Op:
    """A custom op of one input: forward, derivative, domain, the points to check."""

    name: str
    f: Callable[[Any, Any], Any]
    df: Callable[[Any, Any, Any], Any]
    points: tuple[float, ...]
    lo: float = -math.inf
    hi: float = math.inf
    poles: tuple[float, ...] = ()
    #: The family the op's table row counts it in.
    family: str = ""
    #: A part added outside the custom op, with the tool's own operations (a
    #: sine the tool's graph shows: ``custom(x) + native(ns, x)``), or None.
    native: Callable[[Any, Any], Any] | None = None


def f32(x: float) -> float:
    """``x`` rounded to the nearest float32, back as a float.

    Example:
        >>> f32(0.1) == 0.1, abs(f32(0.1) - 0.1) < 2e-9
        (False, True)
    """
    return float(struct.unpack("f", struct.pack("f", x))[0])


def _where(c: Any, a: Any, b: Any) -> Any:
    return a if c else b


#: Operations on floats: the forward of every op, and the exact oracle's float side.
FLOATS = types.SimpleNamespace(
    sin=math.sin,
    cos=math.cos,
    tan=math.tan,
    tanh=math.tanh,
    exp=math.exp,
    log=math.log,
    log1p=math.log1p,
    sqrt=math.sqrt,
    erf=math.erf,
    abs=abs,
    where=_where,
    f32=f32,
    data=lambda x: x,
)


def minigrad_namespace() -> types.SimpleNamespace:
    """Operations a minigrad partial may use: each takes a float or a Value."""
    import minigrad as mg

    def data(x: Any) -> float:
        return float(x.data) if isinstance(x, mg.Value) else float(x)

    def rounded(x: Any) -> Any:
        # Rounding has no derivative: on a Value (create_graph) it is a constant.
        return mg.Value(f32(x.data)) if isinstance(x, mg.Value) else f32(x)

    names = ("sin", "cos", "tan", "tanh", "exp", "log", "log1p", "sqrt", "erf")
    ops = {n: getattr(mg, n) for n in names}
    return types.SimpleNamespace(**ops, abs=abs, where=_where, f32=rounded, data=data)


def in_domain(op: Op, x: float) -> bool:
    """Whether ``x`` is in the op's open domain and off its poles."""
    return op.lo < x < op.hi and x not in op.poles


def _points(fn: Fn) -> tuple[float, ...]:
    xs = sorted({s * a for a in MAGNITUDES for s in (1.0, -1.0)})
    return tuple(x for x in xs if fn.inside(x))


def injected(fn: Fn, r: float) -> Op:
    """``fn`` as a custom op whose derivative is ``(1 + r)`` times the true one (r=0: right)."""
    factor = 1.0 + r
    return Op(
        fn.name,
        fn.f,
        lambda ns, x, out: factor * fn.df(ns, x, out),
        _points(fn),
        fn.lo,
        fn.hi,
        fn.poles,
        "injected",
    )


def _gelu(ns: Any, x: Any) -> Any:
    return 0.5 * x * (1.0 + ns.erf(x * (1.0 / math.sqrt(2.0))))


def _gelu_exact(ns: Any, x: Any, out: Any) -> Any:
    return (
        0.5 * (1.0 + ns.erf(x * (1.0 / math.sqrt(2.0)))) + x * ns.exp(-0.5 * x * x) * _INV_SQRT_2PI
    )


def _gelu_tanh(ns: Any, x: Any, out: Any) -> Any:
    t = ns.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x))
    return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * _SQRT_2_OVER_PI * (1.0 + 0.134145 * x * x)


def _log1p_series(ns: Any, x: Any, out: Any) -> Any:
    return ns.where(ns.abs(ns.data(x)) < 0.1, 1.0 - x + x * x, 1.0 / (1.0 + x))


def _log_1_plus_square(ns: Any, x: Any, out: Any) -> Any:
    return ns.where(ns.abs(ns.data(x)) >= 1.0, 2.0 / x, 2.0 * x / (1.0 + x * x))


def _softplus(ns: Any, x: Any) -> Any:
    return ns.log1p(ns.exp(x))


def _softplus_one_above_10(ns: Any, x: Any, out: Any) -> Any:
    return ns.where(ns.data(x) > 10.0, 1.0 + 0.0 * x, 1.0 / (1.0 + ns.exp(-x)))


def _tanh_zero_far_out(ns: Any, x: Any, out: Any) -> Any:
    return ns.where(ns.abs(ns.data(x)) > 10.0, 0.0 * x, 1.0 - out * out)


def _both_signs(xs: tuple[float, ...]) -> tuple[float, ...]:
    return tuple(sorted({s * x for x in xs for s in (1.0, -1.0)}))


#: (mistake, the op as written, the same op with its true derivative).
MISTAKES: tuple[tuple[str, Op, Op], ...] = (
    (
        "gelu, tanh-approximate derivative",
        Op("gelu", _gelu, _gelu_tanh, _both_signs((0.1, 0.5, 1.0, 2.0, 3.0, 5.0))),
        Op("gelu", _gelu, _gelu_exact, _both_signs((0.1, 0.5, 1.0, 2.0, 3.0, 5.0))),
    ),
    (
        "dropped 1e-6 term",
        Op(
            "exp(x) + 1e-6 x^2",
            lambda ns, x: ns.exp(x) + 1e-6 * x * x,
            lambda ns, x, out: ns.exp(x),
            _both_signs((0.5, 1.0, 3.0, 10.0)),
        ),
        Op(
            "exp(x) + 1e-6 x^2",
            lambda ns, x: ns.exp(x) + 1e-6 * x * x,
            lambda ns, x, out: ns.exp(x) + 2e-6 * x,
            _both_signs((0.5, 1.0, 3.0, 10.0)),
        ),
    ),
    (
        "asymptote 2/x from abs(x) >= 1 (wrong on part of the domain)",
        Op(
            "log(1 + x^2)",
            lambda ns, x: ns.log1p(x * x),
            _log_1_plus_square,
            _both_signs((1.5, 3.0, 10.0, 100.0, 1e3, 1e4)),
        ),
        Op(
            "log(1 + x^2)",
            lambda ns, x: ns.log1p(x * x),
            lambda ns, x, out: 2.0 * x / (1.0 + x * x),
            _both_signs((1.5, 3.0, 10.0, 100.0, 1e3, 1e4)),
        ),
    ),
    (
        "softplus' = 1 above 10",
        Op("softplus", _softplus, _softplus_one_above_10, (10.5, 12.0, 15.0, 20.0, 25.0)),
        Op(
            "softplus",
            _softplus,
            lambda ns, x, out: 1.0 / (1.0 + ns.exp(-x)),
            (10.5, 12.0, 15.0, 20.0, 25.0),
        ),
    ),
    (
        "log1p series 1 - x + x^2 for abs(x) < 0.1",
        Op(
            "log1p",
            lambda ns, x: ns.log1p(x),
            _log1p_series,
            _both_signs((0.003, 0.01, 0.03, 0.09)),
            lo=-1.0,
        ),
        Op(
            "log1p",
            lambda ns, x: ns.log1p(x),
            lambda ns, x, out: 1.0 / (1.0 + x),
            _both_signs((0.003, 0.01, 0.03, 0.09)),
            lo=-1.0,
        ),
    ),
    (
        "tanh' = 0 for abs(x) > 10",
        Op("tanh", lambda ns, x: ns.tanh(x), _tanh_zero_far_out, _both_signs((10.5, 12.0, 15.0))),
        Op(
            "tanh",
            lambda ns, x: ns.tanh(x),
            lambda ns, x, out: 1.0 - out * out,
            _both_signs((10.5, 12.0, 15.0)),
        ),
    ),
)


def _rounded(df: Callable[[Any, Any, Any], Any]) -> Callable[[Any, Any, Any], Any]:
    return lambda ns, x, out: ns.f32(df(ns, x, out))


def float32_ops() -> list[tuple[Op, Op]]:
    """Each smooth function with its derivative rounded to float32, and the true one."""
    out = []
    for fn in FUNCTIONS:
        rounded = Op(
            fn.name,
            fn.f,
            _rounded(fn.df),
            _points(fn),
            fn.lo,
            fn.hi,
            fn.poles,
        )
        out.append((rounded, injected(fn, 0.0)))
    return out


FLOAT32 = "float32 derivative (every smooth function)"
