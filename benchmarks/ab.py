"""A/B: two source trees of minigrad, side by side in one run, as per-round ratios.

``python benchmarks/ab.py OLD_SRC NEW_SRC`` (each a folder holding the
``minigrad`` package, e.g. a ``git worktree`` of an older commit's ``src``) times
the same workloads on both, in fresh subprocesses that alternate A, B, B, A, ...
so a machine whose speed drifts during the run (these are shared, noisy
machines) drifts for both. Each round gives a ratio new / old per workload; the
table shows the median and the quartiles of those ratios. No absolute time is
reported: only the ratio means anything across machines.

Workloads: the MLP step of ``workloads.py`` (forward and backward), ``grad`` on
the MLP loss, a chain of 1e6 ops (forward and backward), the compiled MLP step
(built once, untimed), and passing ``gradcheck``/``gradgradcheck`` on a function of 1 and
10 inputs (the cost a change to the checker or the engine adds to a check that
passes).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

# Runs inside each subprocess, with one tree first on sys.path.
_PROBE = r"""
import gc, json, random, sys, time
sys.path.insert(0, sys.argv[1])
sys.path.insert(1, sys.argv[2])
import minigrad as mg
from minigrad import Value
import workloads as w

def best(fn, reps, rounds=5):
    gc.collect()
    gc.disable()
    try:
        times = []
        for _ in range(rounds):
            t = time.process_time()
            for _ in range(reps):
                fn()
            times.append((time.process_time() - t) / reps)
        return min(times)
    finally:
        gc.enable()

layers, xs, ys = w.mlp_problem()
params = w.to_engine(Value, layers)
leaves = w.flat(params)

def mlp_step():
    loss = w.mlp_loss(params, xs, ys, Value.relu)
    loss.backward()

def mlp_grad():
    mg.grad(w.mlp_loss(params, xs, ys, Value.relu), leaves)

def f(*v):
    t = v[0] * 0.0
    for x in v:
        t = t + (x * 1.3).sin() * x + x.exp() * 0.1
    return t

chain_leaf = Value(0.5)

def chain_step():
    # 1e6 ops in a chain, forward and backward: the iterative order at depth.
    w.chain(chain_leaf, 333_334, Value.relu).backward()

compiled = mg.compile(lambda xs, ys: w.mlp_loss(params, xs, ys, Value.relu))
compiled(xs, ys)  # traced and built once, outside the timing

def compiled_step():
    compiled(xs, ys).backward()

one = [Value(0.3)]
ten = [Value(0.1 + 0.05 * i) for i in range(10)]
out = {
    "MLP step (forward + backward)": best(mlp_step, 2),
    "grad of the MLP loss": best(mlp_grad, 2),
    "chain of 1e6 ops (forward + backward)": best(chain_step, 1, rounds=2),
    "compiled MLP step": best(compiled_step, 20),
    "gradcheck, 1 input": best(lambda: mg.gradcheck(f, one), 200),
    "gradcheck, 10 inputs": best(lambda: mg.gradcheck(f, ten), 20),
    "gradgradcheck, 1 input": best(lambda: mg.gradgradcheck(f, one), 50),
}
print(json.dumps(out))
"""


def _run(tree: str) -> dict[str, float]:
    here = str(Path(__file__).resolve().parent)
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, tree, here], capture_output=True, text=True, check=True
    )
    result: dict[str, float] = json.loads(done.stdout)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    """Print the table of new / old ratios; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", help="the folder holding the old minigrad package")
    parser.add_argument("new", help="the folder holding the new minigrad package")
    parser.add_argument("--rounds", type=int, default=9, help="rounds (9)")
    args = parser.parse_args(argv)
    ratios: dict[str, list[float]] = {}
    for k in range(args.rounds):
        first, second = ("old", "new") if k % 2 == 0 else ("new", "old")
        got = {first: _run(getattr(args, first)), second: _run(getattr(args, second))}
        for name, old in got["old"].items():
            ratios.setdefault(name, []).append(got["new"][name] / old)
    print("| workload | new / old, median | quartiles |")
    print("|---|---|---|")
    for name, rs in ratios.items():
        q = statistics.quantiles(rs, n=4) if len(rs) > 1 else [rs[0]] * 3
        print(f"| {name} | {statistics.median(rs):.3f} | {q[0]:.3f} - {q[2]:.3f} |")
    print(f"\n{args.rounds} rounds; CPU time, best of 5 per workload and process.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
