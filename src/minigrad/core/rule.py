"""A :class:`Rule`: one scalar op, written once, and :func:`apply`, the door every op goes through.

A rule is an op's ``forward`` on floats and one partial derivative per
argument, ``partials[i](*args, out) = d out / d args[i]``. The partials are
written with arithmetic operators and minigrad's functions (:func:`exp`,
:func:`log`, ..., in :mod:`minigrad.core.rules`), which take a float or a
:class:`~minigrad.Value` and return the same kind. The engine calls a partial
with floats for the fast first-order ``backward`` and with Values when
``grad(..., create_graph=True)`` builds a differentiable gradient, so the same
line serves every order of derivative. A user's custom op is a ``Rule`` too and
goes through the same door.

A rule also carries the rest of its op's contract, so no other module keeps a
copy: where the op is defined (``domain``), where tests and checkers draw
points (``sample`` and ``avoid``, read through :meth:`Rule.intervals`), how it
is written in Python (``spelling``), whether it is ``commutative`` and what
its arguments are called (``arg_names``), the expressions ``minigrad.compile``
writes in its place (``inline``, an :class:`~minigrad.core.inline.Inline`) and,
where its slope is exponential, how fast that grows (``growth``).

Example:
    >>> from minigrad import Value
    >>> square = Rule("square", lambda x: x * x, (lambda x, out: 2.0 * x,))
    >>> y = square(Value(3.0))
    >>> y.backward()
    >>> y.data, y.op
    (9.0, 'square')
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

from minigrad.core._validate import as_float, finite_float, signature_problem
from minigrad.core.failures import _domain_error, _show
from minigrad.core.inline import Inline
from minigrad.core.spelling import _arg_names, _parse_spelling
from minigrad.core.value import Value, _node

# typing costs ~15 ms to import and is needed only by mypy (see value.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import random
    from typing import TypeVar
    from typing import overload as overload

    #: A float or a Value: what a partial derivative receives and returns.
    S = TypeVar("S", float, "Value")
else:
    # typing.overload at run time, for the rule families' functions with
    # overloads: the last definition, the implementation, is what runs.
    def overload(func):
        return func


__all__ = ["BUILT_IN", "DEFAULT_MARGIN", "OWN", "Partial", "Rule", "apply", "own", "value_of"]

#: The built-in one-argument methods by name (``"exp"``: minigrad's ``Value.exp``),
#: filled by :mod:`minigrad.core.protocol`. The functions the partials are
#: written with (``exp(x)``) call these, not ``x.exp()``: a user who adds an op
#: micrograd's way, ``Value.exp = exp`` with a closure, changes the method
#: they call, never the rules that use exp (nor makes a closure of them).
BUILT_IN: dict[str, Callable[[Value], Value]] = {}

#: Every rule minigrad makes itself, with the partials it was made with: the
#: table's, and the rules of derivatives its partials make when first needed
#: (tanh', polygamma_n, ...). Each is a pure function of its floats; a rule
#: whose partials were since replaced is no longer one of these.
OWN: dict[Rule, tuple[Partial, ...]] = {}


def own(rule: Rule) -> Rule:
    """Enter ``rule`` in :data:`OWN` with its partials as they are now; returns it."""
    OWN[rule] = rule.partials
    return rule


#: d out / d arg: a function of (*args, out), or a constant float.
Partial = Callable[..., "float | Value"] | float
#: How far drawn points stay from the ends of a sample interval and from avoid points.
DEFAULT_MARGIN = 1e-2
_INF = math.inf
#: Where a default sample interval stops on an infinite side: 2 from the finite
#: end, or -2 and 2 on the whole line. Wide enough to see an op's shape, narrow
#: enough that its values stay ordinary floats after a few ops are composed.
_REACH = 2.0


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
        inline: The op as Python expressions (:class:`~minigrad.core.inline.Inline`),
            which ``minigrad.compile`` writes into generated code. They must
            compute what ``forward`` and ``partials`` compute, bit for bit.
            Default None: compiled code calls ``forward`` and the partials.
        growth: For an op of one argument whose slope ``p`` grows or decays
            exponentially (exp, tanh far out, erf), ``growth(x)``: the rate
            ``|p'(x) / p(x)|``, or a bound on it there. A derivative check
            holds its steps to ``1 / growth`` of the argument. Default None.

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
        "growth",
        "inline",
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
        inline: Inline | None = None,
        growth: Callable[[float], float] | None = None,
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
        checked: list[Partial] = []
        for i, partial in enumerate(partials):
            if callable(partial):
                checked.append(partial)
            elif isinstance(partial, int | float) and not isinstance(partial, bool):
                # A constant slope multiplies every gradient: NaN or inf would
                # poison them all, far from here.
                checked.append(finite_float(partial, f"Rule {name!r}: partials[{i}]"))
            else:
                raise TypeError(
                    f"Rule {name!r}: partials[{i}] must be a function or a constant float, "
                    f"got {type(partial).__name__} {partial!r}"
                )
        partials = tuple(checked)
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
        domain = _intervals(name, "domain", "", domain, arity)
        sample_box = _sample_box(name, domain, sample)
        avoid = _avoid(name, avoid)
        if not isinstance(commutative, bool) or (commutative and arity < 2):
            raise ValueError(
                f"Rule {name!r}: commutative must be a bool, and True only for two or more "
                f"arguments ({arity}), got {commutative!r}"
            )
        if inline is not None and (not isinstance(inline, Inline) or inline.arity != arity):
            raise TypeError(
                f"Rule {name!r}: inline must be an Inline with {arity} partials, got {inline!r}"
            )
        if growth is not None and (not callable(growth) or arity != 1):
            raise TypeError(
                f"Rule {name!r}: growth must be a function of the op's one argument, "
                f"got {growth!r} for {arity} argument(s)"
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
        self.inline = inline
        self.growth = growth
        self._written = written

    def intervals(
        self, index: int, *, margin: float | None = None
    ) -> tuple[tuple[float, float], ...]:
        """The closed intervals where argument ``index`` may be drawn.

        That is the argument's sample interval (``sample_box[index]``), shrunk
        by ``margin`` at both ends, minus a ``margin``-wide neighbourhood of
        every ``avoid`` point. Every float in the result is at least
        ``margin`` away from the interval ends and from every avoid point
        (ends are nudged inward by one ulp where rounding would put them
        closer). Without ``margin``, a piece keeps 0.01 or a quarter of its
        width, whichever is less: a narrow ``sample`` is drawn, not refused.
        This is the one place that decides where a rule may be evaluated:
        :meth:`sample`, :mod:`minigrad.testing` and ``minigrad check``.

        Args:
            index: Which argument (0-based).
            margin: The distance to keep; must be >= 0. Default: see above.

        Returns:
            Disjoint ``(lo, hi)`` pairs with ``lo <= hi``, in increasing order.

        Raises:
            IndexError: ``index`` is not an argument of the rule.
            ValueError: ``margin`` is negative or leaves nothing to draw from.

        Example:
            >>> from minigrad.ops import DIV, EXP
            >>> DIV.intervals(1)
            ((-2.99, -0.01), (0.01, 2.99))
            >>> EXP.intervals(0, margin=0.5)
            ((-3.5, 3.5),)
        """
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < self.arity:
            raise IndexError(f"Rule {self.name!r}: has no argument {index!r}")
        if margin is not None:
            margin = as_float(margin, f"Rule {self.name!r}: margin")
            if not margin >= 0.0:
                raise ValueError(f"Rule {self.name!r}: margin must be >= 0, got {margin!r}")
        lo, hi = self.sample_box[index]
        # Cut points: the interval's ends and every avoid point inside it.
        cuts = [lo, *sorted(a for a in set(self.avoid) if lo < a < hi), hi]
        pieces: list[tuple[float, float]] = []
        for left, right in itertools.pairwise(cuts):
            keep = min(DEFAULT_MARGIN, (right - left) / 4.0) if margin is None else margin
            a = _away(left, keep, _INF)
            b = _away(right, keep, -_INF)
            if a <= b:
                pieces.append((a, b))
        if not pieces:
            raise ValueError(
                f"Rule {self.name!r}: margin {margin!r} leaves no point of argument {index} "
                f"(sample {self.sample_box[index]!r}, avoid {self.avoid!r})"
            )
        return tuple(pieces)

    def sample(self, rng: random.Random, *, margin: float | None = None) -> tuple[float, ...]:
        """A random point of :meth:`intervals`: uniform over each argument's pieces.

        Args:
            rng: The random source (``minigrad check`` passes a seeded one).
            margin: The distance to keep, as for :meth:`intervals`.

        Raises:
            TypeError: ``rng`` is not a random source (a ``random.Random``).
            ValueError: ``margin`` leaves nothing to draw from.

        Example:
            >>> import random
            >>> from minigrad.ops import DIV
            >>> x, y = DIV.sample(random.Random(0))
            >>> abs(y) >= 1e-2
            True
        """
        # Duck-typed: anything with random.Random's two methods used here.
        drawn = (getattr(rng, "choices", None), getattr(rng, "uniform", None))
        if not all(callable(method) for method in drawn):
            raise TypeError(
                f"Rule {self.name!r}: sample: rng must be a random source such as "
                f"random.Random(0), got {type(rng).__name__} {rng!r}"
            )
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
            >>> from minigrad.ops import POW
            >>> y = POW.as_written(2.0, Value(3.0))  # 2.0 ** Value(3.0)
            >>> POW.spelling, y.op, y.data
            ('x ** y', '**', 8.0)
        """
        if self._written is None:
            return self(*args)
        return self._written(*args)

    def __call__(self, *args: Value | float) -> Value:
        """Apply the op to Values (or plain numbers, taken as constants)."""
        return apply(self, *args)

    def __repr__(self) -> str:
        return f"Rule({self.name!r}, arity={self.arity})"


def _sample_box(
    name: str,
    domain: tuple[tuple[float, float], ...],
    sample: tuple[tuple[float, float], ...] | None,
) -> tuple[tuple[float, float], ...]:
    """The sample intervals: as given (checked against the domain), or the default."""
    if sample is None:
        return tuple(_default_sample(lo, hi) for lo, hi in domain)
    sample = _intervals(name, "sample", " finite", sample, len(domain), f" for domain {domain!r}")
    if any(
        not (-_INF < lo < hi < _INF and d_lo <= lo and hi <= d_hi)
        for (lo, hi), (d_lo, d_hi) in zip(sample, domain, strict=False)
    ):
        raise ValueError(
            f"Rule {name!r}: sample must give one finite interval (lo, hi) with lo < hi "
            f"inside the domain per argument ({len(domain)}), got {sample!r} "
            f"for domain {domain!r}"
        )
    return tuple((float(lo), float(hi)) for lo, hi in sample)


def _intervals(
    name: str, what: str, kind: str, given: object, arity: int, extra: str = ""
) -> tuple[tuple[float, float], ...]:
    """``given`` as one ``(lo, hi)`` pair of floats with lo < hi per argument.

    A TypeError when it is not a sequence of pairs of numbers, a ValueError
    when the count or an order is wrong; both name the rule and the argument.
    """
    shape = (
        f"Rule {name!r}: {what} must give one{kind} interval (lo, hi) with lo < hi "
        f"per argument ({arity}), got {given!r}{extra}"
    )
    if isinstance(given, str | bytes) or not isinstance(given, Sequence):
        raise TypeError(shape)
    pairs: list[tuple[float, float]] = []
    for pair in given:
        if (
            isinstance(pair, str | bytes)
            or not isinstance(pair, Sequence)
            or len(pair) != 2
            or any(isinstance(end, bool) or not isinstance(end, int | float) for end in pair)
        ):
            raise TypeError(shape)
        lo, hi = (as_float(end, f"Rule {name!r}: {what}") for end in pair)
        pairs.append((lo, hi))
    if len(pairs) != arity or any(not lo < hi for lo, hi in pairs):
        raise ValueError(shape)
    return tuple(pairs)


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


def _away(x: float, margin: float, toward: float) -> float:
    """The float nearest ``x + margin`` (toward ``toward``) at least ``margin`` from ``x``."""
    sign = 1.0 if toward > x else -1.0
    y = x + sign * margin
    while abs(y - x) < margin:
        y = math.nextafter(y, toward)
    return y


def value_of(x: float | Value) -> float:
    """The float inside ``x`` (``x`` itself when it is a number)."""
    return x if isinstance(x, float | int) else x.data


def _not_a_number(rule: Rule, x: object, index: int = 0) -> TypeError:
    """The error for an argument of a rule's function that is neither a Value nor a number."""
    return TypeError(
        f"{rule.name}: argument {index} ({rule.arg_names[index]}) must be a Value, an int or "
        f"a float, got {type(x).__name__} {x!r}"
    )


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
    return _domain_error(rule, xs, exc)


def apply(rule: Rule, *args: Value | float) -> Value:
    """Apply ``rule`` to Values (numbers are taken as constants).

    This is the door every custom op goes through; the built-in operators
    are the same code, generated per rule for speed.

    Example:
        >>> from minigrad import Value, ops
        >>> apply(ops.MUL, Value(2.0), 3).data
        6.0
    """
    if not isinstance(rule, Rule):
        raise TypeError(f"apply: rule must be a Rule, got {type(rule).__name__} {rule!r}")
    if len(args) != rule.arity:
        raise TypeError(f"{rule.name}: takes {rule.arity} argument(s), got {len(args)}")
    kept: list[Value | float] = []
    xs: list[float] = []
    for i, arg in enumerate(args):
        if type(arg) is Value:
            kept.append(arg)
            xs.append(arg._data)
        elif isinstance(arg, int | float) and not isinstance(arg, bool):
            x = as_float(arg, f"{rule.name}: argument {i}")
            kept.append(x)
            xs.append(x)
        elif isinstance(arg, Value):  # a subclass of Value: a node like any other
            kept.append(arg)
            xs.append(arg._data)
        else:
            raise _not_a_number(rule, arg, i)
    try:
        out = rule.forward(*xs)
    except (ArithmeticError, ValueError) as exc:
        raise _domain_error(rule, xs, exc) from None
    if isinstance(out, complex):
        # Python's ** and a few others answer off their real domain with a
        # complex number (-1.0 ** 0.5): that is a domain error, not a bad type.
        raise ValueError(
            f"{rule.name}: outside its real domain, got {_show(rule, xs)} "
            f"(its forward returned the complex {out!r})"
        )
    if isinstance(out, bool) or not isinstance(out, int | float):
        raise TypeError(
            f"{rule.name}: forward must return a float, got {type(out).__name__} {out!r}"
        )
    try:
        out = float(out)
    except OverflowError:  # an int beyond the floats
        raise _domain_error(rule, xs, None) from None
    if out - out != 0.0:  # not finite
        raise _domain_error(rule, xs, None, out)
    return _node(rule, out, kept)
