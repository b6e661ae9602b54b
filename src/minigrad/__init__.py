"""minigrad: scalar reverse-mode autograd on Python floats, with derivative checks.

Example:
    >>> import minigrad as mg
    >>> x = mg.Value(0.5, label="x")
    >>> y = (2 * x).tanh()
    >>> y.backward()
    >>> round(x.grad, 6)
    0.839949
"""

from __future__ import annotations

from minigrad import ops as ops  # the public name of the rule table: minigrad.ops.TABLE
from minigrad.checking.gradcheck import (
    GradcheckError,
    GradcheckWarning,
    Report,
    check,
    check_grads,
    gradcheck,
    gradgradcheck,
)
from minigrad.core import Rule, Value, apply, grad, toposort
from minigrad.core.closure import ClosureOpError
from minigrad.core.functional import hessian, hvp, jacobian, jvp, vjp
from minigrad.core.rules import (
    acos,
    acosh,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    cbrt,
    copysign,
    cos,
    cosh,
    degrees,
    digamma,
    dist,
    erf,
    erfc,
    exp,
    exp2,
    expm1,
    fabs,
    gamma,
    gelu,
    hypot,
    ldexp,
    lgamma,
    log,
    log1p,
    log2,
    log10,
    polygamma,
    radians,
    relu,
    sigmoid,
    sin,
    sinh,
    softplus,
    sqrt,
    tan,
    tanh,
)

# typing costs ~15 ms to import and is needed only by mypy.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from minigrad.compiler import compile as compile  # noqa: A004 (loaded on first use, below)
    from minigrad.teach.epscurve import eps_curve as eps_curve
    from minigrad.teach.stepper import step_backward as step_backward
    from minigrad.teach.viz import Graph as _Graph
    from minigrad.teach.viz import draw_dot as draw_dot

__all__ = [
    "ClosureOpError",
    "GradcheckError",
    "GradcheckWarning",
    "Report",
    "Rule",
    "Value",
    "acos",
    "acosh",
    "apply",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "cbrt",
    "check",
    "check_grads",
    "compile",
    "copysign",
    "cos",
    "cosh",
    "degrees",
    "digamma",
    "dist",
    "draw_dot",
    "eps_curve",
    "erf",
    "erfc",
    "exp",
    "exp2",
    "expm1",
    "fabs",
    "gamma",
    "gelu",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "hessian",
    "hvp",
    "hypot",
    "jacobian",
    "jvp",
    "ldexp",
    "lgamma",
    "log",
    "log1p",
    "log2",
    "log10",
    "polygamma",
    "radians",
    "relu",
    "sigmoid",
    "sin",
    "sinh",
    "softplus",
    "sqrt",
    "step_backward",
    "tan",
    "tanh",
    "toposort",
    "vjp",
]

# ``minigrad.abs(x)``, as users coming from numpy and the issue ask: the
# builtin's name on purpose, but out of __all__, so ``from minigrad import *``
# never shadows the builtin ``abs`` (whose int results stay ints).
abs = fabs  # noqa: A001

__version__ = "0.1.0"


def _graph(self: Value, *, max_nodes: int = 100) -> _Graph:
    """A picture of this node's graph: :func:`minigrad.teach.viz.graph` of it.

    Installed here, on top, so that the engine never imports the teaching
    layer; the picture code loads on the first call.

    Example:
        >>> "digraph" in (Value(2.0) * 3).graph().dot
        True
    """
    from minigrad.teach.viz import graph

    return graph(self, max_nodes=max_nodes)


Value.graph = _graph  # type: ignore[method-assign]


def __getattr__(name: str) -> object:
    """``minigrad.compile``, ``draw_dot``, ``eps_curve`` and ``step_backward``, loaded on first use.

    The compiler (tracing and code generation, with ``typing`` and ``re``) is
    about a third of minigrad's import time, and most sessions never compile:
    ``minigrad.compile`` and ``from minigrad import compile`` import it then.
    ``draw_dot`` (micrograd's name for :func:`minigrad.teach.viz.draw_dot`)
    and ``eps_curve`` (:func:`minigrad.teach.epscurve.eps_curve`) live in the
    teaching layer, which the engine never imports, and so does
    ``step_backward`` (:func:`minigrad.teach.stepper.step_backward`).
    """
    if name == "compile":
        from minigrad.compiler import compile  # noqa: A004 (minigrad.compile shadows the builtin)

        globals()["compile"] = compile
        return compile
    if name == "eps_curve":
        from minigrad.teach.epscurve import eps_curve

        globals()["eps_curve"] = eps_curve
        return eps_curve
    if name == "draw_dot":
        from minigrad.teach.viz import draw_dot

        globals()["draw_dot"] = draw_dot
        return draw_dot
    if name == "step_backward":
        from minigrad.teach.stepper import step_backward

        globals()["step_backward"] = step_backward
        return step_backward
    raise AttributeError(f"module 'minigrad' has no attribute {name!r}")
