"""What the default verdicts cost: the MLP check of issue 19, default against the classic test.

``python benchmarks/check_cost.py`` checks the gradient of a 2-16-16-1 MLP
(tanh, 337 parameters, squared loss over 8 points) four ways, side by side
in one run:

- *default*: ``check(loss, params)``, the verdicts from the error bound;
- *classic*: ``check(loss, params, atol=1e-5, rtol=1e-3)``, PyTorch's test,
  which is what the default was before issue 19;
- *fast* and *fast, classic*: the same with ``fast_mode=True``;
- with ``--old SRC`` (the ``src`` folder of an older tree, e.g. ``git worktree
  add /tmp/old <commit>``), also that tree's default check, which is the
  classic test of the code before the change;
- with ``--closure``, a 2-8-8-1 MLP (105 parameters) whose tanh is the
  lecture's, a micrograd ``_backward`` closure: no point of it can be
  replayed, so every evaluation the checker makes is a call of the loss.

Each case runs in a fresh subprocess, the cases of a round in turn (A B C ..,
then reversed), so a machine whose speed drifts drifts for all. The table
gives each case's CPU time relative to the classic check's, as the median of
per-round ratios, and the number of evaluations of the loss it made, which
no machine changes. No bare seconds: only the ratios mean anything across
machines.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"

# Runs in each subprocess, with one source tree first on sys.path.
_PROBE = r"""
import json, random, sys, time
sys.path.insert(0, sys.argv[1])
import math
import minigrad as mg
from minigrad import Value

def ctanh(v):  # the lecture's tanh, micrograd's way
    t = math.tanh(v.data)
    out = Value(t, (v,), "ctanh")
    def _backward():
        v.grad += (1 - t * t) * out.grad
    out._backward = _backward
    return out

closures = sys.argv[3] == "closure"
rng = random.Random(0)
sizes = (2, 8, 8, 1) if closures else (2, 16, 16, 1)
layers = []
for nin, nout in zip(sizes, sizes[1:]):
    layers.append(([[Value(rng.uniform(-1, 1)) for _ in range(nin)] for _ in range(nout)],
                   [Value(0.0) for _ in range(nout)]))
points = [[rng.uniform(-2, 2), rng.uniform(-2, 2)] for _ in range(8)]
targets = [1.0 if a * a + b * b < 2.0 else -1.0 for a, b in points]
params = [p for rows, bs in layers for p in [*(w for row in rows for w in row), *bs]]
calls = [0]

def loss(*_):
    calls[0] += 1
    total = Value(0.0)
    for x, y in zip(points, targets):
        h = x
        for i, (rows, bs) in enumerate(layers):
            acts = [sum((w * v for w, v in zip(row, h)), b) for row, b in zip(rows, bs)]
            if i < len(layers) - 1:
                h = [ctanh(a) if closures else a.tanh() for a in acts]
            else:
                h = acts
        d = h[0] - y
        total = total + d * d
    return total

kwargs = json.loads(sys.argv[2])
loss()  # warm
calls[0] = 0
t = time.process_time()
report = mg.check(loss, params, **kwargs)
seconds = time.process_time() - t
counts = {}
for e in getattr(report, "entries", []):
    counts[e.verdict] = counts.get(e.verdict, 0) + 1
print(json.dumps({"seconds": seconds, "calls": calls[0], "ok": report.ok,
                  "params": len(params), "verdicts": counts}))
"""

CASES: dict[str, dict[str, object]] = {
    "default": {},
    "classic (atol=1e-5, rtol=1e-3)": {"atol": 1e-5, "rtol": 1e-3},
    "fast": {"fast_mode": True},
    "fast, classic": {"fast_mode": True, "atol": 1e-5, "rtol": 1e-3},
}
BASE = "classic (atol=1e-5, rtol=1e-3)"


def run_case(src: Path, kwargs: dict[str, object], tanh: str) -> dict[str, object]:
    """One check in a fresh interpreter: its CPU time, evaluations and verdicts."""
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, str(src), json.dumps(kwargs), tanh],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds (default 5)")
    parser.add_argument("--old", type=Path, help="an older tree's src, checked as 'old default'")
    parser.add_argument(
        "--closure", action="store_true", help="a 2-8-8-1 MLP whose tanh is a _backward closure"
    )
    args = parser.parse_args(argv)
    plan: list[tuple[str, Path, dict[str, object]]] = [
        (name, SRC, kwargs) for name, kwargs in CASES.items()
    ]
    if args.old is not None:
        plan.append(("old default (the code before)", args.old, {}))
    times: dict[str, list[float]] = {name: [] for name, _, _ in plan}
    seen: dict[str, dict[str, object]] = {}
    for r in range(args.rounds):
        order = plan if r % 2 == 0 else list(reversed(plan))
        for name, src, kwargs in order:
            print(f"\rround {r + 1}/{args.rounds}: {name:<40}", end="", file=sys.stderr)
            got = run_case(src, kwargs, "closure" if args.closure else "builtin")
            times[name].append(float(str(got["seconds"])))
            seen[name] = got
    print(file=sys.stderr)
    base = times[BASE]
    shape = "2-8-8-1 (tanh as a _backward closure)" if args.closure else "2-16-16-1 (tanh)"
    print(f"MLP {shape}, {seen[BASE]['params']} parameters, squared loss over 8 points;")
    print(f"CPU time relative to the classic check, median of {args.rounds} paired rounds.\n")
    print("| check | time / classic | evaluations of the loss | passed | verdicts |")
    print("|---|---|---|---|---|")
    for name, _, _ in plan:
        ratio = statistics.median(t / b for t, b in zip(times[name], base, strict=True))
        got = seen[name]
        verdicts = ", ".join(f"{v} {k}" for k, v in sorted(dict(got["verdicts"]).items()))  # type: ignore[call-overload]
        print(f"| {name} | {ratio:.3f}x | {got['calls']} | {got['ok']} | {verdicts or '-'} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
