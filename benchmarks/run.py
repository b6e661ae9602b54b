"""Benchmarks: minigrad against micrograd, plain floats and torch 0-d tensors.

One command; every engine runs in the same process, on the same workloads;
each figure is the median of several runs::

    python benchmarks/run.py              # full run (15-30 minutes on 2 cores)
    python benchmarks/run.py --quick      # smoke run of every section, small sizes
    python benchmarks/run.py --reps 21    # more runs per median
    python benchmarks/run.py --only a,e   # some sections only
    python benchmarks/run.py --clock wall # wall time instead of CPU time

The report is Markdown on stdout (progress goes to stderr when it is a
terminal): a table per section, then every target with its measured ratio
and whether it is met. The sections:

    a  MLP training step (2-16-16-1 relu MLP, batch 100, squared loss + L2)
    b  a deep chain x = relu(x * 1.0001 + 0.001): time per op
    c  sum() of many leaves
    d  bytes per graph node (tracemalloc)
    e  graphs freed by reference counting alone: what gc.collect() finds
    f  import time in a fresh interpreter
    g  the cost of gradcheck and gradgradcheck, and of fast_mode

Only the standard library is needed. micrograd (``pip install -e '.[bench]'``)
and torch are optional; a missing one is named in a line and skipped. This
file is not a test, and pytest does not collect it.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import gc
import importlib
import itertools
import os
import platform
import random
import statistics
import subprocess
import sys
import time
import tracemalloc
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

import minigrad

#: The clock every timing reads; ``--clock wall`` makes it ``time.perf_counter``.
CLOCKS: dict[str, Callable[[], float]] = {"cpu": time.process_time, "wall": time.perf_counter}
clock = CLOCKS["cpu"]

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The MLP workload of micrograd's demo: 2 inputs, two hidden relu layers of
# 16, one linear output; a batch of 100 points; squared loss + L2.
SIZES = (2, 16, 16, 1)
BATCH = 100
ALPHA = 1e-4

MINIGRAD = "minigrad"
BARE = "floor: bare node per op"
MICROGRAD = "micrograd"
TORCH = "torch 0-d float64"
FLOATS = "plain floats, forward only"
HANDWRITTEN = "plain floats, hand-written reverse pass"

# Engines: the same user code runs on each, through these few hooks.


@dataclass(frozen=True)
class Engine:
    """How one autograd library makes a leaf, applies relu and runs backward."""

    name: str
    version: str
    leaf: Callable[[float], Any]
    relu: Callable[[Any], Any]
    backward: Callable[[Any], None]
    zero: Callable[[Any], None]
    grad: Callable[[Any], float]
    data: Callable[[Any], float]
    #: The nodes a node was made from, for counting a graph's nodes.
    children: Callable[[Any], Sequence[Any]] | None = None
    #: Run once only at the sizes of a million ops and more (it takes minutes).
    slow: bool = False


def _minigrad_engine() -> Engine:
    value = minigrad.Value

    def zero(p: Any) -> None:
        p.grad = 0.0

    return Engine(
        name=MINIGRAD,
        version=minigrad.__version__,
        leaf=value,
        relu=value.relu,
        backward=value.backward,
        zero=zero,
        grad=lambda p: float(p.grad),
        data=lambda v: float(v.data),
        children=lambda v: v.parents,
    )


def _micrograd_engine() -> Engine | None:
    try:
        micro_value = importlib.import_module("micrograd.engine").Value
    except ImportError:
        return None

    def zero(p: Any) -> None:
        p.grad = 0

    return Engine(
        name=MICROGRAD,
        version=_dist_version("micrograd"),
        leaf=micro_value,
        relu=micro_value.relu,
        backward=micro_value.backward,
        zero=zero,
        grad=lambda p: float(p.grad),
        data=lambda v: float(v.data),
        children=lambda v: tuple(v._prev),
    )


def _torch_engine() -> Engine | None:
    try:
        with warnings.catch_warnings():
            # torch warns when numpy is missing; 0-d tensors do not need it.
            warnings.simplefilter("ignore")
            torch = importlib.import_module("torch")
    except ImportError:
        return None
    f64 = torch.float64

    def leaf(x: float) -> Any:
        return torch.tensor(x, dtype=f64, requires_grad=True)

    def zero(p: Any) -> None:
        p.grad = None

    def grad(p: Any) -> float:
        return 0.0 if p.grad is None else float(p.grad.item())

    return Engine(
        name=TORCH,
        version=f"{torch.__version__} ({torch.get_num_threads()} threads)",
        leaf=leaf,
        relu=torch.relu,
        backward=lambda v: v.backward(),
        zero=zero,
        grad=grad,
        data=lambda v: float(v.item()),
        slow=True,
    )


_bare_new = object.__new__


class Bare:
    """The least an engine that makes one Python object per op can do.

    Not a library: a measuring stick for the targets. A node has six slots
    (data, grad, two arguments, an op code, a traversal mark). There is no
    argument checking, no finiteness check, no rule table, no labels and no
    create_graph, and it knows only the five ops the workloads use. Its
    backward is minigrad's iterative sort (a depth-first search that marks
    nodes through a slot) and a loop with the partials written inline. What
    minigrad costs beyond this row is the price of its features; what this
    row costs beyond plain floats is the price of a graph of Python objects
    in this interpreter.
    """

    __slots__ = ("a", "b", "data", "grad", "mark", "op")

    data: float
    grad: float
    a: Any  # a Bare, or None for a leaf
    b: Any  # a Bare, a number, or None
    mark: object
    op: int

    def __init__(self, data: float) -> None:
        self.data = data
        self.grad = 0.0
        self.a = self.b = self.mark = None
        self.op = 0

    # Each op builds its node inline (no call), the fastest way to make one.

    def __add__(self, other: Any) -> Bare:
        y = other.data if type(other) is Bare else other
        node = _bare_new(Bare)
        node.data = self.data + y
        node.grad = 0.0
        node.a = self
        node.b = other
        node.op = 1
        node.mark = None
        return node

    __radd__ = __add__

    def __mul__(self, other: Any) -> Bare:
        y = other.data if type(other) is Bare else other
        node = _bare_new(Bare)
        node.data = self.data * y
        node.grad = 0.0
        node.a = self
        node.b = other
        node.op = 2
        node.mark = None
        return node

    __rmul__ = __mul__

    def __sub__(self, other: float) -> Bare:
        node = _bare_new(Bare)
        node.data = self.data - other
        node.grad = 0.0
        node.a = self
        node.b = None
        node.op = 3
        node.mark = None
        return node

    def __pow__(self, other: float) -> Bare:
        if other != 2.0:
            raise NotImplementedError("Bare knows squares only")
        node = _bare_new(Bare)
        node.data = self.data * self.data
        node.grad = 0.0
        node.a = self
        node.b = None
        node.op = 4
        node.mark = None
        return node

    def relu(self) -> Bare:
        x = self.data
        node = _bare_new(Bare)
        node.data = x if x > 0.0 else 0.0
        node.grad = 0.0
        node.a = self
        node.b = None
        node.op = 5
        node.mark = None
        return node

    def backward(self) -> None:
        seen, done = object(), object()
        order: list[Bare] = []
        stack = [self]
        while stack:
            node = stack.pop()
            mark = node.mark
            if mark is done:
                continue
            if mark is not seen:
                a, b = node.a, node.b
                wait_a = type(a) is Bare and a.mark is not done
                wait_b = type(b) is Bare and b.mark is not done
                if wait_a or wait_b:
                    node.mark = seen
                    stack.append(node)
                    if wait_a:
                        stack.append(a)
                    if wait_b:
                        stack.append(b)
                    continue
            node.mark = done
            order.append(node)
        self.grad = 1.0
        for node in reversed(order):
            g = node.grad
            if not g:
                continue
            op, a, b = node.op, node.a, node.b
            if op == 1:
                a.grad += g
                if type(b) is Bare:
                    b.grad += g
            elif op == 2:
                if type(b) is Bare:
                    a.grad += g * b.data
                    b.grad += g * a.data
                else:
                    a.grad += g * b
            elif op == 3:
                a.grad += g
            elif op == 4:
                a.grad += g * 2.0 * a.data
            elif op == 5 and a.data > 0.0:
                a.grad += g


def _bare_engine() -> Engine:
    def zero(p: Any) -> None:
        p.grad = 0.0

    return Engine(
        name=BARE,
        version="",
        leaf=Bare,
        relu=Bare.relu,
        backward=Bare.backward,
        zero=zero,
        grad=lambda p: float(p.grad),
        data=lambda v: float(v.data),
        children=lambda v: tuple(p for p in (v.a, v.b) if type(p) is Bare),
    )


def _dist_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "?"


def float_relu(x: float) -> float:
    """relu on a plain float, called the way the engines' relu is."""
    return x if x > 0.0 else 0.0


# Timing.


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """The collector off, for a measurement it must not disturb."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def progress(msg: str) -> None:
    if sys.stderr.isatty():
        print(f"  ... {msg}", file=sys.stderr, flush=True)


@dataclass
class Timing:
    """The times of one case; ``failure`` names what it raised, if it did."""

    times: list[float] = field(default_factory=list)
    failure: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.times)


Case = tuple[str, Callable[[], Callable[[], object]]]


def timed_runs(cases: Sequence[Case], reps: int) -> dict[str, Timing]:
    """Run each case ``reps`` times, interleaved; a case is ``prepare() -> run``.

    Only ``run()`` is timed. Its result is dropped after the clock stops, and
    ``gc.collect()`` runs, untimed, before each run, so that no case pays for
    the garbage of another. The collector stays on while the clock runs.
    A RecursionError is recorded as the case's result, not raised.
    """
    out = {name: Timing() for name, _ in cases}
    for _ in range(reps):
        for name, prepare in cases:
            timing = out[name]
            if timing.failure:
                continue
            run = prepare()
            gc.collect()
            t0 = clock()
            try:
                result = run()
            except RecursionError:
                timing.failure = "RecursionError"
                continue
            timing.times.append(clock() - t0)
            del result, run
    return out


# Reporting.


@dataclass
class Report:
    """What the sections found; the targets are read from it at the end."""

    numbers: dict[str, float] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def fmt_time(seconds: float) -> str:
    if seconds >= 1.0:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    if seconds >= 1e-6:
        return f"{seconds * 1e6:.2f} µs"
    return f"{seconds * 1e9:.0f} ns"


def fmt_ratio(x: float) -> str:
    return f"{x:.2f}x" if x < 10 else f"{x:.1f}x"


def fmt_n(n: int) -> str:
    """1000 -> '1e3'; a number that is not a power of ten keeps its digits."""
    if n >= 10 and 10 ** (len(str(n)) - 1) == n:
        return f"1e{len(str(n)) - 1}"
    return f"{n:,}"


def section(title: str) -> None:
    print(f"\n## {title}\n", flush=True)


def count_nodes(root: Any, children: Callable[[Any], Sequence[Any]]) -> int:
    """Every distinct node reachable from ``root`` (iterative: any depth)."""
    seen = {id(root)}
    stack = [root]
    while stack:
        for child in children(stack.pop()):
            if id(child) not in seen:
                seen.add(id(child))
                stack.append(child)
    return len(seen)


# (a) The MLP step.

#: Per layer, the weight rows and the biases: floats, or one engine's leaves.
Layers = list[tuple[list[list[Any]], list[Any]]]


def make_layers(rng: random.Random) -> Layers:
    """Weights uniform in (-1, 1) and biases 0, as micrograd's ``nn.Neuron``."""
    layers = []
    for nin, nout in itertools.pairwise(SIZES):
        w_rows = [[rng.uniform(-1.0, 1.0) for _ in range(nin)] for _ in range(nout)]
        layers.append((w_rows, [0.0] * nout))
    return layers


def make_data(rng: random.Random, n: int) -> tuple[list[list[float]], list[float]]:
    """Points in the square (-2, 2)^2, labelled +1 inside a circle, -1 outside."""
    xs = [[rng.uniform(-2.0, 2.0), rng.uniform(-2.0, 2.0)] for _ in range(n)]
    ys = [1.0 if a * a + b * b < 2.0 else -1.0 for a, b in xs]
    return xs, ys


def to_engine(engine: Engine, layers: Layers) -> Layers:
    return [
        ([[engine.leaf(w) for w in row] for row in w_rows], [engine.leaf(b) for b in bs])
        for w_rows, bs in layers
    ]


def flat(layers: Layers) -> list[Any]:
    """Every parameter: per layer, the weights row by row, then the biases."""
    return [p for w_rows, bs in layers for p in [*(p for row in w_rows for p in row), *bs]]


def mlp_loss(layers: Layers, xs: list[list[float]], ys: list[float], relu: Any) -> Any:
    """micrograd's MLP and demo loss, written once for every engine and for floats.

    A neuron is ``sum((wi * xi for wi, xi in zip(w, x)), b)``, as in
    micrograd's ``nn.Neuron``; hidden layers apply relu, the last is linear.
    The loss is the mean squared error plus ``ALPHA`` times the sum of the
    squared parameters.
    """
    last = len(layers) - 1
    errors = []
    for x, y in zip(xs, ys, strict=True):
        h: list[Any] = x
        for i, (w_rows, bs) in enumerate(layers):
            acts = [
                sum((wi * xi for wi, xi in zip(w, h, strict=True)), b)
                for w, b in zip(w_rows, bs, strict=True)
            ]
            h = acts if i == last else [relu(a) for a in acts]
        errors.append((h[0] - y) ** 2)
    data_loss = sum(errors) * (1.0 / len(errors))
    reg_loss = ALPHA * sum(p * p for p in flat(layers))
    return data_loss + reg_loss


def handwritten_step(
    layers: Layers, xs: list[list[float]], ys: list[float]
) -> tuple[float, list[float]]:
    """The loss of :func:`mlp_loss` and its gradient, by a reverse pass written by hand.

    The floor for any autograd on Python floats: the same forward, and the
    backward of each layer written out as loops, with no graph at all.
    """
    last = len(layers) - 1
    n = len(xs)
    g_ws = [[[0.0] * len(row) for row in w_rows] for w_rows, _ in layers]
    g_bs = [[0.0] * len(bs) for _, bs in layers]
    total = 0.0
    for x, y in zip(xs, ys, strict=True):
        hs = [x]
        h = x
        for i, (w_rows, bs) in enumerate(layers):
            acts = [
                sum((wi * xi for wi, xi in zip(w, h, strict=True)), b)
                for w, b in zip(w_rows, bs, strict=True)
            ]
            h = acts if i == last else [a if a > 0.0 else 0.0 for a in acts]
            hs.append(h)
        d = h[0] - y
        total += d * d
        g = [2.0 * d / n]
        for i in range(last, -1, -1):
            w_rows = layers[i][0]
            h_in, h_out = hs[i], hs[i + 1]
            g_w, g_b = g_ws[i], g_bs[i]
            g_in = [0.0] * len(h_in)
            for j, gj in enumerate(g):
                if i != last and h_out[j] <= 0.0:
                    continue  # the relu was off: nothing flows back
                g_b[j] += gj
                w, gw = w_rows[j], g_w[j]
                for k, hk in enumerate(h_in):
                    gw[k] += gj * hk
                    g_in[k] += gj * w[k]
            g = g_in
    params = flat(layers)
    grads = flat(list(zip(g_ws, g_bs, strict=True)))
    reg = sum(p * p for p in params)
    grads = [g + 2.0 * ALPHA * p for g, p in zip(grads, params, strict=True)]
    return total / n + ALPHA * reg, grads


def mlp_ops(layers: Layers, xs: list[list[float]], ys: list[float]) -> tuple[int, int]:
    """The ops of one MLP step and the Values of its graph, counted on minigrad."""
    graph = minigrad.toposort(
        [mlp_loss(to_engine(_minigrad_engine(), layers), xs, ys, minigrad.Value.relu)]
    )
    return sum(1 for v in graph if v.op), len(graph)


def bench_mlp(engines: list[Engine], reps: int, report: Report) -> None:
    section("(a) MLP step: 2-16-16-1 relu MLP, batch 100, squared loss + L2")
    rng = random.Random(0)
    layers = make_layers(rng)
    xs, ys = make_data(rng, BATCH)
    n_ops, n_values = mlp_ops(layers, xs, ys)
    n_params = len(flat(layers))

    # The same workload on every engine: the same loss and the same gradient.
    want_loss, want_grads = handwritten_step(layers, xs, ys)
    models = {e.name: to_engine(e, layers) for e in engines}
    checks = []
    for e in engines:
        loss = mlp_loss(models[e.name], xs, ys, e.relu)
        e.backward(loss)
        params = flat(models[e.name])
        got = [e.grad(p) for p in params]
        worst = max(abs(a - b) for a, b in zip(got, want_grads, strict=True))
        checks.append(f"{e.name} {abs(e.data(loss) - want_loss):.1e} / {worst:.1e}")
        for p in params:
            e.zero(p)
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

    cases: list[tuple[str, Callable[[], object]]] = [
        (FLOATS, lambda: mlp_loss(layers, xs, ys, float_relu)),
        (HANDWRITTEN, lambda: handwritten_step(layers, xs, ys)),
        *((e.name, step(e)) for e in engines),
    ]
    # Each engine runs its steps back to back, with the collector on, as in a
    # training loop: micrograd's graphs are reference cycles, and collecting
    # them is part of its step. So in each round every engine runs one
    # untimed step, then a timed one that also pays for collecting the
    # first's garbage. The machine's speed drifts over minutes, so the ratios
    # are medians of the ratios within a round, not ratios of medians.
    times: dict[str, list[float]] = {name: [] for name, _ in cases}
    for r in range(reps):
        for name, run in cases:
            progress(f"MLP step, round {r + 1}/{reps}: {name}")
            gc.collect()
            run()  # warm-up
            t0 = clock()
            run()
            times[name].append(clock() - t0)
    medians = {name: statistics.median(ts) for name, ts in times.items()}

    def paired(name: str, base: str) -> float:
        """The median over the rounds of name's step time / base's."""
        return statistics.median(t / b for t, b in zip(times[name], times[base], strict=True))

    ratios = {name: paired(name, MINIGRAD) for name in times}
    rows = []
    for name, ts in times.items():
        m = medians[name]
        rows.append(
            [
                name,
                fmt_time(m),
                fmt_time(statistics.fmean(ts)),
                fmt_time(m / n_ops),
                fmt_ratio(ratios[name]),
                fmt_ratio(1.0 / ratios[name]),
            ]
        )
    print(
        table(
            [
                "engine",
                "median / step",
                "mean / step",
                "per op",
                "time vs minigrad",
                "minigrad speed-up",
            ],
            rows,
        )
    )
    print(
        f"\nA step: zero the {n_params} parameters' grads, forward, backward; "
        "the graph is freed when the step returns (its freeing is timed). "
        f"{reps} rounds; in each, every engine runs an untimed step and then the timed "
        "one; gc on. 'per op' divides by the minigrad op count. The two ratio columns "
        "are medians over the rounds of the ratio within a round."
    )
    # For the targets: step times relative to minigrad's, and to the floor row's.
    report.numbers["mlp floats"] = ratios[FLOATS]
    for e in engines:
        report.numbers[f"mlp {e.name}"] = ratios[e.name]
        report.numbers[f"floor {e.name}"] = paired(e.name, BARE)
    report.numbers["floor floats"] = paired(FLOATS, BARE)


# (b) The chain.


def chain_case(engine: Engine, depth: int) -> Callable[[], Callable[[], object]]:
    relu, backward, leaf = engine.relu, engine.backward, engine.leaf

    def prepare() -> Callable[[], object]:
        x0 = leaf(1.0)

        def run() -> object:
            x = x0
            for _ in range(depth):
                x = relu(x * 1.0001 + 0.001)
            backward(x)
            return x  # freed after the clock stops

        return run

    return prepare


def float_chain(depth: int) -> Callable[[], Callable[[], object]]:
    def run() -> object:
        x = 1.0
        for _ in range(depth):
            x = float_relu(x * 1.0001 + 0.001)
        return x

    return lambda: run


def sized_reps(reps: int, ops: int) -> int:
    """Fewer runs for the big sizes: they are slow and vary less."""
    if ops >= 1_000_000:
        return min(reps, 3)
    if ops >= 100_000:
        return min(reps, 5)
    return reps


def scaling_table(
    engines: list[Engine],
    sizes: Sequence[int],
    ops_of: Callable[[int], int],
    case_of: Callable[[Engine, int], Callable[[], Callable[[], object]]],
    float_case: Callable[[int], Callable[[], Callable[[], object]]],
    reps: int,
    label: str,
    paired: tuple[int, int] | None = None,
) -> float | None:
    """Time per op of every engine at every size.

    With ``paired=(big, small)``, minigrad at size ``small`` is timed again in
    the runs of size ``big``, alternating with them (as many graphs as make a
    tenth of the big one per run), and the per-op ratio big / small of those
    paired runs is returned: the machine's speed drifts between rows.
    """
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
            small = paired[1]
            repeat = max(1, ops // ops_of(small) // 10)
            small_ops = repeat * ops_of(small)
            cases.append(("paired", _repeated(case_of(engines[0], small), repeat)))
        result = timed_runs(cases, sized_reps(reps, ops))
        result.update(timed_runs(slow, 1))
        if small_ops:
            ratio = (result[MINIGRAD].median / ops) / (result["paired"].median / small_ops)
        row: list[object] = [fmt_n(n), f"{ops:,}"]
        for name in [FLOATS, *(e.name for e in engines)]:
            if name in failed:
                row.append(f"RecursionError (as at {fmt_n(failed[name])})")
                continue
            t = result[name]
            if t.failure:
                failed[name] = n
                row.append(t.failure)
                continue
            cell = f"{fmt_time(t.median / ops)}"
            if name != MINIGRAD:
                cell += f" ({fmt_ratio(t.median / result[MINIGRAD].median)})"
            if len(t.times) == 1:
                cell += " [1 run]"
            row.append(cell)
        row.append(fmt_time(result[MINIGRAD].median))
        rows.append(row)
    header = [label, "ops", "plain floats (forward only)", *(e.name for e in engines)]
    print(table([*header, "minigrad total"], rows))
    return ratio


def _repeated(
    prepare: Callable[[], Callable[[], object]], times: int
) -> Callable[[], Callable[[], object]]:
    """A case that runs ``times`` prepared runs of another, back to back."""

    def prepare_all() -> Callable[[], object]:
        runs = [prepare() for _ in range(times)]
        return lambda: [run() for run in runs]  # the results are freed after the clock stops

    return prepare_all


def bench_chain(engines: list[Engine], depths: Sequence[int], reps: int, report: Report) -> None:
    section("(b) Chain x = relu(x * 1.0001 + 0.001): time per op, forward + backward")
    both = 10_000 in depths and 1_000_000 in depths
    ratio = scaling_table(
        engines,
        depths,
        lambda d: 3 * d,
        chain_case,
        float_chain,
        reps,
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
    if ratio is not None:
        print(
            f"\nminigrad's time per op at depth 1e6 is {fmt_ratio(ratio)} that at depth 1e4, "
            "timed alternately in the same runs (ten chains of depth 1e4 after each chain "
            "of 1e6), since the machine's speed can drift between the rows above."
        )
        report.numbers["chain 1e6 / 1e4"] = ratio
    else:
        report.skipped["chain"] = "depths 1e4 and 1e6 not both run (--quick)"


# (c) sum() of many leaves.


def sum_case(engine: Engine, n: int) -> Callable[[], Callable[[], object]]:
    leaf, backward = engine.leaf, engine.backward

    def prepare() -> Callable[[], object]:
        rng = random.Random(n)
        leaves = [leaf(rng.uniform(-1.0, 1.0)) for _ in range(n)]

        def run() -> object:
            total = sum(leaves)
            backward(total)
            return total

        return run

    return prepare


def float_sum(n: int) -> Callable[[], Callable[[], object]]:
    def prepare() -> Callable[[], object]:
        rng = random.Random(n)
        leaves = [rng.uniform(-1.0, 1.0) for _ in range(n)]
        return lambda: sum(leaves)

    return prepare


def bench_sum(engines: list[Engine], sizes: Sequence[int], reps: int) -> None:
    section("(c) sum() of n leaves: time per op, forward + backward")
    scaling_table(engines, sizes, lambda n: n, sum_case, float_sum, reps, "leaves")
    print(
        "\nPython's builtin sum(): n additions in a chain (0 + x0 + x1 + ...). The leaves "
        "are made before the clock starts."
    )


# (d) Bytes per node.


def traced(build: Callable[[], Any], backward: Callable[[Any], None]) -> tuple[Any, int, int]:
    """Bytes allocated by ``build()`` and still held after ``backward`` of its result."""
    gc.collect()
    with gc_paused():
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            root = build()
            built = tracemalloc.get_traced_memory()[0] - base
            try:
                backward(root)
                after = tracemalloc.get_traced_memory()[0] - base
            except RecursionError:
                after = -1
        finally:
            tracemalloc.stop()
    return root, built, after


def bench_memory(engines: list[Engine], chain_depth: int, report: Report) -> None:
    section("(d) Bytes per graph node (tracemalloc)")
    rng = random.Random(0)
    layers = make_layers(rng)
    xs, ys = make_data(rng, BATCH)
    rows = []
    for e in engines:
        if e.children is None:
            continue
        children = e.children

        def mlp_graph(e: Engine = e) -> Any:
            return mlp_loss(to_engine(e, layers), xs, ys, e.relu)

        def chain_graph(e: Engine = e) -> Any:
            x = e.leaf(1.0)
            for _ in range(chain_depth):
                x = e.relu(x * 1.0001 + 0.001)
            return x

        graphs: list[tuple[str, Callable[[], Any], int]] = [
            ("MLP step", mlp_graph, mlp_ops(layers, xs, ys)[0]),
            (f"chain depth {fmt_n(chain_depth)}", chain_graph, 3 * chain_depth),
        ]
        for label, build, ops in graphs:
            progress(f"bytes per node: {e.name}, {label}")
            root, built, after = traced(build, e.backward)
            nodes = count_nodes(root, children)
            del root
            after_cell = "RecursionError in backward" if after < 0 else f"{after / nodes:.0f}"
            rows.append(
                [
                    e.name,
                    label,
                    f"{nodes:,}",
                    f"{built / nodes:.0f}",
                    after_cell,
                    f"{built / ops:.0f}",
                ]
            )
            if e.name == MINIGRAD and label == "MLP step":
                report.numbers["bytes built"] = built / nodes
                report.numbers["bytes after"] = after / nodes
    print(
        table(
            [
                "engine",
                "graph",
                "nodes",
                "bytes / node, built",
                "bytes / node, after backward",
                "bytes / op of the workload",
            ],
            rows,
        )
    )
    print(
        "\nA node is every Value object alive in the graph: leaves (the parameters, "
        "the chain's input) and results of ops, counted by walking the graph "
        "(minigrad: `parents`; micrograd: `_prev`, which also holds the Values "
        "micrograd wraps around constants such as 1.0001). Bytes are everything "
        "allocated while building (the parameters included; the data set, made before, "
        "not) and still held: the node objects, their float data and whatever they "
        "reference. After backward every node also holds a .grad float of its own. "
        "The last column divides by the workload's op count, which is the same for "
        "both engines. torch is left out: tracemalloc does not see its C++ allocations."
    )


# (e) Cycles.


def bench_cycles(engines: list[Engine], n_leaves: int, report: Report) -> None:
    section("(e) Graphs freed by reference counting alone")
    rows = []
    nodes = 2 * n_leaves - 1
    for e in engines:
        progress(f"cycles: {e.name}")
        gc.collect()
        with gc_paused():
            rng = random.Random(1)
            level = [e.leaf(rng.uniform(-1.0, 1.0)) for _ in range(n_leaves)]
            while len(level) > 1:
                level = [a + b for a, b in zip(level[::2], level[1::2], strict=True)]
            e.backward(level[0])
            t0 = clock()
            del level
            t_drop = clock() - t0
            t0 = clock()
            found = gc.collect()
            t_collect = clock() - t0
        rows.append([e.name, f"{nodes:,}", f"{found:,}", fmt_time(t_drop), fmt_time(t_collect)])
        if e.name == MINIGRAD:
            report.numbers["cycles"] = found
    print(
        table(
            [
                "engine",
                "nodes",
                "objects gc.collect() then finds",
                "time to drop the graph",
                "gc.collect() time",
            ],
            rows,
        )
    )
    print(
        f"\nA balanced tree of additions over {n_leaves:,} leaves (shallow, so micrograd's "
        "backward works too), built and run backward with the collector paused, then "
        "dropped; gc.collect() returns how many unreachable objects it found. 0 means "
        "reference counting freed the whole graph the moment it was dropped. micrograd's "
        "backward closures capture `out`, so each of its nodes is in a reference cycle."
    )


# (f) Import time.


def import_time(module: str, reps: int) -> float | None:
    now = f"time.{clock.__name__}()"
    code = f"import time; t0 = {now}; import {module}; print({now} - t0)"
    times = []
    # Bytecode caching on, as after any install (some shells turn it off).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONWARNINGS"] = "ignore"
    for _ in range(reps + 1):  # the first run may write .pyc files
        proc = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
        )
        if proc.returncode != 0:
            return None
        times.append(float(proc.stdout.split()[-1]))
    return statistics.median(times[1:])


def bench_import(engines: list[Engine], reps: int, report: Report) -> None:
    section("(f) Import time in a fresh interpreter")
    modules = [("minigrad", "minigrad", reps)]
    names = {e.name for e in engines}
    if MICROGRAD in names:
        modules.append(("micrograd", "micrograd.engine", reps))
    if TORCH in names:
        modules.append(("torch", "torch", min(reps, 3)))
    rows = []
    for name, module, n in modules:
        progress(f"import {module}")
        t = import_time(module, n)
        rows.append([f"`import {module}`", "failed" if t is None else fmt_time(t), n])
        if name == "minigrad" and t is not None:
            report.numbers["import"] = t
    print(table(["statement", "median", "runs"], rows))
    print(
        f"\n`time.{clock.__name__}()` around the import statement in `python -c`, in a new "
        "process each run (interpreter start-up not included), bytecode caching on; "
        "one untimed run first. "
        "micrograd's `__init__` is empty, so its engine module is what users import."
    )


# (g) gradcheck.


def ring(*xs: Any) -> Any:
    """A smooth function of N inputs with O(N) ops: sum of tanh(x_i * x_{i+1})."""
    total = 0.0
    for a, b in zip(xs, xs[1:] + xs[:1], strict=True):
        total = total + (a * b).tanh()
    return total


def manual_first(func: Callable[..., Any], inputs: list[Any], eps: float) -> None:
    """The work gradcheck must do: 2N + 1 evaluations and one reverse pass per output."""
    outs = func(*inputs)
    outs = outs if isinstance(outs, tuple | list) else [outs]
    for out in outs:
        minigrad.grad(out, inputs)
    for x in inputs:
        old = x.data
        x.data = old + eps
        func(*inputs)
        x.data = old - eps
        func(*inputs)
        x.data = old


def manual_second(func: Callable[..., Any], inputs: list[Any], eps: float) -> None:
    """The work of gradgradcheck: first order, then the same for the gradient function."""
    manual_first(func, inputs, eps)

    def gradient(*xs: Any) -> tuple[Any, ...]:
        return minigrad.grad(func(*xs), list(xs), create_graph=True)

    manual_first(gradient, inputs, eps)


def bench_gradcheck(reps: int, sizes: Sequence[int], report: Report) -> None:
    section("(g) gradcheck and gradgradcheck against the evaluations they must make")
    gradcheck = getattr(minigrad, "gradcheck", None)
    gradgradcheck = getattr(minigrad, "gradgradcheck", None)
    if gradcheck is None or gradgradcheck is None:
        print("skipped: minigrad.gradcheck / minigrad.gradgradcheck do not exist yet.")
        report.skipped["gradcheck"] = "minigrad.gradcheck does not exist yet"
        return
    eps = 1e-6
    rows = []
    worst = 0.0
    for n in sizes:
        rng = random.Random(n)
        inputs = [minigrad.Value(rng.uniform(-1.0, 1.0)) for _ in range(n)]
        pairs = [("gradcheck", gradcheck, manual_first, 2 * n + 1, 1)]
        if n <= 30:  # gradgradcheck costs O(N^2) reverse passes of O(N) each
            pairs.append(("gradgradcheck", gradgradcheck, manual_second, 2 * (2 * n + 1), n + 1))
        for name, check, manual, evals, passes in pairs:
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
            runs = max(reps, 51) if n <= 30 else reps
            result = timed_runs([("check", checked), ("manual", by_hand)], runs)
            # Each run of the check is timed next to one of the work by hand:
            # the median of those paired ratios is steady while the machine's
            # speed drifts (a ratio of the two medians is not).
            ratio = statistics.median(
                c / m for c, m in zip(result["check"].times, result["manual"].times, strict=True)
            )
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
        report.numbers["gradcheck ratio"] = worst
    n = 100
    rng = random.Random(n)
    inputs = [minigrad.Value(rng.uniform(-1.0, 1.0)) for _ in range(n)]
    progress("gradcheck fast_mode N=100")
    try:
        gradcheck(ring, inputs, fast_mode=True)

        def mode(fast: bool) -> Callable[[], Callable[[], object]]:
            return lambda: lambda: gradcheck(ring, inputs, fast_mode=fast)

        result = timed_runs([("fast", mode(True)), ("exhaustive", mode(False))], reps)
        speedup = result["exhaustive"].median / result["fast"].median
        report.numbers["fast_mode"] = speedup
        rows.append(
            [
                "gradcheck fast_mode",
                n,
                "3 evaluations + 1 reverse pass",
                fmt_time(result["fast"].median),
                f"exhaustive: {fmt_time(result['exhaustive'].median)}",
                f"{fmt_ratio(speedup)} faster",
                "",
            ]
        )
    except Exception as exc:
        print(f"gradcheck(fast_mode=True) raised: {type(exc).__name__}: {exc}")
        report.skipped["fast_mode"] = "gradcheck(fast_mode=True) raised"
    print(
        table(
            [
                "check",
                "inputs N",
                "the work it must do",
                "median",
                "that work, done by hand",
                "ratio",
                "",
            ],
            rows,
        )
    )
    print(
        "\nThe function: sum of tanh(x_i * x_(i+1)) around a ring of N inputs (3N ops), one "
        "output. 'By hand' is the least a checker can do, timed in the same process: "
        "evaluate the function at the inputs and at each input moved by +eps and -eps "
        "(2N + 1 evaluations), and one reverse pass per output with `minigrad.grad`; for "
        "gradgradcheck, that again for the gradient function (grad with create_graph=True, "
        "N outputs). minigrad's checkers run each reverse pass a second time, to test that "
        "backward is deterministic (nondet_tol), only through rules outside the built-in "
        "table; this function has none."
    )


# Targets.


def print_targets(report: Report, engines: list[Engine]) -> None:
    section("Targets")
    nums = report.numbers
    rows: list[list[str]] = []

    def row(name: str, measured: str | None, met: bool | None, why: str = "") -> None:
        if measured is None:
            rows.append([name, why or "not measured", "not measured"])
        else:
            rows.append([name, measured, "met" if met else "NOT met"])

    # The floor row's figure for the same target: how far any engine that
    # makes one Python object per op could get in this interpreter.
    # The MLP figures are step times relative to minigrad's (and, beside
    # them, to the floor row's), each a median of ratios within a round.
    for engine, label in ((MICROGRAD, "micrograd"), (TORCH, "torch 0-d")):
        name = f"MLP step >= 10x faster than {label}"
        key = f"mlp {engine}"
        if key in nums:
            speedup = nums[key]
            at_floor = f" (floor row: {fmt_ratio(nums[f'floor {engine}'])})"
            row(name, f"{fmt_ratio(speedup)} faster{at_floor}", speedup >= 10)
        else:
            missing = "not installed" if engine not in {e.name for e in engines} else ""
            row(name, None, None, missing)
    if "mlp floats" in nums:
        r = 1.0 / nums["mlp floats"]
        at_floor = f" (floor row: {fmt_ratio(1.0 / nums['floor floats'])})"
        row("MLP step <= 8x the plain-float forward", fmt_ratio(r) + at_floor, r <= 8)
    else:
        row("MLP step <= 8x the plain-float forward", None, None)
    if "bytes built" in nums:
        built, after = nums["bytes built"], nums["bytes after"]
        row(
            "bytes per node <= 130 (MLP graph, built / after backward)",
            f"{built:.0f} / {after:.0f}",
            max(built, after) <= 130,
        )
    else:
        row("bytes per node <= 130", None, None)
    if "cycles" in nums:
        found = int(nums["cycles"])
        row("no cycles: gc.collect() finds 0 after a graph is dropped", str(found), found == 0)
    else:
        row("no cycles", None, None)
    if "chain 1e6 / 1e4" in nums:
        r = nums["chain 1e6 / 1e4"]
        row("chain per-op time at depth 1e6 <= 1.5x that at 1e4", fmt_ratio(r), r <= 1.5)
    else:
        row(
            "chain per-op time at depth 1e6 <= 1.5x that at 1e4",
            None,
            None,
            report.skipped.get("chain", ""),
        )
    if "import" in nums:
        t = nums["import"]
        row("`import minigrad` < 30 ms", fmt_time(t), t < 0.030)
    else:
        row("`import minigrad` < 30 ms", None, None)
    if "gradcheck ratio" in nums:
        r = nums["gradcheck ratio"]
        row(
            "gradcheck <= 1.2x its 2N+1 evaluations + reverse passes (worst N)",
            fmt_ratio(r),
            r <= 1.2,
        )
    else:
        row(
            "gradcheck <= 1.2x its evaluations + reverse passes",
            None,
            None,
            report.skipped.get("gradcheck", ""),
        )
    if "fast_mode" in nums:
        r = nums["fast_mode"]
        row(
            "gradcheck fast_mode >= 10x faster than exhaustive at N=100",
            f"{fmt_ratio(r)} faster",
            r >= 10,
        )
    else:
        row(
            "gradcheck fast_mode >= 10x faster than exhaustive at N=100",
            None,
            None,
            report.skipped.get("fast_mode", report.skipped.get("gradcheck", "")),
        )
    print(table(["target", "measured", "status"], rows))


# The run.


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError), open("/proc/cpuinfo", encoding="utf-8") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    load = ""
    with contextlib.suppress(OSError, AttributeError):
        load = ", load average {:.2f} {:.2f} {:.2f} at start".format(*os.getloadavg())
    return f"{platform.system()} {platform.machine()}, {cpu}, nproc {os.cpu_count()}{load}"


def calibration() -> float:
    """The time of a fixed pure-Python loop: how fast this machine is right now."""
    t0 = clock()
    s = 0
    for i in range(1_000_000):
        s += i
    return clock() - t0


def git_revision() -> str:
    try:
        proc = subprocess.run(
            ["git", "-C", REPO, "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:
        return "?"
    return proc.stdout.strip() or "?"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="minigrad against micrograd, plain floats and torch 0-d tensors.",
    )
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    parser.add_argument("--reps", type=int, default=None, help="runs per median (default 11)")
    parser.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="cpu",
        help="cpu: this process's CPU time (default; steady on a busy machine); wall: wall time",
    )
    parser.add_argument(
        "--only", default="abcdefg", help="sections to run, e.g. 'a,e' (default: all)"
    )
    args = parser.parse_args(argv)
    global clock
    clock = CLOCKS[args.clock]
    reps = args.reps if args.reps is not None else (3 if args.quick else 11)
    if reps < 1:
        parser.error("--reps must be >= 1")
    only = set(args.only.replace(",", ""))
    unknown = only - set("abcdefg")
    if unknown:
        parser.error(f"--only: unknown sections {''.join(sorted(unknown))!r}")

    engines = [_minigrad_engine()]
    missing = []
    for make, name, hint in (
        (_micrograd_engine, "micrograd", "pip install -e '.[bench]'"),
        (_torch_engine, "torch", "pip install torch"),
    ):
        engine = make()
        if engine is None:
            missing.append(f"{name} is not installed ({hint}): its rows are skipped.")
        else:
            engines.append(engine)
    engines.append(_bare_engine())

    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    print("# minigrad benchmarks\n")
    print(f"- date: {now}")
    print(f"- machine: {machine()}")
    print(
        f"- Python {platform.python_version()} ({platform.python_implementation()}), "
        f"gc on, thresholds {gc.get_threshold()}"
    )
    print(f"- minigrad {minigrad.__version__} (git {git_revision()})")
    for e in engines[1:]:
        if e.version:
            print(f"- {e.name.split()[0]} {e.version}")
    for line in missing:
        print(f"- {line}")
    command = " ".join(["python benchmarks/run.py", *(argv if argv is not None else sys.argv[1:])])
    print(f"- command: `{command}`; medians of {reps} runs unless a table says otherwise")
    print(
        f"- clock: {args.clock} (`time.{clock.__name__}`)"
        + (
            ": CPU time of this process, which for this single-threaded work equals wall "
            "time on an idle machine and does not count time lost to other processes"
            if args.clock == "cpu"
            else ""
        )
    )

    print(
        f"- reference loop (1e6 iterations of `s += i`): {fmt_time(calibration())} at the "
        "start (a measure of how busy the machine is; it is printed again at the end)"
    )
    report = Report()
    quick = args.quick
    if "a" in only:
        bench_mlp(engines, reps, report)
    if "b" in only:
        depths = (100, 1_000, 10_000) if quick else (100, 1_000, 10_000, 100_000, 1_000_000)
        bench_chain(engines, depths, reps, report)
    if "c" in only:
        bench_sum(engines, (10_000,) if quick else (100_000, 1_000_000), reps)
    if "d" in only:
        bench_memory(engines, 10_000 if quick else 100_000, report)
    if "e" in only:
        bench_cycles(engines, 2**14 if quick else 2**19, report)
    if "f" in only:
        bench_import(engines, 5 if quick else 15, report)
    if "g" in only:
        bench_gradcheck(reps, (10, 30) if quick else (10, 30, 100), report)
    print(f"\nReference loop at the end: {fmt_time(calibration())}.")
    print_targets(report, engines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
