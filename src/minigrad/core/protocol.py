"""The number protocol: Value's operators, methods and comparisons, attached here.

The engine's node (:mod:`minigrad.core.value`) knows no op; this module, which
knows the rule table, gives it its operators and methods, each its rule,
applied: a binary dunder from :func:`_operator`, a method from
:func:`_method`. They inline the node layout of :func:`~minigrad.core.value._node`
because they run once per op. The comparisons work on the data (``max``,
``min`` and ``sorted`` return the Values themselves).

Example:
    >>> from minigrad import Value
    >>> (Value(2.0) * 3 + 1).data, Value(0.0).exp().op, Value(1.0) < 2
    (7.0, 'exp', True)
"""

from __future__ import annotations

import operator
from collections.abc import Callable

from minigrad.core import rules
from minigrad.core._validate import as_float
from minigrad.core.failures import _domain_error
from minigrad.core.rule import BUILT_IN, Rule
from minigrad.core.value import Value, _new


def _operator(rule: Rule, *, reflected: bool = False) -> Callable[[Value, Value | float], Value]:
    """A binary dunder that applies ``rule`` (``other <op> self`` when reflected)."""
    forward = rule.forward

    def op(self: Value, other: Value | float) -> Value:
        if type(other) is Value:
            y = other._data
        elif type(other) is float:
            y = other
        elif isinstance(other, int | float) and not isinstance(other, bool):
            # An int beyond the floats gets an OverflowError naming the op.
            y = other = as_float(other, f"{rule.name}: the operand")
        elif isinstance(other, Value):
            # A subclass of Value: an operand like any other (the result is a
            # plain Value, as for every op).
            y = other._data
        else:
            # Python then tries the other operand's reflected method.
            return NotImplemented  # type: ignore[no-any-return]
        x = self._data
        a: Value | float = self
        if reflected:
            x, y, a, other = y, x, other, self
        try:
            out = forward(x, y)
        except (ArithmeticError, ValueError) as exc:
            raise _domain_error(rule, (x, y), exc) from None
        if out - out != 0.0:  # not finite
            raise _domain_error(rule, (x, y), None, out)
        # _node(rule, out, (a, other)), inlined: this runs once per op.
        node: Value = _new(Value)
        node._data = out
        node._grad = 0.0
        node.label = ""
        node._rule = rule
        node._a = a
        node._b = other
        node._mark = None
        return node

    op.__name__ = op.__qualname__ = f"{'r' if reflected else ''}{rule.name}"
    return op


def _method(rule: Rule, doc: str) -> Callable[[Value], Value]:
    """A one-argument method (``x.exp()``, ``-x``) that applies ``rule``."""
    forward = rule.forward

    def method(self: Value) -> Value:
        x = self._data
        try:
            out = forward(x)
        except (ArithmeticError, ValueError) as exc:
            raise _domain_error(rule, (x,), exc) from None
        if out - out != 0.0:  # not finite
            raise _domain_error(rule, (x,), None, out)
        # _node(rule, out, (self,)), inlined: this runs once per op.
        node: Value = _new(Value)
        node._data = out
        node._grad = 0.0
        node.label = ""
        node._rule = rule
        node._a = self
        node._b = None
        node._mark = None
        return node

    method.__name__ = method.__qualname__ = rule.name
    method.__doc__ = doc
    return method


_COMPARISONS: dict[str, tuple[str, Callable[[float, float], bool]]] = {
    "<": ("__lt__", operator.lt),
    "<=": ("__le__", operator.le),
    ">": ("__gt__", operator.gt),
    ">=": ("__ge__", operator.ge),
}


def _comparison(symbol: str) -> Callable[[Value, Value | float], bool]:
    """``self <symbol> other`` on the data; ``other`` a Value, an int or a float.

    The operands are those arithmetic takes (a bool is not a number here);
    anything else gets NotImplemented, so Python tries the other side and
    then raises its TypeError. An int is compared as Python compares an int
    with a float: exactly, never converted (``10**400`` is larger than any
    Value, not an OverflowError).
    """
    name, test = _COMPARISONS[symbol]

    # Through the .data property, not the slot: a comparison decides control
    # flow, which minigrad.compile's trace must refuse to freeze.
    def compare(self: Value, other: Value | float) -> bool:
        if type(other) is Value:
            return test(self.data, other.data)
        if isinstance(other, int | float) and not isinstance(other, bool):
            return test(self.data, other)
        if isinstance(other, Value):  # a subclass of Value
            return test(self.data, other.data)
        return NotImplemented  # type: ignore[no-any-return]

    compare.__name__ = compare.__qualname__ = name
    compare.__doc__ = f"``self.data {symbol} other``, other a Value or a real number."
    return compare


# Operators and methods: each is its rule, applied. setattr, not assignment:
# the class body declares them for mypy (see value.py).

#: The binary operators by dunder stem (``add`` gives ``__add__`` and ``__radd__``).
_BINARY: tuple[tuple[str, Rule], ...] = (
    ("add", rules.ADD),
    ("sub", rules.SUB),
    ("mul", rules.MUL),
    ("truediv", rules.DIV),
    ("pow", rules.POW),
)
#: The one-argument methods: name, rule and docstring.
_METHODS: tuple[tuple[str, Rule, str], ...] = (
    ("__neg__", rules.NEG, "-self."),
    ("__abs__", rules.ABS, "abs(self); its slope at 0 is taken as 0, as in PyTorch."),
    ("exp", rules.EXP, "e ** self."),
    ("log", rules.LOG, "Natural logarithm; ValueError unless self > 0."),
    ("log1p", rules.LOG1P, "log(1 + self), accurate near 0; ValueError unless self > -1."),
    ("sqrt", rules.SQRT, "Square root; ValueError for a negative number."),
    ("sin", rules.SIN, "Sine."),
    ("cos", rules.COS, "Cosine."),
    ("tanh", rules.TANH, "Hyperbolic tangent."),
    ("sigmoid", rules.SIGMOID, "Logistic sigmoid 1 / (1 + e ** -self)."),
    ("relu", rules.RELU, "max(self, 0); its slope at 0 is taken as 0, as in PyTorch."),
    ("softplus", rules.SOFTPLUS, "log(1 + e ** self), computed without overflow."),
    ("erf", rules.ERF, "The error function."),
    ("gelu", rules.GELU, "x * Phi(x) with the exact normal CDF (not the tanh approximation)."),
    ("expm1", rules.EXPM1, "e ** self - 1, accurate near 0."),
    ("exp2", rules.EXP2, "2 ** self."),
    ("log2", rules.LOG2, "Base-2 logarithm; ValueError unless self > 0."),
    ("log10", rules.LOG10, "Base-10 logarithm; ValueError unless self > 0."),
    ("tan", rules.TAN, "Tangent."),
    ("asin", rules.ASIN, "Arcsine, in [-pi/2, pi/2]; ValueError unless -1 <= self <= 1."),
    ("acos", rules.ACOS, "Arccosine, in [0, pi]; ValueError unless -1 <= self <= 1."),
    ("atan", rules.ATAN, "Arctangent, in (-pi/2, pi/2)."),
    ("sinh", rules.SINH, "Hyperbolic sine."),
    ("cosh", rules.COSH, "Hyperbolic cosine."),
    ("asinh", rules.ASINH, "Inverse hyperbolic sine."),
    ("acosh", rules.ACOSH, "Inverse hyperbolic cosine; ValueError unless self >= 1."),
    ("atanh", rules.ATANH, "Inverse hyperbolic tangent; ValueError unless -1 < self < 1."),
    ("cbrt", rules.CBRT, "Real cube root (negative for a negative self)."),
    ("erfc", rules.ERFC, "Complementary error function 1 - erf(self), accurate for large self."),
    ("lgamma", rules.LGAMMA, "log |Gamma(self)|; ValueError at 0 and the negative integers."),
    ("gamma", rules.GAMMA, "The Gamma function; ValueError at 0 and the negative integers."),
    ("digamma", rules.DIGAMMA, "d/dx log |Gamma(x)| at self; ValueError at 0, -1, -2, ..."),
)

for _stem, _rule in _BINARY:
    setattr(Value, f"__{_stem}__", _operator(_rule))
    setattr(Value, f"__r{_stem}__", _operator(_rule, reflected=True))
for _name, _rule, _doc in _METHODS:
    BUILT_IN[_name] = _method(_rule, _doc)
    setattr(Value, _name, BUILT_IN[_name])
for _symbol, (_dunder, _) in _COMPARISONS.items():
    setattr(Value, _dunder, _comparison(_symbol))
del _stem, _name, _rule, _doc, _symbol, _dunder
