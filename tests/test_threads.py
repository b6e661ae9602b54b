"""Reverse passes from several threads at once on graphs that share nodes.

Each test runs the same calls on one thread first and then from several
threads at once, with the interpreter switching threads every microsecond,
and asks for the very same floats. The graph is a diamond-heavy expression
of a few thousand nodes: every node is used by several later ones, so
traversals started from different roots cross at every turn.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import pytest

from minigrad import Value, grad, gradcheck, toposort

THREADS = 4

T = TypeVar("T")


@pytest.fixture(autouse=True)
def fast_switching() -> Iterator[None]:
    """Threads switch every microsecond (CPython's default is 5 ms): races show up."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


def diamonds(xs: Sequence[Value], layers: int = 30, width: int = 12) -> Value:
    """A lattice: each node of a layer combines two of the layer before (4 ops each)."""
    prev = list(xs)
    for k in range(layers):
        prev = [
            (a * b).cos() + a * 0.5
            for a, b in ((prev[i % len(prev)], prev[(i + 1 + k) % len(prev)]) for i in range(width))
        ]
    total = prev[0]
    for p in prev[1:]:
        total = total + p
    return total


def leaves(n: int) -> list[Value]:
    return [Value(0.1 + 0.7 * i / n, label=f"x{i}") for i in range(n)]


def concurrently(work: Sequence[Callable[[], T]]) -> list[T]:
    """Run each callable on a thread of its own, all released at once; their results."""
    start = threading.Barrier(len(work))

    def run(job: Callable[[], T]) -> T:
        start.wait()
        return job()

    with ThreadPoolExecutor(max_workers=len(work)) as pool:
        futures = [pool.submit(run, job) for job in work]
        return [f.result() for f in futures]


def test_the_shared_graph_is_big_and_diamond_heavy() -> None:
    xs = leaves(8)
    nodes = toposort([diamonds(xs)])
    users: dict[Value, int] = {}
    for n in nodes:
        for p in n.parents:
            users[p] = users.get(p, 0) + 1
    assert len(nodes) > 1000
    assert sum(1 for n in nodes if users.get(n, 0) >= 2) > len(nodes) // 5


@pytest.mark.parametrize("create_graph", [False, True])
def test_grad_from_several_threads_gives_the_single_thread_numbers(create_graph: bool) -> None:
    xs = leaves(8)
    out = diamonds(xs)
    # Two more outputs over the same nodes: each thread walks from its own root.
    outs = [out, out * out, (out * 0.25).exp()]
    reps = 10

    def work(t: int) -> Callable[[], list[list[float]]]:
        def job() -> list[list[float]]:
            y = outs[t % len(outs)]
            return [[g.data for g in grad(y, xs, create_graph=create_graph)] for _ in range(reps)]

        return job

    expected = [work(t)() for t in range(THREADS)]
    assert all(len(set(map(tuple, e))) == 1 for e in expected)  # one thread: deterministic
    for _ in range(4):  # a race missed once is still caught
        assert concurrently([work(t) for t in range(THREADS)]) == expected


def test_backward_from_several_threads_adds_up_as_on_one_thread() -> None:
    """Each thread runs backward on a loss of its own over one shared subgraph.

    Every loss passes the same gradient (1.0) into the shared subgraph, so each
    call adds the same amount to each shared node, and the totals do not depend
    on the order of the calls: they must be bit for bit those of one thread.
    Threads computing ``grad`` and running ``gradcheck`` over the same nodes
    at the same time must not disturb them, nor be disturbed.
    """
    xs = leaves(8)
    core = diamonds(xs)
    shared = toposort([core])
    ws = [Value(1.0, label=f"w{t}") for t in range(THREADS)]
    losses = [core * w + w * w for w in ws]
    reps = 15

    def backward(t: int) -> Callable[[], None]:
        def job() -> None:
            for _ in range(reps):
                losses[t].backward()

        return job

    def grads() -> list[list[float]]:
        return [[g.data for g in grad(core * core, xs)] for _ in range(reps)]

    def check() -> list[bool]:
        # A function of its own input over the shared nodes, checked reps times.
        x = Value(0.3)
        return [gradcheck(lambda x: (x * core).tanh() + x * x, [x]) for _ in range(reps)]

    for t in range(THREADS):
        backward(t)()
    expected_shared = [n.grad for n in shared]
    expected_ws = [w.grad for w in ws]
    expected_grads = grads()
    assert len(set(expected_shared)) > 10  # the totals differ from node to node
    for n in [*shared, *ws]:
        n.grad = 0.0

    results = concurrently([*(backward(t) for t in range(THREADS)), grads, grads, check])
    assert [n.grad for n in shared] == expected_shared
    assert [w.grad for w in ws] == expected_ws
    assert results[THREADS : THREADS + 2] == [expected_grads, expected_grads]
    assert results[-1] == [True] * reps


def test_zero_grad_while_other_threads_run_backward_leaves_whole_passes() -> None:
    """zero_grad from one thread while others run backward on the same nodes.

    Which calls come after the zero_grad depends on the scheduler, but each
    backward call must count wholly or not at all, and zero_grad must reach
    every node or none: the shared nodes' ``.grad`` must end as one thread
    leaves them after some number k of calls, the same k for every node.
    The zero_grad starts from a root whose traversal visits another big
    graph first, so its zeroing of the shared nodes lands in the middle of
    another thread's reverse pass unless the two are kept apart.
    """
    xs = leaves(8)
    core = diamonds(xs)
    shared = toposort([core])
    root = core + diamonds(leaves(8), layers=60)  # its right argument is visited first
    ws = [Value(1.0) for _ in range(THREADS)]
    losses = [core * w for w in ws]
    reps = 6

    # One thread: every node's total after 0, 1, 2, ... whole calls.
    possible: list[list[float]] = [[0.0] * len(shared)]
    for _ in range(THREADS * reps):
        losses[0].backward()
        possible.append([n.grad for n in shared])
    assert len({tuple(p) for p in possible}) == len(possible)

    def backward(t: int, started: threading.Event) -> Callable[[], None]:
        def job() -> None:
            for i in range(reps):
                losses[t].backward()
                if i == 1:
                    started.set()

        return job

    def zero(started: threading.Event) -> Callable[[], None]:
        def job() -> None:
            started.wait()  # some passes done, the rest to come
            root.zero_grad()

        return job

    for _ in range(40):
        core.zero_grad()
        started = threading.Event()
        concurrently([*(backward(t, started) for t in range(THREADS)), zero(started)])
        assert [n.grad for n in shared] in possible


def test_checks_on_the_same_inputs_from_several_threads_give_one_threads_verdicts() -> None:
    # A check moves its inputs' .data; a second check, or a grad through a
    # graph built on them, at that moment would see them moved. (Building a
    # new graph from them reads whatever they hold then, as in PyTorch.)
    xs = leaves(4)

    def func(*vs: Value) -> Value:
        return diamonds(vs, layers=6, width=6)

    built = func(*xs)

    def probe() -> list[float]:
        return [g.data for g in grad(built, xs)]

    alone = probe()
    jobs: list[Callable[[], object]] = [lambda: gradcheck(func, xs) for _ in range(2)]
    jobs += [probe for _ in range(THREADS - 2)]
    for _ in range(4):  # a race shows up in most rounds without the lock; in four, always
        results = concurrently(jobs)
        assert results[:2] == [True, True]
        assert all(r == alone for r in results[2:])
    assert [x.data for x in xs] == [0.1 + 0.7 * i / 4 for i in range(4)]


# minigrad.compile's tracing refuses .data reads in the tracing thread only
# (issue 21, point 7): it used to set one hook for the whole process.


def test_a_trace_refuses_reads_in_its_own_thread_only() -> None:
    from minigrad import compile as compile_fn
    from minigrad.compiler.trace import TracingError
    from minigrad.core import value as engine

    tracing = threading.Event()
    read = threading.Event()
    w, other = Value(0.5), Value(2.0)
    seen: list[float] = []

    def slow(x: Value) -> Value:
        tracing.set()
        assert read.wait(10.0)  # the other thread reads .data meanwhile
        with pytest.raises(TracingError, match="slow"):
            _ = w.data  # refused here: the compiled code would freeze it
        return w * x

    def reader() -> None:
        assert tracing.wait(10.0)
        seen.append(other.data)  # another thread: read on, no TracingError
        seen.append(w.data)
        read.set()

    step = compile_fn(slow)
    t = threading.Thread(target=reader)
    t.start()
    assert step(3.0).data == 1.5
    t.join()
    assert seen == [2.0, 0.5]
    assert engine._tracing is None  # no hook left behind


def test_concurrent_traces_leave_no_hook_installed() -> None:
    from minigrad import compile as compile_fn
    from minigrad.compiler.trace import TracingError
    from minigrad.core import value as engine

    w = Value(0.25)
    barrier = threading.Barrier(THREADS)

    def trace_once(k: int) -> float:
        def fn(x: Value) -> Value:
            barrier.wait(10.0)  # every thread is inside its trace at once
            return (w * x).tanh() * float(k)

        return compile_fn(fn)(1.0).data

    for _ in range(20):
        results = concurrently([lambda k=k: trace_once(k) for k in range(THREADS)])  # type: ignore[misc]
        assert results == [Value(0.25).tanh().data * k for k in range(THREADS)]
        assert engine._tracing is None
    # And the hook still works afterwards, in this thread.
    with pytest.raises(TracingError):
        compile_fn(lambda x: x * w.data)(1.0)
    assert engine._tracing is None
