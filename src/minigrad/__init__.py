"""minigrad: scalar reverse-mode autograd on Python floats, with derivative checks.

Example:
    >>> import minigrad as mg
    >>> x = mg.Value(0.5, label="x")
    >>> y = (2 * x).tanh()
    >>> y.backward()
    >>> round(x.grad, 6)
    0.839949
"""

from minigrad.compiler import compile  # noqa: A004 (minigrad.compile shadows the builtin here only)
from minigrad.engine import Value, apply, grad, toposort
from minigrad.gradcheck import (
    GradcheckError,
    GradcheckWarning,
    Report,
    check,
    check_grads,
    eps_curve,
    gradcheck,
    gradgradcheck,
)
from minigrad.ops import Rule, cos, erf, exp, log, sigmoid, sin, sqrt, tanh

__all__ = [
    "GradcheckError",
    "GradcheckWarning",
    "Report",
    "Rule",
    "Value",
    "apply",
    "check",
    "check_grads",
    "compile",
    "cos",
    "eps_curve",
    "erf",
    "exp",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "log",
    "sigmoid",
    "sin",
    "sqrt",
    "tanh",
    "toposort",
]

__version__ = "0.1.0"
