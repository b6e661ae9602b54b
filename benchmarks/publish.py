"""``run.py --readme``: the report into results.md, the summary into the READMEs.

The summary (the machine, the MLP step's ratios and memory, the targets) is
written between two marker comments in README.md and benchmarks/README.md;
everything outside the markers is left as it was. This is the only place the
summary is made: edit this file, not the tables in the READMEs.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from engines import BARE, FLOATS, HANDWRITTEN, MICROGRAD, MINIGRAD, TORCH
from harness import REPO, Measurements, Target, fmt_ratio, table, targets_table

BEGIN = "<!-- benchmark summary: written by `python benchmarks/run.py --readme`; do not edit -->"
END = "<!-- end of benchmark summary -->"

RESULTS = os.path.join(REPO, "benchmarks", "results.md")

#: Blocks of results.md that other scripts write (their markers): a new
#: report keeps them, after its own sections.
KEPT = (
    (
        "<!-- derivative accuracy: written by `python benchmarks/accuracy.py --write`; "
        "do not edit -->",
        "<!-- end of derivative accuracy -->",
    ),
)
READMES = (os.path.join(REPO, "README.md"), os.path.join(REPO, "benchmarks", "README.md"))

#: The rows of the summary's table, in order.
ROWS = (MINIGRAD, MICROGRAD, TORCH, BARE, HANDWRITTEN, FLOATS)


def versus_minigrad(ratio: float) -> str:
    """A time relative to minigrad's, in words.

    >>> versus_minigrad(5.23), versus_minigrad(0.8), versus_minigrad(1.0)
    ('5.23x slower', '1.25x faster', '1.00x')
    """
    if ratio == 1.0:
        return fmt_ratio(ratio)
    if ratio > 1.0:
        return f"{fmt_ratio(ratio)} slower"
    return f"{fmt_ratio(1.0 / ratio)} faster"


def _memory(found: Measurements, name: str) -> str:
    built = found.numbers.get(f"bytes {name}")
    if built is None:
        return ""
    return f"{built:.0f} ({found.numbers[f'bytes after {name}']:.0f})"


def _freed(found: Measurements, name: str) -> str:
    left = found.numbers.get(f"cycles {name}")
    if left is None:
        return ""
    return "yes" if left == 0 else f"no: {left:,.0f} objects left to the collector"


def summary(found: Measurements, targets: Sequence[Target], about: str) -> str:
    """The summary in Markdown: ``about`` (the run and the machine), then two tables."""
    rows = [
        [
            name,
            versus_minigrad(found.numbers[f"mlp {name}"]),
            _memory(found, name),
            _freed(found, name),
        ]
        for name in ROWS
        if f"mlp {name}" in found.numbers
    ]
    header = ["", "MLP step time", "bytes per node (after backward)", "graph freed by refcounting"]
    ops = found.numbers.get("mlp ops", 0)
    return "\n\n".join(
        [
            about,
            f"A step of the 2-16-16-1 MLP over 100 points, forward + backward ({ops:,.0f} ops), "
            "relative to minigrad's; the memory of its graph:",
            table(header, rows),
            "minigrad's targets:",
            targets_table(targets, found),
        ]
    )


def about(
    command: str, date: str, machine: str, clock: str, reps: int, versions: Sequence[str]
) -> str:
    """The first line of the summary: the run, the machine and the versions measured."""
    rounds = f"{reps} round{'s' if reps > 1 else ''}"
    return (
        f"One run of `{command}` on {date}: {machine}; {clock} clock, medians over {rounds}; "
        f"{', '.join(versions)}."
    )


def replace_block(text: str, block: str, path: str = "the text") -> str:
    """``text`` with what lies between the markers replaced by ``block``.

    >>> replace_block(f"a\\n{BEGIN}\\nold\\n{END}\\nz\\n", "new").split("\\n")[2:4]
    ['new', '<!-- end of benchmark summary -->']
    """
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"{path}: no {BEGIN!r} ... {END!r} block to rewrite")
    return f"{text[: start + len(BEGIN)]}\n{block}\n{text[end:]}"


def kept_blocks(text: str) -> list[str]:
    """The blocks of :data:`KEPT` in ``text``, each with its markers.

    >>> begin, end = KEPT[0]
    >>> kept_blocks(f"# report\\n{begin}\\ntable\\n{end}\\n") == [f"{begin}\\ntable\\n{end}"]
    True
    """
    found = []
    for begin, end in KEPT:
        start, stop = text.find(begin), text.find(end)
        if start >= 0 and stop > start:
            found.append(text[start : stop + len(end)])
    return found


def publish(report: str, block: str) -> list[str]:
    """Write the report to results.md and the summary into the READMEs; the paths written."""
    # Read every README first: a missing marker stops the run before any file changes.
    texts = {}
    for path in READMES:
        with open(path, encoding="utf-8") as f:
            texts[path] = replace_block(f.read(), block, path)
    kept: list[str] = []
    if os.path.exists(RESULTS):
        with open(RESULTS, encoding="utf-8") as f:
            kept = kept_blocks(f.read())
    with open(RESULTS, "w", encoding="utf-8") as f:
        f.write("\n\n".join([report.rstrip("\n"), *kept]) + "\n")
    for path, text in texts.items():
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return [RESULTS, *READMES]
