"""Sections (d) bytes per node, (e) graphs freed by reference counting, (f) import time."""

from __future__ import annotations

import gc
import os
import statistics
import subprocess
import sys
import tracemalloc
from collections.abc import Callable, Sequence
from typing import Any

from engines import MICROGRAD, TORCH, Engine
from harness import Target, clock_name, fmt_n, fmt_time, progress, stopwatch, table
from minigrad.core._gc import gc_paused
from suite import Bench
from workloads import chain, mlp_loss, mlp_ops, mlp_problem, random_leaves, to_engine, tree_sum

# (d) Bytes per node.


def traced(build: Callable[[], Any], backward: Callable[[Any], None]) -> tuple[Any, int, int]:
    """Bytes allocated by ``build()`` and still held, and still held after ``backward``.

    The bytes after backward are -1 when backward raised RecursionError.
    """
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


def bench_memory(bench: Bench, sizes: Sequence[int]) -> None:
    (chain_depth,) = sizes
    layers, xs, ys = mlp_problem()
    mlp_op_count = mlp_ops(layers, xs, ys)[0]
    rows = []
    for e in bench.engines:
        if e.children is None:
            continue  # torch: tracemalloc does not see its C++ allocations
        children = e.children

        def mlp_graph(e: Engine = e) -> Any:
            return mlp_loss(to_engine(e.leaf, layers), xs, ys, e.relu)

        def chain_graph(e: Engine = e) -> Any:
            return chain(e.leaf(1.0), chain_depth, e.relu)

        graphs: list[tuple[str, Callable[[], Any], int]] = [
            ("MLP step", mlp_graph, mlp_op_count),
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
            if label == "MLP step":
                bench.found.numbers[f"bytes {e.name}"] = built / nodes
                bench.found.numbers[f"bytes after {e.name}"] = after / nodes
    bench.found.numbers["bytes"] = max(
        bench.found.numbers["bytes minigrad"], bench.found.numbers["bytes after minigrad"]
    )
    header = ["engine", "graph", "nodes", "bytes / node, built", "bytes / node, after backward"]
    print(table([*header, "bytes / op of the workload"], rows))
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


BYTES_TARGET = Target(
    "bytes per node <= 130 (MLP graph, built / after backward)",
    "bytes",
    "<=",
    130,
    lambda m: f"{m['bytes minigrad']:.0f} / {m['bytes after minigrad']:.0f}",
)


# (e) Cycles.


def bench_cycles(bench: Bench, sizes: Sequence[int]) -> None:
    (n_leaves,) = sizes
    rows = []
    nodes = 2 * n_leaves - 1
    for e in bench.engines:
        progress(f"cycles: {e.name}")
        gc.collect()
        with gc_paused():
            graph = [tree_sum(random_leaves(e.leaf, n_leaves, seed=1))]
            e.backward(graph[0])
            _, t_drop = stopwatch(graph.clear)  # drops the one reference to the root
            found, t_collect = stopwatch(gc.collect)
        rows.append([e.name, f"{nodes:,}", f"{found:,}", fmt_time(t_drop), fmt_time(t_collect)])
        bench.found.numbers[f"cycles {e.name}"] = found
    header = ["engine", "nodes", "objects gc.collect() then finds", "time to drop the graph"]
    print(table([*header, "gc.collect() time"], rows))
    print(
        f"\nA balanced tree of additions over {n_leaves:,} leaves (shallow, so micrograd's "
        "backward works too), built and run backward with the collector paused, then "
        "dropped; gc.collect() returns how many unreachable objects it found. 0 means "
        "reference counting freed the whole graph the moment it was dropped. micrograd's "
        "backward closures capture `out`, so each of its nodes is in a reference cycle."
    )


CYCLES_TARGET = Target(
    "no cycles: gc.collect() finds 0 after a graph is dropped",
    "cycles minigrad",
    "<=",
    0,
    lambda m: f"{m['cycles minigrad']:.0f}",
)


# (f) Import time.


def import_time(module: str, reps: int) -> float | None:
    """The median time of ``import module`` in a new interpreter, or None if it failed."""
    now = f"{clock_name()}()"
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


def bench_import(bench: Bench, sizes: Sequence[int]) -> None:
    (reps,) = sizes
    modules = [("minigrad", reps)]
    if bench.has(MICROGRAD):
        modules.append(("micrograd.engine", reps))
    if bench.has(TORCH):
        modules.append(("torch", min(reps, 3)))
    rows = []
    for module, n in modules:
        progress(f"import {module}")
        t = import_time(module, n)
        rows.append([f"`import {module}`", "failed" if t is None else fmt_time(t), n])
        if module == "minigrad" and t is not None:
            bench.found.numbers["import"] = t
    print(table(["statement", "median", "runs"], rows))
    print(
        f"\n`{clock_name()}()` around the import statement in `python -c`, in a new "
        "process each run (interpreter start-up not included), bytecode caching on; "
        "one untimed run first. "
        "micrograd's `__init__` is empty, so its engine module is what users import."
    )


IMPORT_TARGET = Target(
    "`import minigrad` < 30 ms", "import", "<", 0.030, lambda m: fmt_time(m["import"])
)
