"""Hypothesis strategies for testing minigrad ops, built-in or your own.

Every :class:`~minigrad.Rule` declares where it is defined and smooth
(``domain``), the finite intervals to draw test points from (``sample``,
stored as ``sample_box``; by default the domain cut to a finite width) and the
points to keep away from (``avoid``). The strategies here read those
declarations through :meth:`Rule.intervals <minigrad.Rule.intervals>`, the
same method ``Rule.sample`` and ``minigrad check`` draw with, so one test
written against them covers every rule, including rules added later and
users' custom ops:

* :func:`points` draws argument tuples (floats) where a rule is smooth;
* :func:`values` draws the same points as fresh leaf :class:`~minigrad.Value`\\ s;
* :func:`expressions` draws random composite expressions over a set of rules,
  with shared subexpressions, ``x * x``, ``x + x``, diamonds and Value
  exponents, that stay inside every rule's domain;
* :func:`safe_intervals` is the arithmetic behind all three (an alias of
  :meth:`Rule.intervals <minigrad.Rule.intervals>`).

Hypothesis is imported lazily, inside the functions, so ``import minigrad`` and
``import minigrad.checking.strategies`` work without it; only calling a strategy needs it.
Installing minigrad also registers a hypothesis plugin (the
``[project.entry-points.hypothesis]`` table of ``pyproject.toml``,
:mod:`minigrad.checking.plugin`) that makes
``st.from_type(Value)`` draw leaf Values whose data is 0 or has a magnitude
between 1e-8 and 1e8 (log-uniform: every decade as often as any other). That
is the range minigrad's checkers are built to judge. Far outside it a finite
difference has nothing to work with: at 1e11 a step of 1e-6 vanishes
(``x + 1e-6 == x``), and at 1e-124 any step straddles a kink at 0, so a test
drawing such values would fail for reasons that are not the code under test.
For other magnitudes, draw them yourself: ``st.floats(...).map(Value)``.

Example:
    >>> from minigrad import ops
    >>> from minigrad.checking import strategies as testing
    >>> testing.safe_intervals(ops.LOG, 0)
    ((0.060000000000000005, 7.99),)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from minigrad.core import rules as builtin_rules
from minigrad.core.rule import Rule
from minigrad.core.value import Value

if TYPE_CHECKING:
    from hypothesis.strategies import DrawFn, SearchStrategy

__all__ = [
    "DEFAULT_MARGIN",
    "Expression",
    "Node",
    "expressions",
    "points",
    "safe_intervals",
    "values",
]

#: How far drawn points stay from interval ends and from ``avoid`` points.
DEFAULT_MARGIN = builtin_rules.DEFAULT_MARGIN

T = TypeVar("T")


def safe_intervals(
    rule: Rule, index: int, *, margin: float | None = None
) -> tuple[tuple[float, float], ...]:
    """The closed intervals where argument ``index`` of ``rule`` may be drawn.

    The same as ``rule.intervals(index, margin=margin)``
    (:meth:`~minigrad.Rule.intervals`), which holds the arithmetic: the
    argument's sample interval shrunk by ``margin`` at both ends, minus a
    ``margin``-wide neighbourhood of every ``avoid`` point (the ``avoid``
    points of a rule apply to each of its arguments).

    Args:
        rule: The rule whose declarations to read.
        index: Which argument (0-based).
        margin: The distance to keep; must be >= 0.

    Returns:
        Disjoint ``(lo, hi)`` pairs with ``lo <= hi``, in increasing order.

    Raises:
        IndexError: ``index`` is not an argument of ``rule``.
        ValueError: ``margin`` is negative or leaves nothing to draw from.

    Example:
        >>> from minigrad import ops
        >>> safe_intervals(ops.DIV, 1)
        ((-2.99, -0.01), (0.01, 2.99))
        >>> safe_intervals(ops.EXP, 0, margin=0.5)
        ((-3.5, 3.5),)
    """
    return rule.intervals(index, margin=margin)


def _in(x: float, pieces: Iterable[tuple[float, float]]) -> bool:
    return any(lo <= x <= hi for lo, hi in pieces)


def points(rule: Rule, *, margin: float | None = None) -> SearchStrategy[tuple[float, ...]]:
    """Argument tuples (floats) where ``rule`` is smooth.

    Each coordinate is drawn from :func:`safe_intervals`: inside the rule's
    sample interval (``sample_box``, which lies in its ``domain``), and at
    least ``margin`` away from the interval ends and from every ``avoid``
    point. No filtering, so every draw succeeds.

    Args:
        rule: The rule to draw arguments for (built-in or custom).
        margin: The distance to keep from ends and avoid points.

    Returns:
        A strategy of ``rule.arity``-tuples of floats.

    Example:
        >>> from hypothesis import given, settings
        >>> from minigrad import ops
        >>> @settings(max_examples=25, database=None)
        ... @given(points(ops.DIV))
        ... def divisor_is_never_near_zero(xy: tuple[float, float]) -> None:
        ...     assert abs(xy[1]) >= 1e-2 and -3.0 < xy[0] < 3.0
        >>> divisor_is_never_near_zero()
    """
    from hypothesis import strategies as st

    per_argument = [
        st.one_of(
            [
                st.floats(lo, hi, allow_nan=False, allow_infinity=False)
                for lo, hi in safe_intervals(rule, i, margin=margin)
            ]
        )
        for i in range(rule.arity)
    ]
    return st.tuples(*per_argument)


def values(rule: Rule, *, margin: float | None = None) -> SearchStrategy[tuple[Value, ...]]:
    """Tuples of fresh leaf Values at :func:`points` of ``rule``.

    Args:
        rule: The rule to draw arguments for.
        margin: The distance to keep from ends and avoid points.

    Returns:
        A strategy of ``rule.arity``-tuples of new, unlabelled leaf Values
        (``grad == 0.0``); every draw makes new objects.

    Example:
        >>> import math
        >>> from hypothesis import given, settings
        >>> from minigrad import ops
        >>> @settings(max_examples=25, database=None)
        ... @given(values(ops.LOG))
        ... def log_backward_is_reciprocal(xs: tuple[Value, ...]) -> None:
        ...     (x,) = xs
        ...     x.log().backward()
        ...     assert math.isclose(x.grad, 1.0 / x.data, rel_tol=1e-14)
        >>> log_backward_is_reciprocal()
    """
    return points(rule, margin=margin).map(_leaves)


def _leaves(xs: tuple[float, ...]) -> tuple[Value, ...]:
    return tuple(Value(x) for x in xs)


@dataclass(frozen=True)
class Node:
    """One op of an :class:`Expression`: a rule applied to earlier slots or constants.

    Attributes:
        rule: The op.
        args: One entry per argument of ``rule``: an ``int`` is the index of
            an earlier slot (inputs first, then nodes in order), a ``float``
            is a constant.
        glue: True for the ops :func:`expressions` inserts itself (squashing
            an argument into a domain, summing loose ends into the output),
            False for the ops it drew from ``rules``.
    """

    rule: Rule
    args: tuple[int | float, ...]
    glue: bool = False


def _is_ref(arg: int | float) -> bool:
    return isinstance(arg, int) and not isinstance(arg, bool)


def _apply_value(rule: Rule, args: tuple[Value | float, ...]) -> Value:
    return rule.as_written(*args)


@dataclass(frozen=True)
class Expression:
    """A composite expression: a straight-line program over rules, and where to evaluate it.

    Slots ``0 .. n_inputs - 1`` are the inputs; node ``k`` fills slot
    ``n_inputs + k``; the last node is the output. A slot may be used by any
    number of later nodes (and twice by the same node), which is how shared
    subexpressions, ``x * x`` and diamonds are written.

    Attributes:
        inputs: The point to evaluate at (one float per input). Every drawn
            op is smooth at this point and in a neighbourhood of it.
        nodes: The program, at least one node.

    Example:
        >>> from minigrad import Value, grad
        >>> from minigrad import ops
        >>> square_plus_self = Expression(
        ...     inputs=(3.0,),
        ...     nodes=(Node(ops.MUL, (0, 0)), Node(ops.ADD, (1, 0))),
        ... )
        >>> print(square_plus_self)
        f(x0) at x0=3.0:
          v1 = *(x0, x0)
          v2 = +(v1, x0)
          return v2
        >>> x = Value(3.0)
        >>> y = square_plus_self(x)
        >>> y.data, grad(y, [x])[0].data
        (12.0, 7.0)
    """

    inputs: tuple[float, ...]
    nodes: tuple[Node, ...]

    def __post_init__(self) -> None:
        if not self.nodes:
            raise ValueError("Expression: needs at least one node")
        for k, node in enumerate(self.nodes):
            slot = len(self.inputs) + k
            if len(node.args) != node.rule.arity:
                raise ValueError(
                    f"Expression: node {slot} gives {len(node.args)} argument(s) to "
                    f"{node.rule.name}, which takes {node.rule.arity}"
                )
            for arg in node.args:
                if _is_ref(arg) and not 0 <= int(arg) < slot:
                    raise ValueError(f"Expression: node {slot} refers to slot {arg}")

    @property
    def n_inputs(self) -> int:
        """How many inputs the expression takes."""
        return len(self.inputs)

    def __call__(self, *xs: Value) -> Value:
        """Evaluate on Values with minigrad's operators and methods.

        Each rule is applied as its ``spelling`` writes it
        (:meth:`Rule.as_written <minigrad.Rule.as_written>`): the built-in
        rules the way users write them (``a * b``, ``2.0 ** a``,
        ``a.tanh()``), custom rules by default through ``rule(*args)``.

        Args:
            *xs: One Value per input.

        Returns:
            The output node.
        """
        if len(xs) != self.n_inputs:
            raise TypeError(f"Expression: takes {self.n_inputs} input(s), got {len(xs)}")
        return self.build(xs, _apply_value)

    def build(self, leaves: Sequence[T], apply: Callable[[Rule, tuple[T | float, ...]], T]) -> T:
        """Evaluate the program with any kind of value: Values, floats, SymPy expressions.

        Args:
            leaves: One object per input.
            apply: ``apply(rule, args)`` returns the result of ``rule`` on
                ``args``, a tuple whose entries are earlier results or float
                constants.

        Returns:
            The result for the output node.

        Example:
            >>> from minigrad import ops
            >>> e = Expression(inputs=(2.0,), nodes=(Node(ops.MUL, (0, 3.0)),))
            >>> e.build(["x"], lambda rule, args: f"({args[0]} {rule.name} {args[1]})")
            '(x * 3.0)'
            >>> e.build([2.0], lambda rule, args: rule.forward(*args))
            6.0
        """
        if len(leaves) != self.n_inputs:
            raise TypeError(f"Expression: takes {self.n_inputs} input(s), got {len(leaves)}")
        slots: list[T] = list(leaves)
        for node in self.nodes:
            args = tuple(slots[int(a)] if _is_ref(a) else float(a) for a in node.args)
            slots.append(apply(node.rule, args))
        return slots[-1]

    def __str__(self) -> str:
        names = [f"x{i}" for i in range(self.n_inputs)]
        lines = [
            f"f({', '.join(names)}) at "
            + ", ".join(f"{n}={x!r}" for n, x in zip(names, self.inputs, strict=True))
            + ":"
        ]
        for k, node in enumerate(self.nodes):
            names.append(f"v{self.n_inputs + k}")
            shown = ", ".join(names[int(a)] if _is_ref(a) else repr(a) for a in node.args)
            note = "  # glue" if node.glue else ""
            lines.append(f"  {names[-1]} = {node.rule.name}({shown}){note}")
        lines.append(f"  return {names[-1]}")
        return "\n".join(lines)


def expressions(
    rules: Sequence[Rule] = builtin_rules.TABLE,
    *,
    max_inputs: int = 3,
    max_ops: int = 6,
    max_depth: int = 4,
    constants: bool = True,
    margin: float | None = None,
    squash: Rule | None = builtin_rules.SIN,
) -> SearchStrategy[Expression]:
    """Random composite expressions over ``rules``, smooth at the point they come with.

    Each draw is an :class:`Expression`: a straight-line program plus the
    input floats to evaluate it at. An op's argument is an input, an earlier
    op's result (any earlier one, so results are shared: ``x * x``,
    ``x + x``, diamonds, and ``x ** y`` with a Value exponent all occur) or,
    when ``constants`` is true, a float constant (``x * 2.5``,
    ``1.5 ** x``; at least one argument of every op is a Value).

    Staying in the domain, by squashing. While drawing, the strategy
    evaluates the program on floats. When an argument of a drawn op falls
    outside that argument's :func:`safe_intervals` (outside the rule's
    sample interval shrunk by ``margin``, or within ``margin`` of an
    ``avoid`` point), it is replaced by ``mid + half * sin(arg)``, which lies in the
    safe interval ``[mid - half, mid + half]`` nearest to the argument. The
    squash is made of ``sin``, ``*`` and ``+``, which are smooth everywhere,
    so the expression is a smooth function near its inputs; and every drawn
    op's argument is at least ``margin`` inside its smooth region, so small
    perturbations (finite differences) stay smooth too. Why not reject draws
    whose values leave a domain: with narrow domains (``log``, ``sqrt``,
    ``**``) most random compositions would be rejected, hypothesis would give
    up (``Unsatisfiable``, ``filter_too_much``) and shrink poorly; squashing
    never fails. Why not squash every argument: arguments that are already
    valid stay untouched, so most of an expression is the ops as drawn.
    Why ``sin``: unlike a sigmoid it does not flatten large arguments, so
    the squashed parts keep non-trivial derivatives. Results of drawn ops
    that no later op uses are added into the output (more glue), so every
    drawn op counts. Glue ops are marked ``Node.glue``.

    Describe it without minigrad: ``str(expr)`` lists the program, and
    :meth:`Expression.build` evaluates it with any values, e.g. SymPy
    expressions built from each ``rule.math``.

    Args:
        rules: The rules to draw ops from (any arity; the default is every
            built-in rule).
        max_inputs: At most this many inputs (at least 1).
        max_ops: At most this many drawn ops (at least 1; glue not counted).
        max_depth: At most this many drawn ops on any path from an input to
            the output (glue not counted).
        constants: Whether float constants may appear as op arguments.
        margin: The distance to keep from sample interval ends and avoid points.
        squash: The one-argument rule squashing uses in place of ``sin``: any
            smooth map of the reals onto ``[-1, 1]`` (``tanh``, for an engine
            without ``sin``); None squashes with ``*`` and ``+`` alone, as
            ``mid + x * half / (|x0| + 1)`` with ``x0`` the value at the drawn
            point (a linear map, for an engine with neither).

    Returns:
        A strategy of :class:`Expression`.

    Example:
        >>> from hypothesis import given, settings
        >>> from minigrad import Value, grad
        >>> @settings(max_examples=10, database=None, deadline=None)
        ... @given(expressions(max_ops=3))
        ... def value_path_is_float_path(e: Expression) -> None:
        ...     xs = [Value(x) for x in e.inputs]
        ...     y = e(*xs)
        ...     assert y.data == e.build(e.inputs, lambda rule, args: rule.forward(*args))
        ...     assert len(grad(y, xs)) == e.n_inputs
        >>> value_path_is_float_path()
    """
    from hypothesis import strategies as st

    rules = tuple(rules)
    if not rules or not all(isinstance(r, Rule) for r in rules):
        raise TypeError(f"expressions: rules must be a non-empty sequence of Rules, got {rules!r}")
    if squash is not None and (not isinstance(squash, Rule) or squash.arity != 1):
        raise TypeError(f"expressions: squash must be a one-argument Rule or None, got {squash!r}")
    for name, n in (("max_inputs", max_inputs), ("max_ops", max_ops), ("max_depth", max_depth)):
        if n < 1:
            raise ValueError(f"expressions: {name} must be >= 1, got {n!r}")
    # Fail early (at strategy creation) on a rule with nothing to draw from.
    safe = {r: [safe_intervals(r, i, margin=margin) for i in range(r.arity)] for r in rules}
    any_float = st.floats(-3.0, 3.0, allow_nan=False, allow_infinity=False)

    @st.composite
    def draw_expression(draw: DrawFn) -> Expression:
        n_inputs = draw(st.integers(1, max_inputs), label="n_inputs")
        inputs = tuple(draw(any_float, label="input") for _ in range(n_inputs))
        data: list[float] = list(inputs)  # the float value of every slot
        depth: list[int] = [0] * n_inputs  # drawn ops on the longest path to each slot
        used: list[bool] = [False] * n_inputs
        nodes: list[Node] = []

        def add(rule: Rule, args: tuple[int | float, ...], glue: bool) -> int:
            xs = [data[int(a)] if _is_ref(a) else float(a) for a in args]
            data.append(float(rule.forward(*xs)))
            refs = [int(a) for a in args if _is_ref(a)]
            depth.append(max((depth[r] for r in refs), default=0) + (0 if glue else 1))
            used.append(False)
            for r in refs:
                used[r] = True
            nodes.append(Node(rule, args, glue))
            return len(data) - 1

        squashed: dict[tuple[int, float, float], int] = {}

        def squash_into(slot: int, pieces: tuple[tuple[float, float], ...]) -> int:
            x = data[slot]
            lo, hi = min(pieces, key=lambda p: max(p[0] - x, x - p[1]))  # the nearest piece
            key = (slot, lo, hi)
            if key not in squashed:  # squash a slot once per interval, keeping it shared
                mid, half = (lo + hi) / 2.0, (hi - lo) / 2.0
                if squash is None:  # linear: inside the interval near the drawn point
                    s = add(builtin_rules.MUL, (slot, half / (abs(x) + 1.0)), True)
                else:
                    s = add(squash, (slot,), True)
                    s = add(builtin_rules.MUL, (s, half), True)
                squashed[key] = add(builtin_rules.ADD, (s, mid), True)
            return squashed[key]

        def is_drawn(slot: int) -> bool:
            return slot < n_inputs or not nodes[slot - n_inputs].glue

        n_ops = draw(st.integers(1, max_ops), label="n_ops")
        for _ in range(n_ops):
            rule = draw(st.sampled_from(rules), label="rule")
            # Inputs and drawn ops, not glue, are what later ops draw from.
            usable = [i for i in range(len(data)) if is_drawn(i) and depth[i] < max_depth]
            const_at = [
                constants and rule.arity > 1 and draw(st.integers(0, 3), label="const") == 0
                for _ in range(rule.arity)
            ]
            if all(const_at):
                const_at[draw(st.integers(0, rule.arity - 1), label="keep")] = False
            args: list[int | float] = []
            for i in range(rule.arity):
                pieces = safe[rule][i]
                if const_at[i]:
                    c = draw(st.one_of([st.floats(lo, hi) for lo, hi in pieces]), label="c")
                    args.append(float(c))
                    continue
                earlier = [int(a) for a in args if _is_ref(a)]
                if earlier and draw(st.integers(0, 2), label="reuse") == 0:
                    slot = earlier[-1]  # the same slot again: x * x, x + x, x ** x
                else:
                    slot = draw(st.sampled_from(usable), label="arg")
                if not _in(data[slot], pieces):
                    slot = squash_into(slot, pieces)
                args.append(slot)
            add(rule, tuple(args), False)
        out = len(data) - 1
        for slot in range(n_inputs, len(data) - 1):
            if not used[slot] and is_drawn(slot):
                out = add(builtin_rules.ADD, (out, slot), True)
        return Expression(inputs=inputs, nodes=tuple(nodes))

    return draw_expression()
