"""Explaining a check's findings: kinks, jumps, and the op whose rule is wrong.

A failing entry has already survived extrapolation
(:mod:`minigrad.checking.numeric.steps`): its best numerical estimate, error bound
included, disagrees with reverse mode. What is left to say is whether the
function has a derivative there at all (a kink: the one-sided slopes settle
at different values; a jump: the function's values differ on the two sides
however small the step) and, if it has, which op's own rule disagrees with a
numerical derivative of its own forward (:func:`find_fault`). Passing
entries are screened for kinks too (``abs`` at 0 passes, as in PyTorch, but
the kink is worth a warning).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from minigrad.checking.numeric.steps import Evaluate, central
from minigrad.checking.run.report import Report
from minigrad.core.closure import Closure
from minigrad.core.rule import Rule
from minigrad.core.value import Value, toposort

__all__ = ["faulty_node", "find_fault", "kink_note", "looks_kinked", "one_sided_slopes"]

# One-sided slopes are compared at the step and at these fractions of it.
_FRACTIONS = (1.0, 0.1, 0.01)
# How many distinct op nodes fault localisation examines at most.
_MAX_LOCALIZE = 500


def one_sided_slopes(
    evaluate: Evaluate, x: float, here: Sequence[float], h: float
) -> tuple[list[float], list[float], float] | None:
    """Left and right difference quotients at step ``h``, per value, and the step.

    Example:
        >>> left, right, _ = one_sided_slopes(lambda x: [abs(x)], 0.0, [0.0], 1e-3)
        >>> left, right
        ([-1.0], [1.0])
    """
    sides = central(evaluate, x, h)
    if sides is None:
        return None
    up, down, _ = sides
    right_step, left_step = (x + h) - x, x - (x - h)
    left = [(c - d) / left_step for c, d in zip(here, down, strict=True)]
    right = [(u - c) / right_step for u, c in zip(up, here, strict=True)]
    return left, right, h


def looks_kinked(left: float, right: float) -> bool:
    """Whether one-sided slopes differ enough to look for a kink (cheap screen).

    Smooth curvature makes them differ too, in proportion to the step:
    :func:`kink_note` tells the two apart with smaller steps.
    """
    return abs(left - right) > 1e-2 * (1.0 + max(abs(left), abs(right)))


def kink_note(evaluate: Evaluate, x: float, here: Sequence[float], r: int, h: float, k: int) -> str:
    """A note when value ``r`` has no derivative at ``x`` (a kink or a jump), else "".

    Args:
        evaluate: The level's values as a function of the input.
        x: The point.
        here: The level's values at ``x``.
        r: Which value.
        h: The step to start from (slopes are also taken at h/10 and h/100).
        k: The level (1 for ``func`` itself), for the wording.
    """
    probes = [one_sided_slopes(evaluate, x, here, h * f) for f in _FRACTIONS]
    if any(p is None for p in probes):
        return ""
    left = [p[0][r] for p in probes if p is not None]
    right = [p[1][r] for p in probes if p is not None]
    steps = [p[2] for p in probes if p is not None]
    what = "the function" if k == 1 else f"the order-{k - 1} derivative"
    # A jump: f(x + s) - f(x) does not shrink with s (a smooth function's does).
    for side, slopes in (("right", right), ("left", left)):
        coarse, fine = slopes[0] * steps[0], slopes[-1] * steps[-1]
        if abs(coarse) > 1e-9 * (1.0 + abs(here[r])) and abs(fine) > 0.5 * abs(coarse):
            return (
                f"not differentiable at this point: {what} jumps here (by about "
                f"{fine:.6g} on the {side}, even at a step of {steps[-1]:.3g}), so no "
                "derivative exists; a difference quotient only measures the jump divided "
                "by the step"
            )

    def same(a: float, b: float, tol: float = 1e-3) -> bool:
        return abs(a - b) <= tol * (1.0 + max(abs(a), abs(b)))

    # A kink: each one-sided slope has settled, and they differ.
    settled = all(same(s, side[-1]) for side in (left, right) for s in side)
    if settled and not same(left[-1], right[-1], 1e-2):
        return (
            f"not differentiable at this point (a kink): left slope {left[-1]:.6g}, "
            f"right slope {right[-1]:.6g}; the rule's value is a choice there, and a "
            f"central difference averages the slopes to {(left[-1] + right[-1]) / 2:.6g}"
        )
    return ""


#: Runs a check of one rule at its recorded arguments: (function, inputs, order).
RunCheck = Callable[[Callable[..., Value], list[Value], int], Report]


def find_fault(outputs: Sequence[Value], k: int, run: RunCheck) -> str:
    """Name the first op (in evaluation order) whose own rule fails order k.

    Each distinct (rule, arguments) of the graph is checked on its own, as a
    function of its Value arguments with the constants fixed.
    """
    return faulty_node(outputs, k, run)[0]


def faulty_node(
    outputs: Sequence[Value], k: int, run: RunCheck, *, flipped: bool = False
) -> tuple[str, Value | None]:
    """:func:`find_fault`'s words, and the node whose rule is wrong (None if none).

    ``flipped``: every failing entry's analytic value is minus its numerical
    one, worth saying when the fault is a closure's.
    """
    seen: set[tuple[int, tuple[float, ...]]] = set()
    closures: dict[str, None] = {}
    for node in reversed(toposort(outputs)):
        rule = node.rule
        if rule is None:
            continue
        if type(rule) is Closure:
            # A closure has no forward to check it against; what it does
            # that no chain-rule step does is seen exactly, at its point.
            problem = rule.misbehaviour()
            if problem:
                return f"op {rule.name!r}{_labelled(node)}: {problem}", None
            closures[rule.name or "(unnamed)"] = None
            continue
        args = node.args
        key = (id(rule), tuple(a.data if isinstance(a, Value) else a for a in args))
        if key in seen:
            continue
        seen.add(key)
        if len(seen) > _MAX_LOCALIZE:
            return f"not found among the first {_MAX_LOCALIZE} ops", None
        report = _check_rule(rule, args, k, run)
        if report is not None and not report.ok:
            wrong = any(e.verdict == "wrong" for e in report.failures)
            return _describe(node, rule, args, report), node if wrong else None
    if closures:
        names = ", ".join(repr(name) for name in closures)
        which = f"op {names}" if len(closures) == 1 else f"one of the ops {names}"
        return (
            f"{which}, written as a _backward closure: every built-in op's rule agrees with "
            "a numerical derivative of its forward here, so the closure adds the wrong "
            "local partial"
            + (
                ": the analytic derivative is minus the numerical one, so its sign is flipped "
                "(-= for +=, or a minus lost)"
                if flipped
                else " (a sign, a factor, or the derivative of another function)"
            )
        ), None
    return (
        "every op's own rule agrees with a numerical derivative of its forward at its "
        "inputs, so the derivative is lost between the ops: does func read .data, call "
        "float() on a Value, or use a value computed outside minigrad?"
    ), None


def _labelled(node: Value) -> str:
    return f" (label {node.label!r})" if node.label else ""


def _check_rule(
    rule: Rule, args: tuple[Value | float, ...], k: int, run: RunCheck
) -> Report | None:
    """Check one rule up to order k at the node's recorded arguments."""
    places = [i for i, a in enumerate(args) if isinstance(a, Value)]
    if not places:
        return None
    fixed = [a.data if isinstance(a, Value) else a for a in args]

    def local(*vs: Value) -> Value:
        full: list[Value | float] = list(fixed)
        for i, v in zip(places, vs, strict=True):
            full[i] = v
        return rule(*full)

    return run(local, [Value(fixed[i]) for i in places], k)


def _describe(node: Value, rule: Rule, args: tuple[Value | float, ...], report: Report) -> str:
    shown = ", ".join(f"{a.data if isinstance(a, Value) else a!r}" for a in args)
    label = _labelled(node)
    places = [i for i, a in enumerate(args) if isinstance(a, Value)]
    worst = report.failures[0]
    if worst.note:
        return f"op {rule.name!r}{label} at ({shown}): {worst.note}"
    wrt = ", ".join(f"arg {places[i]}" for i in (*worst.path, worst.wrt))
    return (
        f"op {rule.name!r}{label} at ({shown}): its order-{worst.order} derivative with "
        f"respect to {wrt} is {worst.analytic:.9g} by its rule but {worst.numerical:.9g} "
        "by a numerical derivative of its forward"
    )
