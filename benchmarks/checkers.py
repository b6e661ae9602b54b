"""Section (g): gradcheck and gradgradcheck against the evaluations they must make."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any

import minigrad
from engines import COMPILED, TORCH
from harness import Target, fmt_ratio, fmt_time, progress, table, timed_runs
from suite import Bench, Prepare, no_setup
from workloads import manual_first, manual_second, random_leaves, ring

# (g) gradcheck.


def bench_gradcheck(bench: Bench, sizes: Sequence[int]) -> None:
    eps = 1e-6
    rows = []
    worst = 0.0
    for n in sizes:
        inputs = random_leaves(minigrad.Value, n, seed=n)
        kinds: list[tuple[str, Callable[..., Any], Callable[..., None], int, int]] = [
            ("gradcheck", minigrad.gradcheck, manual_first, 2 * n + 1, 1)
        ]
        if n <= 30:  # gradgradcheck costs O(N^2) reverse passes of O(N) each
            kinds.append(
                ("gradgradcheck", minigrad.gradgradcheck, manual_second, 2 * (2 * n + 1), n + 1)
            )
        for name, check, manual, evals, passes in kinds:
            progress(f"{name} N={n}")
            try:
                ok = check(ring, inputs)
            except Exception as exc:
                print(f"{name} raised on a correct function: {type(exc).__name__}: {exc}")
                continue

            def checked(
                check: Callable[..., Any] = check, inputs: list[Any] = inputs
            ) -> Callable[[], object]:
                return lambda: check(ring, inputs)

            def by_hand(
                manual: Callable[..., None] = manual, inputs: list[Any] = inputs
            ) -> Callable[[], object]:
                return lambda: manual(ring, inputs, eps)

            # A check at small N takes about a millisecond: more runs steady its median.
            runs = max(bench.reps, 51) if n <= 30 else bench.reps
            result = timed_runs([("check", checked), ("manual", by_hand)], runs)
            ratio = result["check"].over(result["manual"])
            if name == "gradcheck":
                worst = max(worst, ratio)
            rows.append(
                [
                    name,
                    n,
                    f"{evals} evaluations + {passes} reverse pass{'es' if passes > 1 else ''}",
                    fmt_time(result["check"].median),
                    fmt_time(result["manual"].median),
                    fmt_ratio(ratio),
                    "" if ok else "returned False",
                ]
            )
    if worst:
        bench.found.numbers["gradcheck"] = worst
    rows += _compiled_check(bench, [n for n in sizes if n <= 30])
    rows += _fast_mode(bench)
    rows += _versus_torch(bench, sizes)
    rows += _second_versus_torch(bench)
    header = ["check", "inputs N", "the work it must do", "median", "that work, done by hand"]
    print(table([*header, "ratio", ""], rows))
    print(
        "\nThe function: sum of tanh(x_i * x_(i+1)) around a ring of N inputs (3N ops), one "
        "output. 'By hand' is the least a checker can do, timed in the same process: "
        "evaluate the function at the inputs and at each input moved by +eps and -eps "
        "(2N + 1 evaluations), and one reverse pass per output with `minigrad.grad`; for "
        "gradgradcheck, that again for the gradient function (grad with create_graph=True, "
        "N outputs). minigrad's checkers run each reverse pass a second time, to test that "
        "backward is deterministic (nondet_tol), only through rules other than minigrad's "
        "own (the table's and the derivative rules its partials make); this function has "
        "none. Each ratio is the median over the rounds of the "
        "ratio within a round (the two cases run alternately). "
        f"`{COMPILED}(f).check()` checks generated code: the compiled loss and gradients "
        "against one eager pass (1e-12), then eager's gradients by gradcheck; its ratio is "
        "to gradcheck of the eager function alone. `torch.autograd.gradcheck` (when torch "
        "is installed) checks the same ring on N 0-d float64 tensors at its defaults (eps "
        "1e-6, atol 1e-5, rtol 1e-3: 2N evaluations and one backward per output); the ratio "
        "is minigrad's gradcheck per call over torch's, below 1 when minigrad's is faster. "
        "`gradgradcheck vs torch.autograd.gradgradcheck` checks sin(x0 + sum_i tanh(x_i) * x0) "
        "(the function of the issue that made it 10x slower) on N inputs, each at its "
        "defaults; the ratio is minigrad's over torch's."
    )


def _compiled_check(bench: Bench, sizes: Sequence[int]) -> list[list[object]]:
    """``minigrad.compile(ring).check()`` against ``gradcheck(ring)``: a row per N."""
    rows: list[list[object]] = []
    for n in sizes:
        inputs = random_leaves(minigrad.Value, n, seed=n)

        def loss(inputs: list[Any] = inputs) -> Any:
            return ring(*inputs)

        def eager(inputs: list[Any] = inputs) -> object:
            return minigrad.gradcheck(ring, inputs)

        step = minigrad.compile(loss)
        progress(f"{COMPILED} check N={n}")
        step.check()  # traced here, untimed
        cases = [("compiled", no_setup(step.check)), ("gradcheck", no_setup(eager))]
        result = timed_runs(cases, max(bench.reps, 51))
        work = "1 compiled + 1 eager pass, then gradcheck's work"
        rows.append(
            [
                f"{COMPILED}(f).check()",
                n,
                work,
                fmt_time(result["compiled"].median),
                f"gradcheck: {fmt_time(result['gradcheck'].median)}",
                fmt_ratio(result["compiled"].over(result["gradcheck"])),
                "",
            ]
        )
    return rows


def _fast_mode(bench: Bench) -> list[list[object]]:
    """gradcheck(fast_mode=True) against the exhaustive check at N = 100: one row."""
    n = 100
    inputs = random_leaves(minigrad.Value, n, seed=n)
    progress("gradcheck fast_mode N=100")
    try:
        report = minigrad.check(ring, inputs, fast_mode=True)
        fell_back = report.fell_back
        rest = len({e.wrt for e in report.entries if e.wrt >= 0})
    except Exception as exc:
        print(f"gradcheck(fast_mode=True) raised: {type(exc).__name__}: {exc}")
        bench.found.missing["fast_mode"] = "gradcheck(fast_mode=True) raised"
        return []

    def mode(fast: bool) -> Prepare:
        return no_setup(lambda: minigrad.gradcheck(ring, inputs, fast_mode=fast))

    result = timed_runs([("fast", mode(True)), ("exhaustive", mode(False))], bench.reps)
    speedup = result["exhaustive"].over(result["fast"])
    bench.found.numbers["fast_mode"] = speedup
    exhaustive = f"exhaustive: {fmt_time(result['exhaustive'].median)}"
    fast = fmt_time(result["fast"].median)
    work = "two directions: a tableau or two each + 1 reverse pass; the inputs they do not prove"
    note = (
        "fell back to every entry: the directions prove less than the weakest entry would"
        if fell_back
        else f"then {rest} of {n} inputs entry by entry: the directions prove 10 digits of "
        "the others' entries"
        if rest
        else ""
    )
    return [
        ["gradcheck fast_mode", n, work, fast, exhaustive, f"{fmt_ratio(speedup)} faster", note]
    ]


#: The sizes of the second-order comparison with torch.
SECOND_SIZES = (1, 2, 3, 5, 10)


def tanh_fan(*xs: Any) -> Any:
    """sin(x0 + sum_i tanh(x_i) * x0): second derivatives couple every input to x0."""
    x0 = xs[0]
    total = x0
    for x in xs[1:]:
        total = total + x.tanh() * x0
    return total.sin()


def _second_versus_torch(bench: Bench) -> list[list[object]]:
    """``minigrad.gradgradcheck`` against ``torch.autograd.gradgradcheck``: a row per N."""
    if not bench.has(TORCH):
        return []
    torch: Any = importlib.import_module("torch")
    rows: list[list[object]] = []
    slowest = 0.0
    for n in SECOND_SIZES:
        values = random_leaves(minigrad.Value, n, seed=n)
        tensors = tuple(
            torch.tensor(v.data, dtype=torch.float64, requires_grad=True) for v in values
        )
        progress(f"gradgradcheck vs torch N={n}")
        if not (minigrad.gradgradcheck(tanh_fan, values)
                and torch.autograd.gradgradcheck(tanh_fan, tensors)):  # fmt: skip
            print(f"a gradgradcheck returned False on tanh_fan at N={n}")
            continue

        def mine(values: list[Any] = values) -> object:
            return minigrad.gradgradcheck(tanh_fan, values)

        def theirs(tensors: tuple[Any, ...] = tensors) -> object:
            return torch.autograd.gradgradcheck(tanh_fan, tensors)

        result = timed_runs([("minigrad", no_setup(mine)), ("torch", no_setup(theirs))], 21)
        ratio = result["minigrad"].over(result["torch"])
        slowest = max(slowest, ratio)
        rows.append(
            [
                "gradgradcheck vs torch.autograd.gradgradcheck",
                n,
                "the same check, per call",
                fmt_time(result["minigrad"].median),
                f"torch: {fmt_time(result['torch'].median)}",
                fmt_ratio(ratio),
                "",
            ]
        )
    if slowest:
        bench.found.numbers["gradgradcheck torch"] = slowest
    return rows


CHECK_TARGETS = (
    Target(
        "gradcheck <= 1.2x its 2N+1 evaluations + reverse passes (worst N)", "gradcheck", "<=", 1.2
    ),
    Target(
        "gradgradcheck faster than torch's at N = 1, 2, 3, 5, 10 (slowest ratio)",
        "gradgradcheck torch",
        "<",
        1.0,
    ),
    Target(
        "gradcheck fast_mode >= 10x faster than exhaustive at N=100",
        "fast_mode",
        ">=",
        10,
        lambda m: f"{fmt_ratio(m['fast_mode'])} faster",
    ),
)


def _versus_torch(bench: Bench, sizes: Sequence[int]) -> list[list[object]]:
    """``minigrad.gradcheck`` against ``torch.autograd.gradcheck`` on the same ring, per call."""
    if not bench.has(TORCH):
        return []
    torch: Any = importlib.import_module("torch")

    rows: list[list[object]] = []
    for n in sizes:
        values = random_leaves(minigrad.Value, n, seed=n)
        tensors = tuple(
            torch.tensor(v.data, dtype=torch.float64, requires_grad=True) for v in values
        )
        progress(f"torch gradcheck N={n}")
        if not torch.autograd.gradcheck(ring, tensors):
            print(f"torch.autograd.gradcheck returned False on the ring at N={n}")
            continue

        def mine(values: list[Any] = values) -> object:
            return minigrad.gradcheck(ring, values)

        def theirs(tensors: tuple[Any, ...] = tensors) -> object:
            return torch.autograd.gradcheck(ring, tensors)

        runs = max(bench.reps, 21) if n <= 30 else bench.reps
        result = timed_runs([("minigrad", no_setup(mine)), ("torch", no_setup(theirs))], runs)
        ratio = result["minigrad"].over(result["torch"])
        bench.found.numbers[f"gradcheck torch {n}"] = ratio
        rows.append(
            [
                "gradcheck vs torch.autograd.gradcheck",
                n,
                "the same check, per call",
                fmt_time(result["minigrad"].median),
                f"torch: {fmt_time(result['torch'].median)}",
                fmt_ratio(ratio),
                "",
            ]
        )
    return rows
