"""The main job's time: ``python -m minigrad check``, in one process and spread over jobs.

``python benchmarks/main_job.py`` runs the command (minigrad's own rules and
composites, 40 points each, orders 1-3) as a user does, in a fresh
interpreter each time, two ways side by side:

- *one process*: ``--jobs 1``, every item checked in turn;
- *default*: one job per CPU this process may use (on one CPU, the same as
  the first);
- with ``--old SRC`` (the ``src`` folder of an older tree, e.g. ``git worktree
  add /tmp/old <commit>``), also that tree's command at its defaults.

The cases of a round run in turn (A B C, then C B A the next round), so a
machine whose speed drifts drifts for all. The table gives each case's median
wall-clock and CPU seconds (the interpreter's and its workers') and its
wall-clock time relative to *one process*, as the median of per-round ratios:
the seconds differ from machine to machine, the ratios much less.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"


def _run(src: str, extra: list[str]) -> tuple[float, float]:
    """One run of the command with ``src`` first on the path: wall and CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": src}
    command = [sys.executable, "-m", "minigrad", "check", *extra]
    subprocess.run(command, env=env, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds of every case (5)")
    parser.add_argument("--old", help="the src folder of an older tree, run at its defaults")
    args = parser.parse_args(argv)
    cases = {"one process (--jobs 1)": (str(SRC), ["--jobs", "1"]), "default": (str(SRC), [])}
    if args.old:
        cases[f"{args.old} (its defaults)"] = (args.old, [])
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
    for r in range(args.rounds):
        order = list(cases) if r % 2 == 0 else list(reversed(cases))
        for name in order:
            runs[name].append(_run(*cases[name]))
    base = runs["one process (--jobs 1)"]
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"`python -m minigrad check`, {args.rounds} rounds, {cpus} CPU(s) for this process\n")
    print("| case | wall s (median) | CPU s (median) | wall / one process |")
    print("|---|---|---|---|")
    for name, got in runs.items():
        ratio = statistics.median(w / b[0] for (w, _), b in zip(got, base, strict=True))
        wall = statistics.median(w for w, _ in got)
        cpu = statistics.median(c for _, c in got)
        print(f"| {name} | {wall:.2f} | {cpu:.2f} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
