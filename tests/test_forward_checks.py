"""The checkers in forward mode: the mutant battery again, mode by mode.

``test_gradcheck_mutants`` feeds the checkers wrong rules and checks reverse
mode. Here the same catalogue (``MUTANTS``) is checked in forward mode
(``modes=("fwd",)``: the jvp with each unit tangent; above order 1, forward
over reverse) and in both modes at once: every wrong rule must be caught at
its order and not below, every failing entry must carry the mode it came
from, and fault localisation, run in the failing mode, must name the op. The
public spellings are checked too: PyTorch's ``check_forward_ad`` and
``check_fwd_over_rev``, JAX's ``modes``.

A rule cannot be wrong in one mode only (both modes read the same partials),
so to see that a failure is pinned on the mode that disagreed, one test
breaks forward mode itself and watches reverse mode pass.

The number of mutants caught in forward mode is printed in pytest's summary.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import given, settings

import minigrad as mg
import minigrad.checking.run.levels
from minigrad import GradcheckError, GradcheckWarning, Report, Rule, Value, check
from minigrad.checking.run.table import where
from minigrad.core.forward import Tangents
from minigrad.testing import Expression, expressions
from summary import closing_line
from test_gradcheck_mutants import MUTANTS, SIN_SPLIT, Mutant

#: Mutants caught in forward mode, per class; printed at the end of the session.
CAUGHT: Counter[str] = Counter()

Fn = Callable[..., Value]


def _assert_caught(report: Report, mutant: Mutant, modes: Sequence[str]) -> None:
    """Failed at the mutant's order, in exactly ``modes``, naming the op and the modes."""
    __tracebackhide__ = True
    assert not report.ok, f"{mutant} passed in {modes}: {report.text()}"
    assert report.order == mutant.order, report.text()
    assert {e.order for e in report.failures} == {mutant.order}
    assert {e.mode for e in report.failures} == set(modes), report.text()
    assert report.modes == tuple(modes)
    assert f"op {mutant.rule.name!r}" in report.fault, report.text()
    text = report.text()
    assert f"'{mutant.rule.name}'" in text
    words = " and ".join({"fwd": "forward", "rev": "reverse"}[m] for m in modes) + " mode"
    assert f"gradcheck failed at order {mutant.order} in {words}" in text
    assert report.fault.startswith(f"in {words}, ")
    for entry in report.failures:
        assert "kink" not in entry.note and "not differentiable" not in entry.note


@pytest.mark.parametrize("mutant", MUTANTS, ids=str)
def test_mutant_is_caught_in_forward_mode_at_its_order_and_named(mutant: Mutant) -> None:
    report = check(mutant.func, mutant.inputs(), order=mutant.order, modes=("fwd",))
    _assert_caught(report, mutant, ["fwd"])
    # Forward mode sees what reverse mode sees, entry for entry.
    reverse = check(mutant.func, mutant.inputs(), order=mutant.order)
    assert [(e.output, e.path, e.wrt) for e in report.failures] == [
        (e.output, e.path, e.wrt) for e in reverse.failures
    ]
    for fwd, rev in zip(report.failures, reverse.failures, strict=True):
        assert fwd.analytic == pytest.approx(rev.analytic, rel=1e-12, abs=1e-12)
    CAUGHT[mutant.kind] += 1


@pytest.mark.parametrize("mutant", [m for m in MUTANTS if m.order > 1], ids=str)
def test_mutant_is_right_below_its_order_in_forward_mode(mutant: Mutant) -> None:
    report = check(mutant.func, mutant.inputs(), order=mutant.order - 1, modes=("fwd",))
    assert report.ok, report.text()
    assert report.checked > 0


@pytest.mark.parametrize("mutant", MUTANTS, ids=str)
def test_mutant_is_caught_in_both_modes_at_once(mutant: Mutant) -> None:
    report = check(mutant.func, mutant.inputs(), order=mutant.order, modes=("fwd", "rev"))
    _assert_caught(report, mutant, ["fwd", "rev"])
    alone = check(mutant.func, mutant.inputs(), order=mutant.order)
    assert report.checked == 2 * alone.checked
    assert len(report.failures) == 2 * len(alone.failures)
    CAUGHT[mutant.kind] += 1


@pytest.mark.parametrize("mutant", MUTANTS, ids=str)
def test_the_public_forward_checker_of_its_order_raises_naming_the_op(mutant: Mutant) -> None:
    checker: dict[int, Callable[[Fn, list[Value]], bool]] = {
        1: lambda f, xs: mg.gradcheck(f, xs, check_forward_ad=True, check_backward_ad=False),
        2: lambda f, xs: mg.gradgradcheck(f, xs, check_fwd_over_rev=True, check_rev_over_rev=False),
        3: lambda f, xs: mg.check_grads(f, xs, order=3, modes=("fwd",)),
    }
    with pytest.raises(GradcheckError) as excinfo:
        checker[mutant.order](mutant.func, mutant.inputs())
    _assert_caught(excinfo.value.report, mutant, ["fwd"])
    assert "in forward mode" in str(excinfo.value)
    CAUGHT[mutant.kind] += 1


@pytest.mark.parametrize("mutant", MUTANTS, ids=str)
def test_fast_mode_in_forward_mode_catches_the_mutant(mutant: Mutant) -> None:
    exhaustive = check(mutant.func, mutant.inputs(), order=mutant.order, modes=("fwd",))
    fast = check(mutant.func, mutant.inputs(), order=mutant.order, modes=("fwd",), fast_mode=True)
    assert fast.fast and not fast.ok, fast.text()
    assert fast.failures == exhaustive.failures
    assert fast.fault == exhaustive.fault
    assert "fast mode, then exhaustive; forward mode" in fast.text()
    CAUGHT[mutant.kind] += 1


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("mutant", [m for m in MUTANTS if m.context == "bare"], ids=str)
def test_fast_forward_direction_alone_catches_the_mutant(mutant: Mutant, seed: int) -> None:
    # A level whose random direction passes is not checked entry by entry, so
    # the check fails only if the direction itself disagrees, for any seed.
    report = check(
        mutant.func, mutant.inputs(), order=mutant.order, modes=("fwd",), fast_mode=True, seed=seed
    )
    assert not report.ok, report.text()
    assert report.order == mutant.order
    CAUGHT[mutant.kind] += 1


@pytest.mark.parametrize("mutant", MUTANTS, ids=str)
def test_richardson_in_forward_mode_catches_the_mutant(mutant: Mutant) -> None:
    report = check(
        mutant.func, mutant.inputs(), order=mutant.order, modes=("fwd",), method="richardson"
    )
    _assert_caught(report, mutant, ["fwd"])
    CAUGHT[mutant.kind] += 1


@pytest.mark.parametrize("point", [0.5, -1.3])
def test_partial_right_on_floats_wrong_on_values_is_caught_in_forward_mode(point: float) -> None:
    # Forward mode compares its float pass with its create_graph pass, as
    # reverse mode does: the Values path is what the next level is built from.
    x = Value(point)
    _, t = mg.jvp(lambda a: SIN_SPLIT(a), x, 1.0, create_graph=True)
    assert isinstance(t, Value) and t.data == pytest.approx(2.0 * math.cos(point))
    assert mg.gradcheck(lambda a: SIN_SPLIT(a), [x], check_forward_ad=True)
    report = check(lambda a: SIN_SPLIT(a), [x], order=2, modes=("fwd",))
    assert not report.ok, report.text()
    assert report.failures[0].mode == "fwd"
    assert "forward mode (jvp)" in report.failures[0].note
    assert "on Values (create_graph)" in report.failures[0].note
    assert "op 'sin_split'" in report.fault
    CAUGHT["float-path-differs"] += 1


# A failure is pinned on the mode that disagreed.


class _DoubledTangents(Tangents):
    """Forward mode with a bug of its own: every tangent comes out doubled."""

    def __call__(
        self, tangents: Sequence[float | Value], *, create_graph: bool = False
    ) -> list[float | Value]:
        return [2.0 * t for t in super().__call__(tangents, create_graph=create_graph)]


def test_a_broken_forward_mode_fails_in_forward_mode_only(monkeypatch: pytest.MonkeyPatch) -> None:
    func: Fn = lambda a, b: (a * b).sin()  # noqa: E731
    inputs = [Value(0.4, label="a"), Value(-0.9)]
    assert check(func, inputs, modes=("fwd", "rev")).ok
    monkeypatch.setattr(minigrad.checking.run.levels, "Tangents", _DoubledTangents)
    report = check(func, inputs, modes=("rev", "fwd"))
    assert not report.ok
    assert {e.mode for e in report.failures} == {"fwd"}
    for entry in report.failures:
        assert entry.analytic == pytest.approx(2.0 * entry.numerical, rel=1e-6)
    text = report.text()
    assert text.startswith(
        "gradcheck failed at order 1 in forward mode: 2 of 4 entries differ "
        "(exhaustive; reverse and forward mode)"
    )
    header, *rows = text.splitlines()[1:4]
    assert header.split()[:2] == ["order", "mode"]
    assert len(rows) == 2 and all(row.split()[:2] == ["1", "fwd"] for row in rows)
    assert "<th>mode</th>" in report._repr_html_()
    # Localisation runs in the mode that disagreed, so the broken forward mode
    # shows already in the first op checked on its own (in reverse mode each
    # op's rule is right, and no op would be named).
    assert report.fault.startswith("in forward mode, op '*' at (0.4, -0.9)")
    assert check(func, inputs, modes=("rev",)).ok
    assert mg.gradcheck(func, inputs)  # reverse mode only, the default
    with pytest.raises(GradcheckError, match="in forward mode"):
        mg.gradcheck(func, inputs, check_forward_ad=True)


def test_second_order_entries_in_forward_mode_are_forward_over_reverse() -> None:
    (mutant,) = [m for m in MUTANTS if m.rule.name == "sin_data" and m.context == "bare"][:1]
    with pytest.raises(GradcheckError) as excinfo:
        mg.gradgradcheck(
            mutant.func, mutant.inputs(), check_fwd_over_rev=True, check_rev_over_rev=False
        )
    report = excinfo.value.report
    assert report.order == 2
    header, row = report.text().splitlines()[1:3]
    assert header.split()[:2] == ["order", "mode"]
    assert row.startswith("2      fwd over rev  out[0]")
    (entry,) = report.failures
    assert where(entry, report.names) == "order 2 (fwd over rev), out[0] with respect to x[0], x[0]"


# The default is unchanged, and correct functions pass in every mode.


def test_default_checks_reverse_mode_only_and_says_nothing_of_modes() -> None:
    report = check(lambda a: a.exp(), [Value(0.5)])
    assert report.modes == ("rev",)
    assert str(report).splitlines()[0] == "gradcheck passed: order 1, 1 comparison (exhaustive)"
    assert "mode" not in str(report)
    both = check(lambda a: a.exp(), [Value(0.5)], modes=("fwd", "rev"))
    assert str(both).splitlines()[0] == (
        "gradcheck passed: order 1, 2 comparisons (exhaustive; forward and reverse mode)"
    )


@settings(max_examples=15, deadline=None)
@given(expressions(max_inputs=3, max_ops=5))
def test_correct_expressions_pass_in_forward_and_both_modes(expr: Expression) -> None:
    xs = [Value(x) for x in expr.inputs]
    for modes in (("fwd",), ("fwd", "rev")):
        report = check(expr, xs, order=2, modes=modes)
        assert report.ok, f"{expr}\n{report.text()}"
        assert report.checked == len(modes) * (len(xs) + len(xs) ** 2)
    assert [x.data for x in xs] == list(expr.inputs)


@pytest.mark.parametrize("modes", [("fwd",), ("fwd", "rev")])
def test_fast_mode_passes_correct_functions_in_forward_mode(modes: tuple[str, ...]) -> None:
    xs = [Value(0.01 * i + 0.1) for i in range(12)]
    func: Fn = lambda *v: sum((t.sin() * t for t in v), Value(0.0))  # noqa: E731
    report = check(func, xs, order=2, modes=modes, fast_mode=True)
    # Two directions per order in each mode, nothing more.
    assert report.ok and report.checked == 2 * 2 * len(modes)


def test_a_kink_is_reported_once_whatever_the_modes() -> None:
    with pytest.warns(GradcheckWarning) as record:
        assert mg.check_grads(lambda v: abs(v), [Value(0.0)], modes=("fwd", "rev"))
    assert len([w for w in record if "kink" in str(w.message)]) == 1


def test_forward_mode_runs_twice_for_custom_rules_and_sees_nondeterminism() -> None:
    calls: list[float] = []

    def shaky(x: Any, out: Any) -> Any:
        calls.append(1.0)
        return mg.cos(x) + 1e-9 * (len(calls) % 2)

    noisy_sin = Rule("noisy_sin", math.sin, (shaky,))
    report = check(lambda v: noisy_sin(v), [Value(0.4)], modes=("fwd",))
    assert not report.ok
    assert report.failures[0].mode == "fwd"
    assert report.failures[0].note.startswith("forward mode (jvp) is not deterministic")
    assert check(lambda v: noisy_sin(v), [Value(0.4)], modes=("fwd",), nondet_tol=1e-8).ok


def test_a_partial_that_fails_in_forward_mode_is_an_entry_of_forward_mode() -> None:
    broken = Rule("broken", math.sin, (lambda x, out: mg.log(x - 10.0),))
    report = check(lambda v: broken(v), [Value(0.4)], modes=("fwd",))
    assert not report.ok
    (entry,) = report.failures
    assert entry.mode == "fwd"
    assert "could not be computed" in entry.note and "jvp" in entry.note


def test_a_level_that_cannot_be_built_fails_in_the_mode_checked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Levels are built by reverse mode, which forward over reverse needs too:
    # in a check of forward mode alone the failure is forward mode's.
    built = minigrad.checking.run.levels.Levels.level

    def level(self: minigrad.checking.run.levels.Levels, k: int) -> Any:
        if k == 2:
            raise minigrad.checking.run.levels.DerivativeError(
                ValueError("op 'x' backward: broken")
            )
        return built(self, k)

    monkeypatch.setattr(minigrad.checking.run.levels.Levels, "level", level)
    report = check(lambda v: v.exp(), [Value(0.4)], order=2, modes=("fwd",))
    assert not report.ok and report.order == 2
    (entry,) = report.failures
    assert entry.mode == "fwd"
    assert "the order-2 derivatives could not be computed: op 'x' backward: broken" in entry.note
    assert report.text().startswith("gradcheck failed at order 2 in forward mode: ")


def test_inputs_are_restored_after_a_forward_mode_check() -> None:
    x = Value(0.25)
    x.grad = 3.0
    before = (x.data, x.grad)
    bad = Rule("bad", math.exp, (lambda x, out: out * x,))
    assert not check(lambda v: bad(v), [x], order=2, modes=("fwd", "rev")).ok
    assert (x.data, x.grad) == before


# Bad arguments name themselves.

LOOSE: Any = mg


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (
            lambda: LOOSE.gradcheck(
                lambda a: a, [Value(1.0)], check_forward_ad=False, check_backward_ad=False
            ),
            ValueError,
            "gradcheck: check_backward_ad and check_forward_ad are both False",
        ),
        (
            lambda: LOOSE.gradgradcheck(
                lambda a: a, [Value(1.0)], check_fwd_over_rev=False, check_rev_over_rev=False
            ),
            ValueError,
            "gradgradcheck: check_rev_over_rev and check_fwd_over_rev are both False",
        ),
        (
            lambda: LOOSE.gradcheck(lambda a: a, [Value(1.0)], check_forward_ad="yes"),
            TypeError,
            "gradcheck: check_forward_ad must be a bool, got str 'yes'",
        ),
        (
            lambda: LOOSE.check_grads(lambda a: a, [Value(1.0)], modes=("fwd", "backward")),
            ValueError,
            r"check_grads: modes may hold 'fwd' \(forward mode\) and 'rev' \(reverse mode\), "
            "got 'backward'",
        ),
        (
            lambda: LOOSE.check(lambda a: a, [Value(1.0)], modes=()),
            ValueError,
            "check: modes is empty",
        ),
        (
            lambda: LOOSE.check(lambda a: a, [Value(1.0)], modes=3),
            TypeError,
            "check: modes must be a sequence of 'fwd' and 'rev', got int 3",
        ),
    ],
)
def test_bad_mode_arguments_are_named(call: Callable[[], object], error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        call()


def test_one_mode_may_be_given_as_a_string_and_repeats_count_once() -> None:
    assert check(lambda a: a.exp(), [Value(0.5)], modes="fwd").modes == ("fwd",)
    assert check(lambda a: a.exp(), [Value(0.5)], modes=("rev", "fwd", "rev")).modes == (
        "rev",
        "fwd",
    )


@closing_line("gradcheck mutants in forward mode")
def _closing() -> str:
    total = sum(CAUGHT.values())
    if not total:
        return ""
    parts = ", ".join(f"{k} {n}" for k, n in sorted(CAUGHT.items()))
    return f"gradcheck mutants caught in forward mode: {total} in {len(CAUGHT)} classes: {parts}"
