"""The sections of the report, registered with their targets in one table: SECTIONS.

A section is a function ``(bench, sizes) -> None`` that prints its table and
footnote and puts the numbers its targets read into ``bench.found``; its row
in SECTIONS gives its letter, title, sizes (``--quick`` and full) and targets.
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable, Mapping, Sequence

import minigrad
from bounds import COVERAGE_TARGETS, FULL, QUICK, bench_coverage
from checkers import CHECK_TARGETS, bench_gradcheck
from engines import (
    BARE,
    CLOSURE,
    COMPILED,
    COMPILED_CUSTOM,
    FLOATS,
    HANDWRITTEN,
    MICROGRAD,
    MINIGRAD,
    TORCH,
    Engine,
    float_relu,
)
from footprint import (
    BYTES_TARGET,
    CYCLES_TARGET,
    IMPORT_TARGET,
    bench_cycles,
    bench_import,
    bench_memory,
)
from harness import (
    Case,
    Target,
    Timing,
    fmt_n,
    fmt_ratio,
    fmt_time,
    progress,
    stopwatch,
    table,
    timed_runs,
)
from sensitivity import SENSITIVITY_TARGETS, bench_sensitivity
from suite import Bench, Prepare, Section, no_setup
from workloads import (
    chain,
    flat,
    handwritten_step,
    mlp_loss,
    mlp_ops,
    mlp_problem,
    random_leaves,
    to_engine,
)

# (a) The MLP step.


def bench_mlp(bench: Bench, sizes: Sequence[int]) -> None:
    for name in (MICROGRAD, TORCH):
        if not bench.has(name):
            bench.found.missing[f"mlp {name}"] = "not installed"
    layers, xs, ys = mlp_problem()
    n_ops, n_values = mlp_ops(layers, xs, ys)
    n_params = len(flat(layers))

    # The same workload on every engine: the same loss and the same gradient.
    want_loss, want_grads = handwritten_step(layers, xs, ys)
    models = {e.name: to_engine(e.leaf, layers) for e in bench.engines}
    checks = []
    for e in bench.engines:
        loss = mlp_loss(models[e.name], xs, ys, e.relu)
        e.backward(loss)
        params = flat(models[e.name])
        got = [e.grad(p) for p in params]
        worst = max(abs(a - b) for a, b in zip(got, want_grads, strict=True))
        checks.append(f"{e.name} {abs(e.data(loss) - want_loss):.1e} / {worst:.1e}")
        for p in params:
            e.zero(p)
        del loss
    # minigrad.compile: traced, generated and compiled once, outside the timing.
    compiled_model = to_engine(minigrad.Value, layers)
    compiled_params = flat(compiled_model)
    value_relu = minigrad.Value.relu
    compiled = minigrad.compile(lambda xs, ys: mlp_loss(compiled_model, xs, ys, value_relu))
    loss, build = stopwatch(lambda: compiled(xs, ys))
    loss.backward()
    worst = max(abs(p.grad - b) for p, b in zip(compiled_params, want_grads, strict=True))
    checks.append(f"{COMPILED} {abs(loss.data - want_loss):.1e} / {worst:.1e}")
    del loss
    # The same with relu as a custom Rule: its functions called by reference.
    custom_model = to_engine(minigrad.Value, layers)
    custom_params = flat(custom_model)
    custom = minigrad.compile(lambda xs, ys: mlp_loss(custom_model, xs, ys, CUSTOM_RELU))
    loss = custom(xs, ys)
    loss.backward()
    worst = max(abs(p.grad - b) for p, b in zip(custom_params, want_grads, strict=True))
    checks.append(f"{COMPILED_CUSTOM} {abs(loss.data - want_loss):.1e} / {worst:.1e}")
    del loss
    # The same with relu written micrograd's way, a closure on each node.
    closure_model = to_engine(minigrad.Value, layers)
    closure_params = flat(closure_model)
    loss = mlp_loss(closure_model, xs, ys, closure_relu)
    loss.backward()
    worst = max(abs(p.grad - b) for p, b in zip(closure_params, want_grads, strict=True))
    checks.append(f"{CLOSURE} {abs(loss.data - want_loss):.1e} / {worst:.1e}")
    del loss
    print(
        f"One step builds {n_ops:,} ops ({n_values:,} minigrad Values with the "
        f"{n_params:,} parameters). Largest difference in loss / gradient "
        f"from the hand-written pass: {'; '.join(checks)}.\n"
    )

    def step(e: Engine) -> Callable[[], None]:
        model = models[e.name]
        params = flat(model)
        relu, zero, backward = e.relu, e.zero, e.backward

        def run() -> None:
            for p in params:
                zero(p)
            backward(mlp_loss(model, xs, ys, relu))

        return run

    def compiled_step() -> None:
        for p in compiled_params:
            p.grad = 0.0
        compiled(xs, ys).backward()

    def custom_step() -> None:
        for p in custom_params:
            p.grad = 0.0
        custom(xs, ys).backward()

    def closure_step() -> None:
        for p in closure_params:
            p.grad = 0.0
        mlp_loss(closure_model, xs, ys, closure_relu).backward()

    cases: list[Case] = [
        (FLOATS, no_setup(lambda: mlp_loss(layers, xs, ys, float_relu))),
        (HANDWRITTEN, no_setup(lambda: handwritten_step(layers, xs, ys))),
        *((e.name, no_setup(step(e))) for e in bench.engines),
        (COMPILED, no_setup(compiled_step)),
        (COMPILED_CUSTOM, no_setup(custom_step)),
        (CLOSURE, no_setup(closure_step)),
    ]
    # Each engine runs its steps back to back, with the collector on, as in a
    # training loop: micrograd's graphs are reference cycles, and collecting
    # them is part of its step. Hence the untimed warm-up step in each round.
    result = timed_runs(cases, bench.reps, warm_up=True, label="MLP step")
    base = result[MINIGRAD]
    rows = []
    for name, timing in result.items():
        ratio = timing.over(base)
        rows.append(
            [
                name,
                fmt_time(timing.median),
                fmt_time(statistics.fmean(timing.times)),
                fmt_time(timing.median / n_ops),
                fmt_ratio(ratio),
                fmt_ratio(1.0 / ratio),
            ]
        )
        bench.found.numbers[f"mlp {name}"] = ratio
        bench.found.numbers[f"floor {name}"] = timing.over(result[BARE])
    header = ["engine", "median / step", "mean / step", "per op", "time vs minigrad"]
    print(table([*header, "minigrad speed-up"], rows))
    print(
        f"\nA step: zero the {n_params} parameters' grads, forward, backward; "
        "the graph is freed when the step returns (its freeing is timed). "
        f"{bench.reps} rounds; in each, every engine runs an untimed step and then the "
        "timed one; gc on. 'per op' divides by the minigrad op count. The two ratio "
        "columns are medians over the rounds of the ratio within a round. "
        f"{COMPILED}: the step `compile(mlp_loss)(xs, ys).backward()`, traced, "
        f"generated and compiled once before the timing (the first call, "
        f"{fmt_time(build)}, untimed); xs and ys are its arguments. {COMPILED_CUSTOM}: the "
        "same with relu a custom `Rule`, whose forward and partial the generated code "
        f"calls by reference. {CLOSURE}: minigrad's Values with relu written as micrograd "
        "writes it, `out = Value(..., (x,), 'ReLU')` and `out._backward = _backward`."
    )
    bench.found.numbers["mlp ops"] = n_ops
    bench.found.numbers["mlp minigrad / floats"] = base.over(result[FLOATS])
    bench.found.numbers["floor / floats"] = result[BARE].over(result[FLOATS])
    bench.found.numbers["mlp compiled / floats"] = result[COMPILED].over(result[FLOATS])
    bench.found.numbers["mlp compiled build"] = build
    bench.found.numbers["mlp compiled custom / floats"] = result[COMPILED_CUSTOM].over(
        result[FLOATS]
    )


def _faster_than(engine: str, label: str) -> Target:
    def show(m: Mapping[str, float]) -> str:
        return (
            f"{fmt_ratio(m[f'mlp {engine}'])} faster (floor row: {fmt_ratio(m[f'floor {engine}'])})"
        )

    return Target(f"MLP step >= 10x faster than {label}", f"mlp {engine}", ">=", 10, show)


def _times_floats(m: Mapping[str, float]) -> str:
    return f"{fmt_ratio(m['mlp minigrad / floats'])} (floor row: {fmt_ratio(m['floor / floats'])})"


MLP_TITLE = "MLP step: 2-16-16-1 relu MLP, batch 100, squared loss + L2"
MLP_TARGETS = (
    _faster_than(MICROGRAD, "micrograd"),
    _faster_than(TORCH, "torch 0-d"),
    Target(
        "MLP step <= 8x the plain-float forward", "mlp minigrad / floats", "<=", 8, _times_floats
    ),
    Target(
        "compiled MLP step <= 0.5x the plain-float forward",
        "mlp compiled / floats",
        "<=",
        0.5,
        lambda m: (
            f"{fmt_ratio(m['mlp compiled / floats'])} "
            f"({fmt_ratio(1.0 / m[f'mlp {COMPILED}'])} faster than eager minigrad"
            + (
                f", {fmt_ratio(m[f'mlp {MICROGRAD}'] / m[f'mlp {COMPILED}'])} than micrograd)"
                if f"mlp {MICROGRAD}" in m
                else ")"
            )
        ),
    ),
    Target(
        "compiled MLP step, relu a custom Rule, <= 2x the plain-float forward",
        "mlp compiled custom / floats",
        "<=",
        2,
    ),
)


def closure_relu(x: minigrad.Value) -> minigrad.Value:
    """relu as micrograd writes it: a node made with its child and a ``_backward`` closure."""
    out = minigrad.Value(0.0 if x.data < 0 else x.data, (x,), "ReLU")

    def _backward() -> None:
        x.grad += (out.data > 0) * out.grad

    out._backward = _backward
    return out


#: relu as a custom rule: the compiled code calls these two functions.
CUSTOM_RELU = minigrad.Rule(
    "custom_relu",
    lambda x: x if x > 0.0 else 0.0,
    (lambda x, out: 1.0 if x > 0.0 else 0.0,),
    math="Max(x, 0)",
    avoid=(0.0,),
)


# (b) The chain, and (c) sum(): time per op at growing sizes.


def chain_case(engine: Engine, depth: int) -> Prepare:
    relu, backward, leaf = engine.relu, engine.backward, engine.leaf

    def prepare() -> Callable[[], object]:
        x0 = leaf(1.0)

        def run() -> object:
            x = chain(x0, depth, relu)
            backward(x)
            return x  # freed after the clock stops

        return run

    return prepare


def float_chain(depth: int) -> Prepare:
    return no_setup(lambda: chain(1.0, depth, float_relu))


def sum_case(engine: Engine, n: int) -> Prepare:
    leaf, backward = engine.leaf, engine.backward

    def prepare() -> Callable[[], object]:
        leaves = random_leaves(leaf, n, seed=n)

        def run() -> object:
            total = sum(leaves)
            backward(total)
            return total

        return run

    return prepare


def float_sum(n: int) -> Prepare:
    def prepare() -> Callable[[], object]:
        leaves = random_leaves(float, n, seed=n)
        return lambda: sum(leaves)

    return prepare


def sized_reps(reps: int, ops: int) -> int:
    """Fewer runs for the big sizes: they are slow and vary less."""
    if ops >= 1_000_000:
        return min(reps, 3)
    if ops >= 100_000:
        return min(reps, 5)
    return reps


def repeated(prepare: Prepare, times: int) -> Prepare:
    """A case that runs ``times`` prepared runs of another, back to back."""

    def prepare_all() -> Callable[[], object]:
        runs = [prepare() for _ in range(times)]
        return lambda: [run() for run in runs]  # the results are freed after the clock stops

    return prepare_all


def scaling_table(
    bench: Bench,
    sizes: Sequence[int],
    ops_of: Callable[[int], int],
    case_of: Callable[[Engine, int], Prepare],
    float_case: Callable[[int], Prepare],
    label: str,
    paired: tuple[int, int] | None = None,
) -> float | None:
    """Print the time per op of every engine at every size.

    With ``paired=(big, small)``, minigrad at size ``small`` is timed again in
    the rounds of size ``big``, right after it (as many graphs as make a tenth
    of the big one per run), and the per-op ratio big / small is returned: the
    median over the rounds of the ratio within a round, since the machine's
    speed drifts between rows. In brackets in the table, each engine's median
    relative to minigrad's.
    """
    engines = bench.engines
    failed: dict[str, int] = {}
    rows = []
    ratio = None
    for n in sizes:
        ops = ops_of(n)
        progress(f"{label} {fmt_n(n)}")
        cases: list[Case] = [(FLOATS, float_case(n))]
        slow: list[Case] = []
        for e in engines:
            if e.name not in failed:
                (slow if e.slow and ops >= 1_000_000 else cases).append((e.name, case_of(e, n)))
        small_ops = 0
        if paired is not None and n == paired[0]:
            repeat = max(1, ops // ops_of(paired[1]) // 10)
            small_ops = repeat * ops_of(paired[1])
            cases.append(("paired", repeated(case_of(engines[0], paired[1]), repeat)))
        result = timed_runs(cases, sized_reps(bench.reps, ops))
        result.update(timed_runs(slow, 1))
        base = result[MINIGRAD]
        if small_ops:
            ratio = base.over(result["paired"]) * small_ops / ops
        row: list[object] = [fmt_n(n), f"{ops:,}"]
        for name in [FLOATS, *(e.name for e in engines)]:
            if name in failed:
                row.append(f"RecursionError (as at {fmt_n(failed[name])})")
            elif result[name].failure:
                failed[name] = n
                row.append(result[name].failure)
            else:
                row.append(_per_op_cell(result[name], base, ops, name == MINIGRAD))
        row.append(fmt_time(base.median))
        rows.append(row)
    header = [label, "ops", "plain floats (forward only)", *(e.name for e in engines)]
    print(table([*header, "minigrad total"], rows))
    return ratio


def _per_op_cell(t: Timing, base: Timing, ops: int, is_base: bool) -> str:
    cell = fmt_time(t.median / ops)
    if not is_base:
        cell += f" ({fmt_ratio(t.median / base.median)})"
    return cell + (" [1 run]" if len(t.times) == 1 else "")


def bench_chain(bench: Bench, depths: Sequence[int]) -> None:
    both = 10_000 in depths and 1_000_000 in depths
    ratio = scaling_table(
        bench,
        depths,
        lambda d: 3 * d,
        chain_case,
        float_chain,
        "depth",
        paired=(1_000_000, 10_000) if both else None,
    )
    print(
        "\nPer op: the median time of forward + backward over 3 * depth ops; in brackets, "
        "the time relative to minigrad. The graph is freed after the clock stops. "
        "micrograd's recursive topological sort overflows Python's recursion limit "
        f"({sys.getrecursionlimit()}, not raised here) beyond about 1,000 nodes; an engine "
        "that failed at a depth is not run at larger ones."
    )
    if ratio is None:
        bench.found.missing["chain"] = "depths 1e4 and 1e6 not both run (--quick)"
        return
    print(
        f"\nminigrad's time per op at depth 1e6 is {fmt_ratio(ratio)} that at depth 1e4: "
        "the median over the rounds of the ratio within a round, where ten chains of depth "
        "1e4 run right after each chain of 1e6, since the machine's speed can drift between "
        "the rows above."
    )
    bench.found.numbers["chain"] = ratio


CHAIN_TARGET = Target("chain per-op time at depth 1e6 <= 1.5x that at 1e4", "chain", "<=", 1.5)


def bench_sum(bench: Bench, sizes: Sequence[int]) -> None:
    scaling_table(bench, sizes, lambda n: n, sum_case, float_sum, "leaves")
    print(
        "\nPython's builtin sum(): n additions in a chain (0 + x0 + x1 + ...). The leaves "
        "are made before the clock starts."
    )


# The table of sections.


SECTIONS: tuple[Section, ...] = (
    Section("a", MLP_TITLE, bench_mlp, quick=(), full=(), targets=MLP_TARGETS),
    Section(
        "b",
        "Chain x = relu(x * 1.0001 + 0.001): time per op, forward + backward",
        bench_chain,
        quick=(100, 1_000, 10_000),
        full=(100, 1_000, 10_000, 100_000, 1_000_000),
        targets=(CHAIN_TARGET,),
    ),
    Section(
        "c",
        "sum() of n leaves: time per op, forward + backward",
        bench_sum,
        quick=(10_000,),
        full=(100_000, 1_000_000),
    ),
    Section(
        "d",
        "Bytes per graph node (tracemalloc)",
        bench_memory,
        quick=(10_000,),  # the depth of the chain; the MLP graph is the same
        full=(100_000,),
        targets=(BYTES_TARGET,),
    ),
    Section(
        "e",
        "Graphs freed by reference counting alone",
        bench_cycles,
        quick=(2**14,),  # the leaves of the tree
        full=(2**19,),
        targets=(CYCLES_TARGET,),
    ),
    Section(
        "f",
        "Import time in a fresh interpreter",
        bench_import,
        quick=(5,),  # the runs per median
        full=(15,),
        targets=(IMPORT_TARGET,),
    ),
    Section(
        "g",
        "gradcheck and gradgradcheck against the evaluations they must make",
        bench_gradcheck,
        quick=(10, 30),
        full=(10, 30, 100),
        targets=CHECK_TARGETS,
    ),
    Section(
        "h",
        "An error bound you can stand on: the numerical derivative's bound against the exact one",
        bench_coverage,
        quick=QUICK,
        full=FULL,
        targets=COVERAGE_TARGETS,
        timed=False,
    ),
    Section(
        "i",
        "Sensitivity, side by side: the smallest rule error minigrad, PyTorch and JAX catch",
        bench_sensitivity,
        quick=(1,),  # a few points per function
        full=(0,),
        targets=SENSITIVITY_TARGETS,
        timed=False,
    ),
)
