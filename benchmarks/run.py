"""Benchmarks: minigrad against micrograd, plain floats and torch 0-d tensors.

One command; every engine runs in the same process, on the same workloads;
each figure is the median of several runs::

    python benchmarks/run.py              # full run (7-30 minutes on 2 cores, by machine)
    python benchmarks/run.py --quick      # smoke run of every section, small sizes
    python benchmarks/run.py --reps 21    # more runs per median
    python benchmarks/run.py --only a,e   # some sections only
    python benchmarks/run.py --clock wall # wall time instead of CPU time
    python benchmarks/run.py --readme     # also write results.md and the READMEs' summary

The report is Markdown on stdout (progress goes to stderr when it is a
terminal): a table per section, then every target with its measured ratio
and whether it is met. The sections, their sizes and their targets are the
table ``SECTIONS`` in sections.py; engines.py and floor.py hold the engines,
workloads.py the code they run, harness.py the timing and the tables.

Only the standard library is needed. micrograd (``pip install -e '.[bench]'``)
and torch are optional; a missing one is named in a line and skipped. This
file is not a test, and pytest does not collect it.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import gc
import io
import sys
from collections.abc import Iterable
from typing import TextIO

import minigrad
from engines import load_engines
from harness import (
    CLOCKS,
    Measurements,
    calibration,
    clock_name,
    fmt_time,
    git_revision,
    heading,
    load_average,
    machine,
    python,
    targets_table,
    use_clock,
)
from publish import about, publish, publish_sections, summary
from sections import SECTIONS
from suite import Bench

CLOCK_NOTES = {
    "cpu": ": CPU time of this process, which for this single-threaded work equals wall "
    "time on an idle machine and does not count time lost to other processes",
    "wall": "",
}


def parse(argv: list[str] | None) -> argparse.Namespace:
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
    letters = "".join(s.letter for s in SECTIONS)
    parser.add_argument(
        "--only",
        default=letters,
        help="sections to run, e.g. 'a,e' (default: all): "
        + "; ".join(f"{s.letter} {s.title.split(':')[0]}" for s in SECTIONS),
    )
    parser.add_argument(
        "--readme",
        action="store_true",
        help="also write the report to benchmarks/results.md and its summary into "
        "README.md and benchmarks/README.md (every section must run); with --only "
        "and untimed sections alone, replace just those sections and their targets' rows",
    )
    args = parser.parse_args(argv)
    if args.reps is None:
        args.reps = 3 if args.quick else 11
    if args.reps < 1:
        parser.error("--reps must be >= 1")
    args.only = set(args.only.replace(",", ""))
    unknown = args.only - set(letters)
    if unknown:
        parser.error(f"--only: unknown sections {''.join(sorted(unknown))!r}")
    untimed = {s.letter for s in SECTIONS if not s.timed}
    if args.readme and args.only != set(letters) and not args.only <= untimed:
        parser.error(
            "--readme publishes a whole run, or untimed sections alone "
            f"(--only {','.join(sorted(untimed))}): leave out --only or pick those"
        )
    return args


class Tee(io.StringIO):
    """Keeps what is written, and passes it on to ``out`` as it comes."""

    def __init__(self, out: TextIO) -> None:
        super().__init__()
        self.out = out

    def write(self, s: str) -> int:
        self.out.write(s)
        return super().write(s)

    def flush(self) -> None:
        self.out.flush()


def print_header(
    date: str, versions: list[str], missing: Iterable[str], command: str, args: argparse.Namespace
) -> None:
    print("# minigrad benchmarks\n")
    print(f"- date: {date}")
    load = load_average()
    print(f"- machine: {machine()}" + (f", {load} at start" if load else ""))
    print(f"- {python()}, gc on, thresholds {gc.get_threshold()}")
    for line in [*versions, *missing]:
        print(f"- {line}")
    print(f"- command: `{command}`; medians of {args.reps} runs unless a table says otherwise")
    print(f"- clock: {args.clock} (`{clock_name()}`){CLOCK_NOTES[args.clock]}")
    print(
        f"- reference loop (1e6 iterations of `s += i`): {fmt_time(calibration())} at the "
        "start (a measure of how busy the machine is; it is printed again at the end)"
    )


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    use_clock(args.clock)
    engines, missing = load_engines()
    bench = Bench(engines, args.reps, Measurements())
    command = " ".join(["python benchmarks/run.py", *(argv if argv is not None else sys.argv[1:])])
    date = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    versions = [f"minigrad {minigrad.__version__} (git {git_revision()})"]
    versions += [f"{e.package} {e.version}" for e in engines if e.package not in ("", "minigrad")]
    report = Tee(sys.stdout)
    with contextlib.redirect_stdout(report):
        print_header(date, versions, missing.values(), command, args)
        alone = args.readme and args.only != {s.letter for s in SECTIONS}
        for s in SECTIONS:
            if s.letter in args.only:
                heading(f"({s.letter}) {s.title}")
                if alone:
                    print(f"Updated alone on {date} by `{command}` ({versions[0]}).\n")
                s.run(bench, s.quick if args.quick else s.full)
        print(f"\nReference loop at the end: {fmt_time(calibration())}.")
        heading("Targets")
        targets = [t for s in SECTIONS for t in s.targets]
        print(targets_table(targets, bench.found))
    if args.readme and alone:
        ran = [s for s in SECTIONS if s.letter in args.only]
        mine = [t for s in ran for t in s.targets]
        for path in publish_sections(report.getvalue(), [s.letter for s in ran], mine, bench.found):
            print(f"wrote {path}", file=sys.stderr)
    elif args.readme:
        clock = "CPU-time" if args.clock == "cpu" else "wall-clock"
        run = about(command, date, f"{machine()}; {python()}", clock, args.reps, versions)
        for path in publish(report.getvalue(), summary(bench.found, targets, run)):
            print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
