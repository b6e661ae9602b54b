"""``run.py --readme``: the report into results.md, the summary into the READMEs.

The summary (the machine; side by side, what a user compares: the MLP step
against micrograd, torch 0-d and plain floats, compiled and not, with its
memory, and gradcheck against torch's per call) is
written between two marker comments in README.md and benchmarks/README.md;
everything outside the markers is left as it was. This is the only place the
summary is made: edit this file, not the tables in the READMEs.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from engines import COMPILED, FLOATS, HANDWRITTEN, MICROGRAD, MINIGRAD, TORCH
from harness import REPO, Measurements, Target, fmt_ratio, table

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

#: The rows of the summary's MLP table, in order: what a user would compare
#: minigrad with. (The floor engine, a measuring stick, is in results.md.)
ROWS = (MINIGRAD, MICROGRAD, TORCH, HANDWRITTEN, FLOATS, COMPILED)
#: The sizes of section (g) whose gradcheck is compared with torch's.
CHECK_SIZES = (10, 30, 100)


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
    """The summary in Markdown: ``about`` (the run and the machine), then the ratios.

    ``targets`` are not shown here: the project's own goals, met or not, are
    in results.md, which the summary links.
    """
    del targets
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
    parts = [
        about,
        f"A step of micrograd's 2-16-16-1 MLP over 100 points, forward + backward "
        f"({ops:,.0f} ops), relative to minigrad's; the memory of its graph:",
        table(header, rows),
    ]
    compiled = found.numbers.get("mlp compiled / floats")
    if compiled is not None:
        parts.append(
            f"`minigrad.compile`'s step (forward and backward) takes {fmt_ratio(compiled)} "
            "the time of the same loss evaluated forward only on plain floats."
        )
    checks = [
        # The number is minigrad's time over torch's; the table says torch's over minigrad's.
        [f"N = {n}", versus_minigrad(1.0 / found.numbers[f"gradcheck torch {n}"])]
        for n in CHECK_SIZES
        if f"gradcheck torch {n}" in found.numbers
    ]
    if checks:
        parts.append(
            "`torch.autograd.gradcheck` per call, relative to `minigrad.gradcheck`'s, on "
            "the same function of N inputs (a ring of tanh(x_i * x_(i+1)), both at their "
            "defaults):"
        )
        parts.append(table(["inputs", "torch's gradcheck"], checks))
    parts.append(
        "The whole report, and minigrad's own performance targets with whether each is "
        "met, are in [benchmarks/results.md](benchmarks/results.md)."
    )
    return "\n\n".join(parts)


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


def linked_from(path: str, block: str) -> str:
    """``block`` with its links to results.md made relative to the README at ``path``.

    >>> linked_from(os.path.join(REPO, "benchmarks", "README.md"), "[r](benchmarks/results.md)")
    '[r](results.md)'
    """
    folder = os.path.relpath(os.path.dirname(RESULTS), os.path.dirname(path))
    target = "results.md" if folder == "." else f"{folder}/results.md"
    return block.replace("](benchmarks/results.md)", f"]({target})")


def publish(report: str, block: str) -> list[str]:
    """Write the report to results.md and the summary into the READMEs; the paths written."""
    # Read every README first: a missing marker stops the run before any file changes.
    texts = {}
    for path in READMES:
        with open(path, encoding="utf-8") as f:
            texts[path] = replace_block(f.read(), linked_from(path, block), path)
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


# Untimed sections alone: ``run.py --only h,i --readme``.

#: The line after the last section of a report.
_AFTER_SECTIONS = "\nReference loop at the end"


def section_block(text: str, letter: str) -> tuple[int, int] | None:
    """Where section ``letter`` lies in a report: from its heading to the next one.

    >>> text = "# r\\n\\n## (a) A\\n\\nx\\n\\n## (b) B\\n\\ny\\n\\n"
    >>> text += "Reference loop at the end: 1 ms.\\n"
    >>> start, end = section_block(text, "b")
    >>> text[start:end]
    '## (b) B\\n\\ny\\n'
    >>> section_block(text, "c") is None
    True
    """
    start = text.find(f"\n## ({letter}) ")
    if start < 0:
        return None
    ends = [e for e in (text.find("\n## ", start + 1), text.find(_AFTER_SECTIONS, start)) if e >= 0]
    return start + 1, (min(ends) if ends else len(text))


def replace_sections(old: str, new: str, letters: Sequence[str]) -> str:
    """``old`` with the blocks of sections ``letters`` taken from ``new``.

    A section ``old`` does not hold yet goes after its last section.

    >>> old = "## (a) A\\n\\nx\\n\\nReference loop at the end: 1 ms.\\n"
    >>> new = "# r\\n\\n## (h) H\\n\\nfresh\\n\\nReference loop at the end: 2 ms.\\n"
    >>> print(replace_sections(old, new, ["h"]))
    ## (a) A
    <BLANKLINE>
    x
    <BLANKLINE>
    ## (h) H
    <BLANKLINE>
    fresh
    <BLANKLINE>
    Reference loop at the end: 1 ms.
    <BLANKLINE>
    """
    for letter in letters:
        found = section_block(new, letter)
        if found is None:
            raise ValueError(f"the new report has no section ({letter})")
        block = new[found[0] : found[1]].rstrip("\n") + "\n"
        where = section_block(old, letter)
        if where is None:
            at = old.find(_AFTER_SECTIONS)
            at = len(old) if at < 0 else at + 1
            where = (at, at)
            block += "\n"
        old = old[: where[0]] + block + old[where[1] :]
    return old


def replace_rows(text: str, rows: Sequence[Sequence[str]], anchor: str) -> str:
    """``text`` with each table row whose first cell is a row's name replaced by it.

    A row not in ``text`` is added after the last row of the table that
    follows ``anchor`` (nothing is added when ``anchor`` is not in ``text``).

    >>> text = "## Targets\\n\\n| target | status |\\n|---|---|\\n| a | met |\\n\\nend\\n"
    >>> print(replace_rows(text, [["a", "NOT met"], ["b", "met"]], "## Targets"))
    ## Targets
    <BLANKLINE>
    | target | status |
    |---|---|
    | a | NOT met |
    | b | met |
    <BLANKLINE>
    end
    <BLANKLINE>
    """
    lines = text.split("\n")
    for row in rows:
        line = "| " + " | ".join(row) + " |"
        hit = [k for k, old in enumerate(lines) if old.startswith(f"| {row[0]} |")]
        if hit:
            lines[hit[0]] = line
            continue
        if anchor not in lines:
            continue
        k = lines.index(anchor) + 1
        while k < len(lines) and not lines[k].startswith("|"):
            k += 1
        while k < len(lines) and lines[k].startswith("|"):
            k += 1
        lines.insert(k, line)
    return "\n".join(lines)


def publish_sections(
    report: str, letters: Sequence[str], targets: Sequence[Target], found: Measurements
) -> list[str]:
    """Put sections ``letters`` of ``report`` into results.md and their targets' rows
    into it and the READMEs' summaries; everything else stays as the last whole run
    left it. The paths written."""
    rows = [t.row(found) for t in targets]
    with open(RESULTS, encoding="utf-8") as f:
        results = replace_rows(replace_sections(f.read(), report, letters), rows, "## Targets")
    texts = {}
    for path in READMES:
        with open(path, encoding="utf-8") as f:
            texts[path] = replace_rows(f.read(), rows, "minigrad's targets:")
    with open(RESULTS, "w", encoding="utf-8") as f:
        f.write(results)
    for path, text in texts.items():
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return [RESULTS, *READMES]
