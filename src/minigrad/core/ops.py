"""The table of derivative rules: every derivative minigrad knows, side by side.

A :class:`Rule` is an op written once: its ``forward`` on floats and one
partial derivative per argument, ``partials[i](*args, out) = d out / d args[i]``.
The partials are written with arithmetic operators and the functions of this
module (:func:`exp`, :func:`log`, ...), which take a float or a
:class:`~minigrad.Value` and return the same kind. The engine calls a partial
with floats for the fast first-order ``backward`` and with Values when
``grad(..., create_graph=True)`` builds a differentiable gradient, so the same
line serves every order of derivative. A user's custom op is a ``Rule`` too and
goes through the same door.

A rule also carries the rest of its op's contract, so no other module keeps a
copy: where the op is defined (``domain``), where tests and checkers draw
points (``sample`` and ``avoid``, read through :meth:`Rule.intervals`), how it
is written in Python (``spelling``), whether it is ``commutative`` and what
its arguments are called (``arg_names``).

Example:
    >>> from minigrad import Value
    >>> from minigrad.core import ops
    >>> ops.TANH.partials[0](0.5, math.tanh(0.5))  # 1 - tanh(x)**2 on floats
    0.7864477329659274
    >>> [rule.name for rule in ops.TABLE][:5]
    ['+', '-', '*', '/', '**']
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Callable

from minigrad.core._validate import signature_problem

# typing costs ~15 ms to import and is needed only by mypy (see engine.py).
TYPE_CHECKING = False
if not TYPE_CHECKING:
    # typing.overload at run time: the last definition, the implementation, is
    # what runs. Bound before the import below so that linters and mypy see
    # typing's.
    def overload(func):  # type: ignore[no-untyped-def]
        return func


if TYPE_CHECKING:
    import random
    from collections.abc import Sequence
    from typing import TypeVar, overload

    from minigrad.core.engine import Value

    #: A float or a Value: what a partial derivative receives and returns.
    S = TypeVar("S", float, "Value")


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
    "gelu",
    "hypot",
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
    "sign",
    "sin",
    "sinh",
    "softplus",
    "sqrt",
    "step",
    "tan",
    "tanh",
    "value_of",
]

#: d out / d arg: a function of (*args, out), or a constant float.
Partial = Callable[..., "float | Value"] | float

#: How far drawn points stay from the ends of a sample interval and from avoid points.
DEFAULT_MARGIN = 1e-2

_INF = math.inf
#: Where a default sample interval stops on an infinite side: 2 from the finite
#: end, or -2 and 2 on the whole line. Wide enough to see an op's shape, narrow
#: enough that its values stay ordinary floats after a few ops are composed.
_REACH = 2.0
#: Default argument names: the symbols ``Rule.math`` is written in.
_LETTERS = ("x", "y", "z", "u", "v", "w")
#: The binary operators a Value implements, as a spelling writes them.
_OPERATORS: dict[str, Callable[..., Value]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "**": operator.pow,
}


class Rule:
    """A scalar op's whole contract: forward, partials, where it lives, how it is written.

    Args:
        name: The op's name, shown as ``Value.op`` and in every report.
        forward: ``forward(*xs) -> float`` on plain floats.
        partials: One entry per argument: ``partials[i](*xs, out)`` is
            d out / d xs[i], written with operators and the functions of
            :mod:`minigrad.ops` so it works on floats and on Values alike;
            a constant slope may be given as a plain float.
        math: The op as a SymPy expression in ``x`` (and ``y``, ``z``, ...),
            used by the exact-derivative tests and the docs. Optional.
        domain: Per argument, the open interval ``(lo, hi)`` where the op is
            defined and, apart from its ``avoid`` points, smooth; an end may
            be infinite. Default: the whole real line, ``(-inf, inf)``.
            Declare it truthfully: a checker may evaluate the op anywhere
            inside it.
        sample: Per argument, a finite interval inside ``domain`` where
            tests, :mod:`minigrad.testing` and ``minigrad check`` draw points
            (stored as ``sample_box``). Default: the domain, with an infinite
            end cut 2 away from the other end, or ``(-2, 2)`` when both ends
            are infinite; so a rule that declares neither is drawn on
            ``(-2, 2)``, and ``domain=((0, inf),)`` is drawn on ``(0, 2)``.
        avoid: Points (kinks, poles) that points are drawn at least a margin
            away from, in every argument.
        requires: The domain in words, used in error messages
            (e.g. ``"input must be > 0"``).
        spelling: How the op is written in Python, with the argument names:
            an operator (``"x * y"``, ``"-x"``), ``"abs(x)"``, a method
            (``"x.exp()"``) or a call of the rule itself (``"cube(x)"``).
            Default: a call, ``"NAME(x, y)"``. :meth:`as_written` applies it.
        commutative: Whether swapping the arguments leaves the result
            unchanged (``+`` and ``*``); pictures then leave the argument
            names off their edges. Default False.
        arg_names: One identifier per argument, used in error messages,
            spellings and pictures. Default: ``x, y, z, u, v, w`` (the
            symbols of ``math``), or ``x0, x1, ...`` beyond six arguments.

    Calling a rule applies it: ``rule(x, y)`` returns a new Value, exactly
    as the built-in operators do.

    Example:
        >>> from minigrad import Rule, Value
        >>> cube = Rule("cube", lambda x: x**3, (lambda x, out: 3 * x**2,))
        >>> y = cube(Value(2.0))
        >>> y.op, y.data
        ('cube', 8.0)
        >>> cube.domain, cube.sample_box, cube.spelling
        (((-inf, inf),), ((-2.0, 2.0),), 'cube(x)')
    """

    __slots__ = (
        "_written",
        "arg_names",
        "arity",
        "avoid",
        "commutative",
        "domain",
        "forward",
        "math",
        "name",
        "partials",
        "requires",
        "sample_box",
        "spelling",
    )

    def __init__(
        self,
        name: str,
        forward: Callable[..., float],
        partials: tuple[Partial, ...],
        *,
        math: str = "",
        domain: tuple[tuple[float, float], ...] | None = None,
        sample: tuple[tuple[float, float], ...] | None = None,
        avoid: tuple[float, ...] = (),
        requires: str = "",
        spelling: str | None = None,
        commutative: bool = False,
        arg_names: tuple[str, ...] | None = None,
    ) -> None:
        if not isinstance(name, str) or not name:
            raise TypeError(f"Rule: name must be a non-empty str, got {name!r}")
        if not callable(forward):
            raise TypeError(f"Rule {name!r}: forward must be callable, got {forward!r}")
        if not isinstance(partials, tuple) or not partials:
            raise TypeError(
                f"Rule {name!r}: partials must be a non-empty tuple of functions, "
                f"one per argument, got {partials!r}"
            )
        partials = tuple(float(d) if isinstance(d, int) else d for d in partials)
        for i, partial in enumerate(partials):
            if not (callable(partial) or isinstance(partial, float)):
                raise TypeError(
                    f"Rule {name!r}: partials[{i}] must be a function or a constant float, "
                    f"got {partial!r}"
                )
        arity = len(partials)
        # The engine calls forward(*args) and partials[i](*args, out): a wrong
        # count is refused here, naming the rule, not deep inside backward.
        names = _arg_names(name, arity, arg_names)
        problem = signature_problem(forward, arity)
        if problem:
            raise TypeError(
                f"Rule {name!r}: forward {problem} but must take {arity}, one per partial: "
                f"forward({', '.join(names)})"
            )
        for i, partial in enumerate(partials):
            problem = "" if isinstance(partial, float) else signature_problem(partial, arity + 1)
            if problem:
                raise TypeError(
                    f"Rule {name!r}: partials[{i}] {problem} but must take {arity + 1}: the op's "
                    f"arguments then its result, partials[{i}]({', '.join(names)}, out) "
                    f"= d out / d {names[i]}"
                )
        if domain is None:
            domain = ((-_INF, _INF),) * arity
        if len(domain) != arity or any(not lo < hi for lo, hi in domain):
            raise ValueError(
                f"Rule {name!r}: domain must give one interval (lo, hi) with lo < hi "
                f"per argument ({arity}), got {domain!r}"
            )
        domain = tuple((float(lo), float(hi)) for lo, hi in domain)
        sample_box = _sample_box(name, domain, sample)
        avoid = _avoid(name, avoid)
        if not isinstance(commutative, bool) or (commutative and arity < 2):
            raise ValueError(
                f"Rule {name!r}: commutative must be a bool, and True only for two or more "
                f"arguments ({arity}), got {commutative!r}"
            )
        arg_names = names
        written: Callable[..., Value] | None = None
        if spelling is None:
            spelling = f"{name}({', '.join(arg_names)})"
        else:
            written = _parse_spelling(name, spelling, arg_names)
        self.name = name
        self.forward = forward
        self.partials = partials
        self.arity = arity
        self.math = math
        self.domain = domain
        self.sample_box = sample_box
        self.avoid = avoid
        self.requires = requires
        self.spelling = spelling
        self.commutative = commutative
        self.arg_names = arg_names
        self._written = written

    def intervals(
        self, index: int, *, margin: float = DEFAULT_MARGIN
    ) -> tuple[tuple[float, float], ...]:
        """The closed intervals where argument ``index`` may be drawn.

        That is the argument's sample interval (``sample_box[index]``), shrunk
        by ``margin`` at both ends, minus a ``margin``-wide neighbourhood of
        every ``avoid`` point. Every float in the result is at least
        ``margin`` away from the interval ends and from every avoid point
        (ends are nudged inward by one ulp where rounding would put them
        closer). This is the one place that decides where a rule may be
        evaluated: :meth:`sample`, :mod:`minigrad.testing` and
        ``minigrad check`` all draw from it.

        Args:
            index: Which argument (0-based).
            margin: The distance to keep; must be >= 0.

        Returns:
            Disjoint ``(lo, hi)`` pairs with ``lo <= hi``, in increasing order.

        Raises:
            IndexError: ``index`` is not an argument of the rule.
            ValueError: ``margin`` is negative or leaves nothing to draw from.

        Example:
            >>> DIV.intervals(1)
            ((-2.99, -0.01), (0.01, 2.99))
            >>> EXP.intervals(0, margin=0.5)
            ((-3.5, 3.5),)
        """
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < self.arity:
            raise IndexError(f"Rule {self.name!r}: has no argument {index!r}")
        if not margin >= 0.0:
            raise ValueError(f"Rule {self.name!r}: margin must be >= 0, got {margin!r}")
        lo, hi = self.sample_box[index]
        # Cut points: the interval's ends and every avoid point inside it.
        cuts = [lo, *sorted(a for a in set(self.avoid) if lo < a < hi), hi]
        pieces: list[tuple[float, float]] = []
        for left, right in itertools.pairwise(cuts):
            a = _away(left, margin, _INF)
            b = _away(right, margin, -_INF)
            if a <= b:
                pieces.append((a, b))
        if not pieces:
            raise ValueError(
                f"Rule {self.name!r}: margin {margin!r} leaves no point of argument {index} "
                f"(sample {self.sample_box[index]!r}, avoid {self.avoid!r})"
            )
        return tuple(pieces)

    def sample(self, rng: random.Random, *, margin: float = DEFAULT_MARGIN) -> tuple[float, ...]:
        """A random point of :meth:`intervals`: uniform over each argument's pieces.

        Args:
            rng: The random source (``minigrad check`` passes a seeded one).
            margin: The distance to keep, as for :meth:`intervals`.

        Raises:
            ValueError: ``margin`` leaves nothing to draw from.

        Example:
            >>> import random
            >>> x, y = DIV.sample(random.Random(0))
            >>> abs(y) >= 1e-2
            True
        """
        point = []
        for i in range(self.arity):
            pieces = self.intervals(i, margin=margin)
            lengths = [hi - lo for lo, hi in pieces]
            if sum(lengths) > 0.0:
                lo, hi = rng.choices(pieces, weights=lengths)[0]
            else:  # every piece is a single float
                lo, hi = rng.choice(pieces)
            # lo + (hi - lo) * u can round one ulp past hi.
            point.append(min(max(rng.uniform(lo, hi), lo), hi))
        return tuple(point)

    def as_written(self, *args: Value | float) -> Value:
        """Apply the op the way its ``spelling`` writes it.

        ``x * y`` calls Python's ``*`` (so ``Value.__mul__`` or, for a float
        on the left, ``__rmul__``), ``x.exp()`` the method, ``abs(x)`` the
        builtin, and a call ``name(x)`` the rule itself. Tests use it to
        exercise the operators and methods users call, not only :func:`apply`.

        Example:
            >>> from minigrad import Value
            >>> y = POW.as_written(2.0, Value(3.0))  # 2.0 ** Value(3.0)
            >>> POW.spelling, y.op, y.data
            ('x ** y', '**', 8.0)
        """
        if self._written is None:
            return self(*args)
        return self._written(*args)

    def __call__(self, *args: Value | float) -> Value:
        """Apply the op to Values (or plain numbers, taken as constants)."""
        from minigrad.core.engine import apply

        return apply(self, *args)

    def __repr__(self) -> str:
        return f"Rule({self.name!r}, arity={self.arity})"


# Reading a Rule's declarations.


def _sample_box(
    name: str,
    domain: tuple[tuple[float, float], ...],
    sample: tuple[tuple[float, float], ...] | None,
) -> tuple[tuple[float, float], ...]:
    """The sample intervals: as given (checked against the domain), or the default."""
    if sample is None:
        return tuple(_default_sample(lo, hi) for lo, hi in domain)
    if len(sample) != len(domain) or any(
        not (-_INF < lo < hi < _INF and d_lo <= lo and hi <= d_hi)
        for (lo, hi), (d_lo, d_hi) in zip(sample, domain, strict=False)
    ):
        raise ValueError(
            f"Rule {name!r}: sample must give one finite interval (lo, hi) with lo < hi "
            f"inside the domain per argument ({len(domain)}), got {sample!r} "
            f"for domain {domain!r}"
        )
    return tuple((float(lo), float(hi)) for lo, hi in sample)


def _default_sample(lo: float, hi: float) -> tuple[float, float]:
    if lo > -_INF and hi < _INF:
        return (lo, hi)
    if lo > -_INF:
        return (lo, lo + _REACH)
    if hi < _INF:
        return (hi - _REACH, hi)
    return (-_REACH, _REACH)


def _avoid(name: str, avoid: tuple[float, ...]) -> tuple[float, ...]:
    if not isinstance(avoid, tuple) or any(
        isinstance(a, bool) or not isinstance(a, int | float) or not -_INF < a < _INF for a in avoid
    ):
        raise ValueError(f"Rule {name!r}: avoid must be a tuple of finite numbers, got {avoid!r}")
    return tuple(float(a) for a in avoid)


def _arg_names(name: str, arity: int, arg_names: tuple[str, ...] | None) -> tuple[str, ...]:
    if arg_names is None:
        if arity <= len(_LETTERS):
            return _LETTERS[:arity]
        return tuple(f"x{i}" for i in range(arity))
    if (
        not isinstance(arg_names, tuple)
        or len(arg_names) != arity
        or not all(isinstance(n, str) and n.isidentifier() for n in arg_names)
        or len(set(arg_names)) != arity
    ):
        raise ValueError(
            f"Rule {name!r}: arg_names must be {arity} distinct identifier(s), got {arg_names!r}"
        )
    return arg_names


def _parse_spelling(
    name: str, spelling: str, names: tuple[str, ...]
) -> Callable[..., Value] | None:
    """What applies a spelling: an operator, a builtin, a method; None to call the rule."""
    if not isinstance(spelling, str):
        raise TypeError(f"Rule {name!r}: spelling must be a str, got {spelling!r}")
    if len(names) == 2:
        x, y = names
        for symbol, binary in _OPERATORS.items():
            if spelling == f"{x} {symbol} {y}":
                return binary
    if len(names) == 1:
        (x,) = names
        if spelling == f"-{x}":
            return operator.neg
        if spelling == f"abs({x})":
            return abs
        method = spelling.removeprefix(f"{x}.").removesuffix("()")
        if spelling == f"{x}.{method}()" and method.isidentifier():
            return operator.methodcaller(method)
    callee = spelling.removesuffix(f"({', '.join(names)})")
    if callee != spelling and all(part.isidentifier() for part in callee.split(".")):
        return None
    shown = ", ".join(names)
    raise ValueError(
        f"Rule {name!r}: spelling must be an operator ('x + y', '-x'), 'abs(x)', a method "
        f"('x.exp()') or a call ('{name}({shown})'), written with the argument names "
        f"({shown}), got {spelling!r}"
    )


def _away(x: float, margin: float, toward: float) -> float:
    """The float nearest ``x + margin`` (toward ``toward``) at least ``margin`` from ``x``."""
    sign = 1.0 if toward > x else -1.0
    y = x + sign * margin
    while abs(y - x) < margin:
        y = math.nextafter(y, toward)
    return y


# Functions that take a float or a Value. Partials are written with these so a
# single line serves the float backward and the create_graph backward.


def value_of(x: float | Value) -> float:
    """The float inside ``x`` (``x`` itself when it is a number)."""
    return x if isinstance(x, float | int) else x.data


def exp(x: S) -> S:
    """e ** x for a float or a Value."""
    if isinstance(x, float | int):
        try:
            return math.exp(x)
        except OverflowError as exc:
            raise _float_error(EXP, (x,), exc) from None
    return x.exp()


@overload
def log(x: float, base: float | None = None) -> float: ...
@overload
def log(x: Value, base: float | Value | None = None) -> Value: ...
@overload
def log(x: float, base: Value) -> Value: ...
def log(x: float | Value, base: float | Value | None = None) -> float | Value:
    """Natural logarithm of a float or a Value; with ``base``, log(x) / log(base).

    Example:
        >>> log(math.e), log(8.0, 2.0)
        (1.0, 3.0)
    """
    if base is None:
        if isinstance(x, float | int):
            try:
                return math.log(x)
            except ValueError as exc:
                raise _float_error(LOG, (x,), exc) from None
        return x.log()
    b = value_of(base)
    if not (b > 0.0 and b != 1.0):
        raise ValueError(f"log: base must be > 0 and != 1, got {b!r}")
    if isinstance(x, float | int) and isinstance(base, float | int):
        try:
            return math.log(x, base)
        except ValueError as exc:
            raise _float_error(LOG, (x,), exc) from None
    return log(x) / log(base)


def sin(x: S) -> S:
    """Sine of a float or a Value."""
    return math.sin(x) if isinstance(x, float | int) else x.sin()


def cos(x: S) -> S:
    """Cosine of a float or a Value."""
    return math.cos(x) if isinstance(x, float | int) else x.cos()


def tanh(x: S) -> S:
    """Hyperbolic tangent of a float or a Value."""
    return math.tanh(x) if isinstance(x, float | int) else x.tanh()


def sqrt(x: S) -> S:
    """Square root of a float or a Value."""
    if isinstance(x, float | int):
        try:
            return math.sqrt(x)
        except ValueError as exc:
            raise _float_error(SQRT, (x,), exc) from None
    return x.sqrt()


def sigmoid(x: S) -> S:
    """Logistic sigmoid 1 / (1 + e**-x) of a float or a Value."""
    return _sigmoid(x) if isinstance(x, float | int) else x.sigmoid()


def erf(x: S) -> S:
    """Error function of a float or a Value."""
    return math.erf(x) if isinstance(x, float | int) else x.erf()


def step(x: float | Value) -> float:
    """1.0 where x > 0, else 0.0: the slope of relu (0 at the kink, as PyTorch)."""
    return 1.0 if value_of(x) > 0.0 else 0.0


def sign(x: float | Value) -> float:
    """-1.0, 0.0 or 1.0: the slope of abs (0 at the kink, as PyTorch)."""
    v = value_of(x)
    return 1.0 if v > 0.0 else -1.0 if v < 0.0 else 0.0


# The rest of Python's math module, on a float or a Value. On floats each is
# math's own function (same result, bit for bit); a domain error names the op
# and the value, as it does on Values. On a Value each applies its rule.


def _unary(rule: Rule, x: S) -> S:
    """``rule`` on a float (its forward, errors named) or on a Value (a new node)."""
    if isinstance(x, float | int):
        try:
            return rule.forward(float(x))  # an int gives a float, as in math
        except (ArithmeticError, ValueError) as exc:
            raise _float_error(rule, (x,), exc) from None
    return rule(x)


def _binary(rule: Rule, x: float | Value, y: float | Value) -> float | Value:
    """``rule`` on two floats (a float), or on Values and floats (a new node)."""
    if isinstance(x, float | int) and isinstance(y, float | int):
        try:
            return rule.forward(float(x), float(y))
        except (ArithmeticError, ValueError) as exc:
            raise _float_error(rule, (x, y), exc) from None
    return rule(x, y)


def _float_error(rule: Rule, xs: tuple[float, ...], exc: BaseException) -> Exception:
    # The engine words every forward error; floats get the same words.
    from minigrad.core.engine import _domain_error

    return _domain_error(rule, xs, exc)


def log1p(x: S) -> S:
    """log(1 + x), accurate near 0, of a float or a Value.

    Example:
        >>> log1p(1e-10)
        9.9999999995e-11
    """
    return _unary(LOG1P, x)


def expm1(x: S) -> S:
    """e**x - 1, accurate near 0, of a float or a Value.

    Example:
        >>> expm1(1e-10)
        1.00000000005e-10
    """
    return _unary(EXPM1, x)


def exp2(x: S) -> S:
    """2**x of a float or a Value.

    Example:
        >>> exp2(10.0)
        1024.0
    """
    return _unary(EXP2, x)


def log2(x: S) -> S:
    """Base-2 logarithm of a float or a Value.

    Example:
        >>> log2(1024.0)
        10.0
    """
    return _unary(LOG2, x)


def log10(x: S) -> S:
    """Base-10 logarithm of a float or a Value.

    Example:
        >>> log10(1000.0)
        3.0
    """
    return _unary(LOG10, x)


def tan(x: S) -> S:
    """Tangent of a float or a Value.

    Example:
        >>> tan(0.25)
        0.255341921221
    """
    return _unary(TAN, x)


def asin(x: S) -> S:
    """Arcsine, in [-pi/2, pi/2], of a float or a Value in [-1, 1].

    Example:
        >>> asin(1.0) == math.pi / 2
        True
    """
    return _unary(ASIN, x)


def acos(x: S) -> S:
    """Arccosine, in [0, pi], of a float or a Value in [-1, 1].

    Example:
        >>> acos(-1.0) == math.pi
        True
    """
    return _unary(ACOS, x)


def atan(x: S) -> S:
    """Arctangent, in (-pi/2, pi/2), of a float or a Value.

    Example:
        >>> atan(1.0) == math.pi / 4
        True
    """
    return _unary(ATAN, x)


def sinh(x: S) -> S:
    """Hyperbolic sine of a float or a Value.

    Example:
        >>> sinh(1.0)
        1.175201193644
    """
    return _unary(SINH, x)


def cosh(x: S) -> S:
    """Hyperbolic cosine of a float or a Value.

    Example:
        >>> cosh(1.0)
        1.543080634815
    """
    return _unary(COSH, x)


def asinh(x: S) -> S:
    """Inverse hyperbolic sine of a float or a Value.

    Example:
        >>> asinh(sinh(1.0))
        1.0
    """
    return _unary(ASINH, x)


def acosh(x: S) -> S:
    """Inverse hyperbolic cosine (>= 0) of a float or a Value >= 1.

    Example:
        >>> acosh(cosh(1.0))
        1.0
    """
    return _unary(ACOSH, x)


def atanh(x: S) -> S:
    """Inverse hyperbolic tangent of a float or a Value in (-1, 1).

    Example:
        >>> atanh(0.5)  # doctest's NUMBER flag: to the digits written
        0.549306144334
    """
    return _unary(ATANH, x)


def cbrt(x: S) -> S:
    """Real cube root (negative for a negative input) of a float or a Value.

    Example:
        >>> cbrt(-8.0)
        -2.0
    """
    return _unary(CBRT, x)


def erfc(x: S) -> S:
    """Complementary error function 1 - erf(x), accurate for large x.

    Example:
        >>> erfc(0.0)
        1.0
    """
    return _unary(ERFC, x)


def lgamma(x: S) -> S:
    """log |Gamma(x)| of a float or a Value (not 0 or a negative integer).

    Example:
        >>> lgamma(5.0), math.log(24.0)  # log 4!
        (3.178053830348, 3.178053830348)
    """
    return _unary(LGAMMA, x)


def gamma(x: S) -> S:
    """The Gamma function of a float or a Value (not 0 or a negative integer).

    Example:
        >>> gamma(5.0)
        24.0
    """
    return _unary(GAMMA, x)


def digamma(x: S) -> S:
    """The digamma function psi(x) = d/dx log |Gamma(x)|, of a float or a Value.

    Not in Python's math module: minigrad's own (the slope of :func:`lgamma`),
    accurate to a few units in the last place away from its poles.

    Example:
        >>> round(-digamma(1.0), 12)  # the Euler-Mascheroni constant
        0.577215664902
    """
    return _unary(DIGAMMA, x)


def polygamma(n: int, x: S) -> S:
    """The n-th derivative of :func:`digamma` (``polygamma(0, x)`` is digamma).

    Args:
        n: The order, an int >= 0.
        x: A float or a Value, not 0 or a negative integer.

    Example:
        >>> round(polygamma(1, 1.0), 12) == round(math.pi**2 / 6, 12)
        True
    """
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"polygamma: n must be an int, got {type(n).__name__} {n!r}")
    if n < 0:
        raise ValueError(f"polygamma: n must be >= 0, got {n!r}")
    return _unary(_polygamma_rule(n), x)


def relu(x: S) -> S:
    """max(x, 0) of a float or a Value (slope 0 at 0, as in PyTorch).

    Example:
        >>> relu(-2.0), relu(3.0)
        (0.0, 3.0)
    """
    return _unary(RELU, x)


def softplus(x: S) -> S:
    """log(1 + e**x) of a float or a Value, computed without overflow.

    Example:
        >>> softplus(1000.0)
        1000.0
    """
    return _unary(SOFTPLUS, x)


def gelu(x: S) -> S:
    """x * Phi(x), Phi the exact normal CDF, of a float or a Value.

    Example:
        >>> gelu(0.0), round(gelu(1.0), 6)
        (0.0, 0.841345)
    """
    return _unary(GELU, x)


def fabs(x: S) -> S:
    """|x| as a float, or ``abs(x)`` of a Value (slope 0 at 0, as in PyTorch).

    Python's ``abs`` works on Values too; ``fabs`` is math's name for it.

    Example:
        >>> fabs(-3), fabs(2.5)
        (3.0, 2.5)
    """
    return math.fabs(x) if isinstance(x, float | int) else abs(x)


def degrees(x: S) -> S:
    """Radians to degrees, of a float or a Value.

    Example:
        >>> degrees(math.pi)
        180.0
    """
    return x * _DEGREES_PER_RADIAN


def radians(x: S) -> S:
    """Degrees to radians, of a float or a Value.

    Example:
        >>> radians(180.0) == math.pi
        True
    """
    return x * _RADIANS_PER_DEGREE


def ldexp(x: S, i: int) -> S:
    """x * 2**i for a float or a Value ``x`` and an int ``i``.

    Example:
        >>> ldexp(0.75, 4)
        12.0
    """
    if isinstance(i, bool) or not isinstance(i, int):
        raise TypeError(f"ldexp: i must be an int, got {type(i).__name__} {i!r}")
    if isinstance(x, float | int):
        try:
            return math.ldexp(x, i)
        except OverflowError:
            raise OverflowError(
                f"ldexp: result overflows a float, got x={float(x)!r}, i={i!r}"
            ) from None
    try:
        scale = math.ldexp(1.0, i)
    except OverflowError:
        raise OverflowError(
            f"ldexp: 2 ** {i!r} overflows a float, got x={x.data!r}, i={i!r}"
        ) from None
    return x * scale


@overload
def atan2(y: float, x: float) -> float: ...
@overload
def atan2(y: Value, x: float | Value) -> Value: ...
@overload
def atan2(y: float, x: Value) -> Value: ...
def atan2(y: float | Value, x: float | Value) -> float | Value:
    """The angle of the point (x, y) from the positive x axis, in [-pi, pi].

    Floats or Values on either side: a float is a constant.

    Example:
        >>> atan2(1.0, -1.0) == 3 * math.pi / 4
        True
    """
    return _binary(ATAN2, y, x)


@overload
def copysign(x: float, y: float) -> float: ...
@overload
def copysign(x: Value, y: float | Value) -> Value: ...
@overload
def copysign(x: float, y: Value) -> Value: ...
def copysign(x: float | Value, y: float | Value) -> float | Value:
    """|x| with the sign of y (of its sign bit, so -0.0 counts as negative).

    Example:
        >>> copysign(3.0, -0.0)
        -3.0
    """
    return _binary(COPYSIGN, x, y)


@overload
def hypot(*coordinates: float) -> float: ...  # type: ignore[overload-overlap]
@overload
def hypot(*coordinates: float | Value) -> Value: ...
def hypot(*coordinates: float | Value) -> float | Value:
    """The Euclidean norm sqrt(sum of squares) of the coordinates, without overflow.

    On floats it is ``math.hypot``. With a Value among the coordinates, two
    are one ``hypot`` op; more are nested, ``hypot(hypot(a, b), c)``.

    Example:
        >>> hypot(3.0, 4.0), hypot(2.0, 3.0, 6.0)
        (5.0, 7.0)
    """
    if all(isinstance(c, float | int) for c in coordinates):
        return math.hypot(*coordinates)  # type: ignore[arg-type]
    if len(coordinates) == 1:
        return ABS(coordinates[0])  # a Value: floats were handled above
    norm = HYPOT(coordinates[0], coordinates[1])
    for c in coordinates[2:]:
        norm = HYPOT(norm, c)
    return norm


@overload
def dist(p: Sequence[float], q: Sequence[float]) -> float: ...  # type: ignore[overload-overlap]
@overload
def dist(p: Sequence[float | Value], q: Sequence[float | Value]) -> Value: ...
def dist(p: Sequence[float | Value], q: Sequence[float | Value]) -> float | Value:
    """The Euclidean distance between points p and q (sequences of equal length).

    Example:
        >>> dist((1.0, 2.0), (4.0, 6.0))
        5.0
    """
    if len(p) != len(q):
        raise ValueError(
            f"dist: p and q must have the same number of coordinates, got {len(p)} and {len(q)}"
        )
    if all(isinstance(c, float | int) for c in (*p, *q)):
        return math.dist(p, q)  # type: ignore[arg-type]
    return hypot(*(a - b for a, b in zip(p, q, strict=True)))


# Only the functions above have overloads; the name is no part of this module.
del overload


# Forwards that need more than one math call.


def _sigmoid(x: float) -> float:
    # Two branches so that exp never overflows for large |x|.
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _softplus(x: float) -> float:
    # log(1 + e**x) without overflow: max(x, 0) + log1p(e**-|x|).
    return max(x, 0.0) + math.log1p(math.exp(-abs(x)))


def _pow_dy(x: S, out: S) -> S | float:
    return 0.0 if value_of(out) == 0.0 else out * log(x)


def _pow(x: float, y: float) -> float:
    if x == 0.0 and y < 0.0:
        raise ZeroDivisionError("0.0 cannot be raised to a negative power")
    if x < 0.0 and not y.is_integer():
        raise ValueError("a negative base needs an integer exponent")
    return math.pow(x, y)


_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_DEGREES_PER_RADIAN = 180.0 / math.pi  # the constants math.degrees and math.radians use
_RADIANS_PER_DEGREE = math.pi / 180.0

# The polygamma functions psi^(n)(x) = d^(n+1)/dx^(n+1) log |Gamma(x)|, which the
# standard library lacks: the slopes of lgamma and gamma, and of each other.
# For x > 0: shift x up past _PSI_SHIFT + n with the recurrence
# psi^(n)(x) = psi^(n)(x + 1) - (-1)**n n! / x**(n+1) (same-signed terms for
# n >= 1, so nothing cancels), then sum the asymptotic series in 1/x. For
# x < 0: reflect, psi^(n)(x) = (-1)**n psi^(n)(1 - x) - pi**(n+1) cot^(n)(pi x),
# the n-th derivative of psi(1 - x) - psi(x) = pi cot(pi x).

#: Bernoulli numbers B_2, B_4, ..., B_24, as used by the asymptotic series.
_BERNOULLI = (
    1 / 6,
    -1 / 30,
    1 / 42,
    -1 / 30,
    5 / 66,
    -691 / 2730,
    7 / 6,
    -3617 / 510,
    43867 / 798,
    -174611 / 330,
    854513 / 138,
    -236364091 / 2730,
)
#: Where the asymptotic series starts: with x >= 20 + n and twelve terms its
#: truncation error is below 1e-18 relative for every n (measured against mpmath).
_PSI_SHIFT = 20.0


def _cot_derivative(n: int) -> tuple[int, ...]:
    """Coefficients (by power of c) of P_n with d^n/du^n cot(u) = P_n(cot(u)).

    P_0(c) = c and, as cot' = -(1 + cot**2), P_(k+1)(c) = -(1 + c**2) P_k'(c).
    """
    coeffs = [0, 1]
    for _ in range(n):
        slope = [i * a for i, a in enumerate(coeffs)][1:] or [0]
        times = [0] * (len(slope) + 2)
        for i, a in enumerate(slope):
            times[i] -= a
            times[i + 2] -= a
        coeffs = times
    return tuple(coeffs)


def _polygamma(n: int, x: float) -> float:
    """psi^(n)(x) on a float: the forward of digamma (n = 0) and of the polygamma rules."""
    if x <= 0.0 and x == math.floor(x):
        raise ValueError("math domain error")  # a pole
    if x < 0.0:
        r = x - round(x)  # exact; cot has period pi, so cot(pi x) = cot(pi r)
        c = 1.0 / math.tan(math.pi * r)
        poly = 0.0
        for a in reversed(_cot_derivative(n)):
            poly = poly * c + a
        result = (-1.0) ** n * _polygamma(n, 1.0 - x) - math.pi ** (n + 1) * poly
    else:
        # psi^(n)(x) = psi^(n)(x + m) - (-1)**n n! sum_k 1 / (x + k)**(n+1)
        shift = 0.0
        while x < _PSI_SHIFT + n:
            shift += (1.0 / x) ** (n + 1)  # OverflowError where psi^(n)(x) is beyond floats
            x += 1.0
        z = 1.0 / x
        if n == 0:
            # psi(x) ~ log x - 1/(2x) - sum_k B_2k / (2k x**2k)
            series = 0.0
            for k in range(len(_BERNOULLI), 0, -1):
                series = (series + _BERNOULLI[k - 1] / (2 * k)) * z * z
            result = math.log(x) - 0.5 * z - series - shift
        else:
            # psi^(n)(x) ~ (-1)**(n+1) [(n-1)!/x**n + n!/(2 x**(n+1))
            #                           + sum_k B_2k (2k+n-1)! / ((2k)! x**(2k+n))]
            series = 0.0
            for k in range(len(_BERNOULLI), 0, -1):
                term = _BERNOULLI[k - 1] * math.factorial(2 * k + n - 1) / math.factorial(2 * k)
                series = (series + term) * z * z
            tail = math.factorial(n - 1) + math.factorial(n) * 0.5 * z + series
            sign = -1.0 if n % 2 == 0 else 1.0
            result = sign * (tail * z**n + math.factorial(n) * shift)
    if result - result != 0.0:
        raise OverflowError("math range error")
    return result


_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


# The table. Each partial reads as the calculus-book entry for d out / d arg;
# ``out`` is the op's own result, reused where it makes the rule cheaper.

ADD = Rule(
    "+",
    operator.add,
    (1.0, 1.0),
    math="x + y",
    sample=((-3.0, 3.0), (-3.0, 3.0)),
    spelling="x + y",
    commutative=True,
)
SUB = Rule(
    "-",
    operator.sub,
    (1.0, -1.0),
    math="x - y",
    sample=((-3.0, 3.0), (-3.0, 3.0)),
    spelling="x - y",
)
MUL = Rule(
    "*",
    operator.mul,
    (lambda x, y, out: y, lambda x, y, out: x),
    math="x*y",
    sample=((-3.0, 3.0), (-3.0, 3.0)),
    spelling="x * y",
    commutative=True,
)
DIV = Rule(
    "/",
    operator.truediv,
    (lambda x, y, out: 1.0 / y, lambda x, y, out: -out / y),
    math="x/y",
    sample=((-3.0, 3.0), (-3.0, 3.0)),
    avoid=(0.0,),  # the pole of y (kept for x too: avoid applies to every argument)
    requires="divisor must be non-zero",
    spelling="x / y",
)
POW = Rule(
    "**",
    _pow,
    # d/dy: where the power is 0 (x = 0, y > 0) it is 0 near y, so its slope is 0.
    (lambda x, y, out: y * x ** (y - 1.0), lambda x, y, out: _pow_dy(x, out)),
    math="x**y",
    # A negative base is defined only for integer exponents: no open interval.
    domain=((0.0, _INF), (-_INF, _INF)),
    sample=((0.2, 3.0), (-2.5, 2.5)),
    spelling="x ** y",
)
NEG = Rule("neg", operator.neg, (-1.0,), math="-x", sample=((-3.0, 3.0),), spelling="-x")
ABS = Rule(
    "abs",
    abs,
    (lambda x, out: sign(x),),
    math="Abs(x)",
    sample=((-3.0, 3.0),),
    avoid=(0.0,),
    spelling="abs(x)",
)
EXP = Rule(
    "exp", math.exp, (lambda x, out: out,), math="exp(x)", sample=((-4.0, 4.0),), spelling="x.exp()"
)
LOG = Rule(
    "log",
    math.log,
    (lambda x, out: 1.0 / x,),
    math="log(x)",
    domain=((0.0, _INF),),
    sample=((0.05, 8.0),),
    requires="input must be > 0",
    spelling="x.log()",
)
LOG1P = Rule(
    "log1p",
    math.log1p,
    (lambda x, out: 1.0 / (1.0 + x),),
    math="log(1 + x)",
    domain=((-1.0, _INF),),
    sample=((-0.9, 5.0),),
    requires="input must be > -1",
    spelling="x.log1p()",
)
SQRT = Rule(
    "sqrt",
    math.sqrt,
    (lambda x, out: 0.5 / out,),
    math="sqrt(x)",
    domain=((0.0, _INF),),  # sqrt(0) is defined, but its slope is not: open at 0
    sample=((0.05, 8.0),),
    requires="input must be >= 0",
    spelling="x.sqrt()",
)
SIN = Rule(
    "sin",
    math.sin,
    (lambda x, out: cos(x),),
    math="sin(x)",
    sample=((-4.0, 4.0),),
    spelling="x.sin()",
)
COS = Rule(
    "cos",
    math.cos,
    (lambda x, out: -sin(x),),
    math="cos(x)",
    sample=((-4.0, 4.0),),
    spelling="x.cos()",
)
TANH = Rule(
    "tanh",
    math.tanh,
    (lambda x, out: 1.0 - out * out,),
    math="tanh(x)",
    sample=((-3.0, 3.0),),
    spelling="x.tanh()",
)
SIGMOID = Rule(
    "sigmoid",
    _sigmoid,
    (lambda x, out: out * (1.0 - out),),
    math="1/(1 + exp(-x))",
    sample=((-4.0, 4.0),),
    spelling="x.sigmoid()",
)
RELU = Rule(
    "relu",
    lambda x: x if x > 0.0 else 0.0,
    (lambda x, out: step(x),),
    math="Max(x, 0)",
    sample=((-3.0, 3.0),),
    avoid=(0.0,),
    spelling="x.relu()",
)
SOFTPLUS = Rule(
    "softplus",
    _softplus,
    (lambda x, out: sigmoid(x),),
    math="log(1 + exp(x))",
    sample=((-4.0, 4.0),),
    spelling="x.softplus()",
)
ERF = Rule(
    "erf",
    math.erf,
    (lambda x, out: _TWO_OVER_SQRT_PI * exp(-(x * x)),),
    math="erf(x)",
    sample=((-3.0, 3.0),),
    spelling="x.erf()",
)
GELU = Rule(
    "gelu",
    lambda x: 0.5 * x * (1.0 + math.erf(x * _INV_SQRT2)),
    (lambda x, out: 0.5 * (1.0 + erf(x * _INV_SQRT2)) + x * exp(-0.5 * x * x) * _INV_SQRT_2PI,),
    math="x*(1 + erf(x/sqrt(2)))/2",
    sample=((-3.0, 3.0),),
    spelling="x.gelu()",
)

EXPM1 = Rule(
    "expm1",
    math.expm1,
    (lambda x, out: out + 1.0,),
    math="exp(x) - 1",
    sample=((-3.0, 3.0),),
    spelling="x.expm1()",
)
EXP2 = Rule(
    "exp2",
    math.exp2,
    (lambda x, out: _LN2 * out,),
    math="2**x",
    sample=((-4.0, 4.0),),
    spelling="x.exp2()",
)
LOG2 = Rule(
    "log2",
    math.log2,
    (lambda x, out: 1.0 / (_LN2 * x),),
    math="log(x, 2)",
    domain=((0.0, _INF),),
    sample=((0.05, 8.0),),
    requires="input must be > 0",
    spelling="x.log2()",
)
LOG10 = Rule(
    "log10",
    math.log10,
    (lambda x, out: 1.0 / (_LN10 * x),),
    math="log(x, 10)",
    domain=((0.0, _INF),),
    sample=((0.05, 8.0),),
    requires="input must be > 0",
    spelling="x.log10()",
)
TAN = Rule(
    "tan",
    math.tan,
    (lambda x, out: 1.0 + out * out,),  # sec(x)**2
    math="tan(x)",
    # Smooth between its poles at pi/2 + k pi; drawn across the two at +-pi/2.
    sample=((-3.0, 3.0),),
    avoid=(-math.pi / 2, math.pi / 2),
    spelling="x.tan()",
)
ASIN = Rule(
    "asin",
    math.asin,
    # (1 - x)(1 + x), not 1 - x*x: no cancellation near +-1.
    (lambda x, out: 1.0 / sqrt((1.0 - x) * (1.0 + x)),),
    math="asin(x)",
    domain=((-1.0, 1.0),),  # asin(+-1) is defined, but its slope is not: open
    sample=((-0.95, 0.95),),
    requires="input must be in [-1, 1]",
    spelling="x.asin()",
)
ACOS = Rule(
    "acos",
    math.acos,
    (lambda x, out: -1.0 / sqrt((1.0 - x) * (1.0 + x)),),
    math="acos(x)",
    domain=((-1.0, 1.0),),
    sample=((-0.95, 0.95),),
    requires="input must be in [-1, 1]",
    spelling="x.acos()",
)
ATAN = Rule(
    "atan",
    math.atan,
    (lambda x, out: 1.0 / (1.0 + x * x),),
    math="atan(x)",
    sample=((-4.0, 4.0),),
    spelling="x.atan()",
)
ATAN2 = Rule(
    "atan2",
    math.atan2,
    (lambda y, x, out: x / (x * x + y * y), lambda y, x, out: -y / (x * x + y * y)),
    # `math` names the arguments by position: its x is the first, y here.
    math="atan2(x, y)",
    sample=((-3.0, 3.0), (-3.0, 3.0)),
    # The jump from pi to -pi where y = 0 < -x, and the origin: y and x stay off 0.
    avoid=(0.0,),
    arg_names=("y", "x"),
)
HYPOT = Rule(
    "hypot",
    math.hypot,
    (lambda x, y, out: x / out, lambda x, y, out: y / out),
    math="sqrt(x**2 + y**2)",
    sample=((-3.0, 3.0), (-3.0, 3.0)),
    avoid=(0.0,),  # its kink, at x = y = 0
    commutative=True,
)
SINH = Rule(
    "sinh",
    math.sinh,
    (lambda x, out: cosh(x),),
    math="sinh(x)",
    sample=((-3.0, 3.0),),
    spelling="x.sinh()",
)
COSH = Rule(
    "cosh",
    math.cosh,
    (lambda x, out: sinh(x),),
    math="cosh(x)",
    sample=((-3.0, 3.0),),
    spelling="x.cosh()",
)
ASINH = Rule(
    "asinh",
    math.asinh,
    (lambda x, out: 1.0 / sqrt(x * x + 1.0),),
    math="asinh(x)",
    sample=((-4.0, 4.0),),
    spelling="x.asinh()",
)
ACOSH = Rule(
    "acosh",
    math.acosh,
    (lambda x, out: 1.0 / sqrt((x - 1.0) * (x + 1.0)),),
    math="acosh(x)",
    domain=((1.0, _INF),),  # acosh(1) is defined, but its slope is not: open
    sample=((1.05, 5.0),),
    requires="input must be >= 1",
    spelling="x.acosh()",
)
ATANH = Rule(
    "atanh",
    math.atanh,
    (lambda x, out: 1.0 / ((1.0 - x) * (1.0 + x)),),
    math="atanh(x)",
    domain=((-1.0, 1.0),),
    sample=((-0.95, 0.95),),
    requires="input must be in (-1, 1)",
    spelling="x.atanh()",
)
CBRT = Rule(
    "cbrt",
    math.cbrt,
    (lambda x, out: 1.0 / (3.0 * out * out),),
    # The real cube root; SymPy's cbrt is the principal one, complex for x < 0.
    math="x / Abs(x)**(2/3)",
    sample=((-3.0, 3.0),),
    avoid=(0.0,),  # the slope is infinite there
    spelling="x.cbrt()",
)
ERFC = Rule(
    "erfc",
    math.erfc,
    (lambda x, out: -_TWO_OVER_SQRT_PI * exp(-(x * x)),),
    math="erfc(x)",
    sample=((-3.0, 3.0),),
    spelling="x.erfc()",
)
COPYSIGN = Rule(
    "copysign",
    math.copysign,
    # |x| times the sign of y: slope +-1 in x (0 at its kink, as abs), and
    # flat in y, apart from its jump at y = 0.
    (lambda x, y, out: sign(x) * math.copysign(1.0, value_of(y)), 0.0),
    math="Abs(x) * y / Abs(y)",
    sample=((-3.0, 3.0), (-3.0, 3.0)),
    avoid=(0.0,),
)
# Gamma and its kin have poles at 0, -1, -2, ...: smooth between them, and
# drawn across the last three.
_GAMMA_POLES = (-2.0, -1.0, 0.0)
LGAMMA = Rule(
    "lgamma",
    math.lgamma,
    (lambda x, out: digamma(x),),
    math="log(Abs(gamma(x)))",
    sample=((-2.5, 4.0),),
    avoid=_GAMMA_POLES,
    requires="input must not be 0 or a negative integer",
    spelling="x.lgamma()",
)
GAMMA = Rule(
    "gamma",
    math.gamma,
    (lambda x, out: out * digamma(x),),
    math="gamma(x)",
    sample=((-2.5, 4.0),),
    avoid=_GAMMA_POLES,
    requires="input must not be 0 or a negative integer",
    spelling="x.gamma()",
)
DIGAMMA = Rule(
    "digamma",
    lambda x: _polygamma(0, x),
    (lambda x, out: polygamma(1, x),),
    math="polygamma(0, x)",
    sample=((-2.5, 4.0),),
    avoid=_GAMMA_POLES,
    requires="input must not be 0 or a negative integer",
    spelling="x.digamma()",
)
#: The rules of polygamma(n, x) for n >= 1, made when first needed: each
#: one's slope is the next.
_POLYGAMMA: dict[int, Rule] = {0: DIGAMMA}


def _polygamma_rule(n: int) -> Rule:
    rule = _POLYGAMMA.get(n)
    if rule is None:
        rule = _POLYGAMMA[n] = Rule(
            f"polygamma_{n}",
            lambda x: _polygamma(n, x),
            (lambda x, out: polygamma(n + 1, x),),
            math=f"polygamma({n}, x)",
            sample=DIGAMMA.sample_box,
            avoid=_GAMMA_POLES,
            requires=DIGAMMA.requires,
        )
    return rule


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
