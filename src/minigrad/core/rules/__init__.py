"""The table of derivative rules: every derivative minigrad knows, side by side.

The rules live by family, each beside the functions that apply it to a float
or a Value: :mod:`~minigrad.core.rules.arithmetic`,
:mod:`~minigrad.core.rules.exp_log`, :mod:`~minigrad.core.rules.trig` and
:mod:`~minigrad.core.rules.special`. This package gathers them into
:data:`TABLE` and is what ``minigrad.ops`` shows users.

Each op is written once, as a :class:`~minigrad.core.rule.Rule`: its forward on
floats, one partial per argument (the calculus-book entry for d out / d arg,
``out`` being the op's own result) and its contract (domain, sample, kinks).
The functions beside the rules take a float or a Value and return the same
kind: on floats each is math's own function, on a Value it applies its rule,
so a partial written with them serves the float backward and the
``create_graph`` backward alike.

Example:
    >>> import math
    >>> from minigrad.core import rules
    >>> rules.TANH.partials[0](0.5, math.tanh(0.5))  # sech(x)**2 on floats
    0.7864477329659275
    >>> [rule.name for rule in rules.TABLE][:5]
    ['+', '-', '*', '/', '**']
"""

from minigrad.core import failures
from minigrad.core.rule import DEFAULT_MARGIN, Partial, Rule, own, value_of
from minigrad.core.rules.arithmetic import (
    ABS,
    ADD,
    COPYSIGN,
    DIV,
    MUL,
    NEG,
    POW,
    RELU,
    SUB,
    copysign,
    fabs,
    ldexp,
    pow_derivative,
    relu,
    sign,
    step,
)

# The forward kernels that compiled code calls by name (see minigrad.compiler).
from minigrad.core.rules.arithmetic import _pow as _pow
from minigrad.core.rules.arithmetic import _pow_x as _pow_x
from minigrad.core.rules.arithmetic import _pow_y as _pow_y
from minigrad.core.rules.exp_log import (
    CBRT,
    EXP,
    EXP2,
    EXPM1,
    LOG,
    LOG1P,
    LOG2,
    LOG10,
    SIGMOID,
    SOFTPLUS,
    SQRT,
    cbrt,
    exp,
    exp2,
    expm1,
    log,
    log1p,
    log2,
    log10,
    sech2,
    sigmoid,
    softplus,
    sqrt,
    tanh_derivative,
)
from minigrad.core.rules.exp_log import _sech2 as _sech2
from minigrad.core.rules.exp_log import _sigmoid as _sigmoid
from minigrad.core.rules.exp_log import _softplus as _softplus
from minigrad.core.rules.special import _INV_SQRT2 as _INV_SQRT2
from minigrad.core.rules.special import _INV_SQRT_2PI as _INV_SQRT_2PI
from minigrad.core.rules.special import _TWO_OVER_SQRT_PI as _TWO_OVER_SQRT_PI
from minigrad.core.rules.special import (
    DIGAMMA,
    ERF,
    ERFC,
    GAMMA,
    GELU,
    LGAMMA,
    digamma,
    erf,
    erfc,
    gamma,
    gaussian_derivative,
    gelu,
    lgamma,
    polygamma,
)
from minigrad.core.rules.special import _gauss as _gauss
from minigrad.core.rules.special import _half_gauss as _half_gauss
from minigrad.core.rules.trig import (
    ACOS,
    ACOSH,
    ASIN,
    ASINH,
    ATAN,
    ATAN2,
    ATANH,
    COS,
    COSH,
    HYPOT,
    SIN,
    SINH,
    TAN,
    TANH,
    acos,
    acosh,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    cos,
    cosh,
    degrees,
    dist,
    hypot,
    one_minus_square,
    polar,
    radians,
    sin,
    sinh,
    tan,
    tanh,
)
from minigrad.core.rules.trig import ONE_MINUS_SQUARE as _ONE_MINUS_SQUARE

__all__ = [
    "ABS",
    "ACOS",
    "ACOSH",
    "ADD",
    "ASIN",
    "ASINH",
    "ATAN",
    "ATAN2",
    "ATANH",
    "CBRT",
    "COPYSIGN",
    "COS",
    "COSH",
    "DEFAULT_MARGIN",
    "DIGAMMA",
    "DIV",
    "ERF",
    "ERFC",
    "EXP",
    "EXP2",
    "EXPM1",
    "GAMMA",
    "GELU",
    "HYPOT",
    "LGAMMA",
    "LOG",
    "LOG1P",
    "LOG2",
    "LOG10",
    "MUL",
    "NEG",
    "POW",
    "RELU",
    "SIGMOID",
    "SIN",
    "SINH",
    "SOFTPLUS",
    "SQRT",
    "SUB",
    "TABLE",
    "TAN",
    "TANH",
    "Partial",
    "Rule",
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "cbrt",
    "copysign",
    "cos",
    "cosh",
    "degrees",
    "digamma",
    "dist",
    "erf",
    "erfc",
    "exp",
    "exp2",
    "expm1",
    "fabs",
    "gamma",
    "gaussian_derivative",
    "gelu",
    "hypot",
    "ldexp",
    "lgamma",
    "log",
    "log1p",
    "log2",
    "log10",
    "one_minus_square",
    "polar",
    "polygamma",
    "pow_derivative",
    "radians",
    "relu",
    "sech2",
    "sigmoid",
    "sign",
    "sin",
    "sinh",
    "softplus",
    "sqrt",
    "step",
    "tan",
    "tanh",
    "tanh_derivative",
    "value_of",
]

#: Every built-in rule, in the order the docs and ``minigrad check`` list them.
TABLE: tuple[Rule, ...] = (
    ADD,
    SUB,
    MUL,
    DIV,
    POW,
    NEG,
    ABS,
    EXP,
    LOG,
    LOG1P,
    SQRT,
    SIN,
    COS,
    TANH,
    SIGMOID,
    RELU,
    SOFTPLUS,
    ERF,
    GELU,
    EXPM1,
    EXP2,
    LOG2,
    LOG10,
    TAN,
    ASIN,
    ACOS,
    ATAN,
    ATAN2,
    HYPOT,
    SINH,
    COSH,
    ASINH,
    ACOSH,
    ATANH,
    CBRT,
    ERFC,
    COPYSIGN,
    LGAMMA,
    GAMMA,
    DIGAMMA,
)
for _rule in (*TABLE, _ONE_MINUS_SQUARE):
    own(_rule)
del _rule


# Errors that meet math.cos in a partial suggest minigrad's own (failures.py
# sits below this layer and knows the names only through this registration).
failures.MATH_COUNTERPARTS.update(n for n in __all__ if n.islower() and n != "value_of")
