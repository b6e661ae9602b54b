"""The mutant battery through compiled code: a wrong rule stays wrong, and is caught.

Every wrong rule of ``test_gradcheck_mutants`` (reused by import) is compiled
by :func:`minigrad.compile`, where a custom rule is called by reference from
the generated code. The compiled gradients must equal eager's wrong ones
(compilation neither hides nor changes a mistake), and ``step.check`` must
fail with eager's gradcheck naming the op: the compiled path is checked like
everything else. A mutant wrong only at second or third order has right first
derivatives, which is all compiled code computes, so ``step.check`` passes
it; ``grad`` refuses a compiled loss (see test_compile.py), so such a mistake
can only be met through the eager function.

The number of mutants caught is printed in pytest's terminal summary.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

import minigrad
import minigrad.compiler.loop
from minigrad import GradcheckError, Value
from minigrad.compiler.trace import Compiled, CompiledValue
from summary import closing_line
from test_gradcheck_mutants import MUTANTS, Mutant

#: Mutants caught through compiled code, per class.
CAUGHT: Counter[str] = Counter()

RTOL = 1e-12


def _compiled(mutant: Mutant, via: str) -> tuple[Compiled, tuple[Any, ...], list[Value]]:
    """A compiled function using the mutant, its arguments, and its parameters.

    "parameters": the point is held by parameters, the function takes no
    argument. "arguments": the point comes in as arguments, each shifted by a
    parameter at 0, so the parameters' gradients are the point's. "a batch":
    the same for three examples, which run as one loop.
    """
    if via == "parameters":
        params = mutant.inputs()
        return minigrad.compile(lambda: mutant.func(*params)), (), params
    shifts = [Value(0.0) for _ in mutant.point]
    if via == "a batch":

        def batch(rows: list[list[float]]) -> Value:
            outs = [mutant.func(*(w + x for w, x in zip(shifts, r, strict=True))) for r in rows]
            return sum(outs[1:], outs[0])

        return minigrad.compile(batch), ([list(mutant.point)] * 3,), shifts
    step = minigrad.compile(
        lambda *xs: mutant.func(*(w + x for w, x in zip(shifts, xs, strict=True)))
    )
    return step, mutant.point, shifts


def _grads(run: Callable[[], Value], params: list[Value]) -> tuple[Value, list[float]]:
    for p in params:
        p.grad = 0.0
    loss = run()
    loss.backward()
    return loss, [p.grad for p in params]


@pytest.mark.parametrize("via", ["parameters", "arguments", "a batch"])
@pytest.mark.parametrize("mutant", MUTANTS, ids=str)
def test_compiled_mutant_equals_eager_and_check_catches_it(
    mutant: Mutant, via: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(minigrad.compiler.loop, "LOOP_MIN_OPS", 2)
    step, args, params = _compiled(mutant, via)
    assert ("for gr," in step.program(*args).source) == (via == "a batch")
    loss, got = _grads(lambda: step(*args), params)
    assert isinstance(loss, CompiledValue)  # the generated code ran, not eager
    eager, want = _grads(lambda: step.fn(*args), params)
    assert abs(loss.data - eager.data) <= RTOL * abs(eager.data)
    for a, b in zip(got, want, strict=True):
        assert abs(a - b) <= RTOL * abs(b), (got, want)
    if mutant.order > 1:
        # Right at first order by design: the compiled gradients are right too.
        assert step.check(*args)
        return
    with pytest.raises(GradcheckError) as excinfo:
        step.check(*args)
    assert f"op {mutant.rule.name!r}" in str(excinfo.value)
    assert excinfo.value.report.order == 1
    CAUGHT[mutant.kind] += 1


@closing_line("compiled mutants")
def _closing() -> str:
    total = sum(CAUGHT.values())
    if not total:
        return ""
    parts = ", ".join(f"{k} {n}" for k, n in sorted(CAUGHT.items()))
    first_order = 3 * sum(m.order == 1 for m in MUTANTS)
    return (
        f"compiled mutants caught by step.check: {total} of {first_order} first-order "
        f"in {len(CAUGHT)} classes: {parts}"
    )
