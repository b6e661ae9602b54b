"""Naming an engine's bug from the rows of its battery: the classic bugs by their signature.

A wrong gradient is a symptom; which checks fail, and which pass, points at
the cause (:func:`diagnose`):

* an op whose backward is wrong on its own: its rows fail, with the operand
  and how (sign flipped, twice, nothing arrives); rows whose graph is built
  from that op (micrograd writes ``a / b`` as ``a * b**-1``) follow from it;
* right for every op on its own, wrong where a node is used twice (``x * x``,
  ``x * y + x``): a ``_backward`` assigns ``.grad =`` where it must add;
* right for every op and for a node used twice by one op, wrong where an
  intermediate node is used by two ops: the topological order runs a node's
  ``_backward`` before all its users have added their gradient;
* a ``RecursionError`` in a deep chain: a recursive topological sort (a
  failure only when the caller counts depth; else the row's verdict is
  ``note`` and :func:`recursion` says it apart from the diagnosis);
* right for every op, wrong where a node has a copy of the same data
  (``u * 1.0``): ``__eq__``/``__hash__`` by value merge them in a visited set;
* right on the first ``backward()``, wrong on a second fresh graph of the
  same leaves, or on a graph built on an earlier one's output where the same
  graph built afresh is right: state kept between calls (a visited set or an
  order kept in the class or in a default argument).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from minigrad.checking.lab.battery import METHODS
from minigrad.checking.lab.trials import FAILING, Outcome, Row

__all__ = ["diagnose", "family", "how", "recursion"]

_OP_KINDS = ("op", "number", "reflected")


def how(got: float, expected: float) -> str:
    """What a wrong gradient looks like next to the right one, in words.

    Example:
        >>> how(1.0, -1.0), how(4.0, 2.0), how(0.0, 3.0), how(0.5, 2.0)
        ('sign flipped', 'twice the right value', 'nothing arrives', 'off by a factor of 0.25')
        >>> how(2.000002, 2.0)
        'off by a relative 1e-06'
    """
    if got == 0.0 and expected != 0.0:
        return "nothing arrives"
    if expected == 0.0:
        return f"should be 0, got {got:.6g}"
    ratio = got / expected
    for value, words in ((-1.0, "sign flipped"), (2.0, "twice the right value"), (0.5, "half")):
        if abs(ratio - value) <= 1e-6:
            return words
    if 0.9 < ratio < 1.1:  # a factor would round to 1: the relative error says how far
        return f"off by a relative {abs(ratio - 1.0):.2g}"
    return f"off by a factor of {ratio:.3g}"


def family(row: Row) -> str:
    """The op a row checks: ``-`` for ``x - y``, ``x - c`` and ``c - x``; ``exp`` for ``x.exp()``.

    Example:
        >>> family(Row("x ** 0.5", "op")), family(Row("c / x", "reflected"))
        ('**', '/')
    """
    name = row.name
    if name.startswith("x."):
        return name[2:].removesuffix("()")
    if name == "-x":
        return "neg"
    if name == "abs(x)":
        return "abs"
    parts = name.split()
    return parts[1] if len(parts) == 3 else name


def _symbol_family(symbol: str) -> str:
    """The family of one of the engine's own op symbols (``**-1`` is ``**``, ``ReLU`` relu)."""
    if symbol.startswith("**"):
        return "**"
    lowered = symbol.lower()
    return lowered if lowered in METHODS else symbol


def _at(row: Row) -> str:
    shown = ", ".join(f"{n}={x:.6g}" for n, x in zip(row.operands, row.point, strict=False))
    return f"at {shown}" if shown else ""


def _how_entry(entry: dict[str, object]) -> str:
    got, expected = entry["got"], entry["expected"]
    assert isinstance(got, float | int) and isinstance(expected, float | int)
    return f"{entry['role']}: {how(float(got), float(expected))}"


def _wrong_gradient(row: Row) -> str:
    """``the right operand y: got 1, expected -1 (sign flipped)`` for each wrong entry."""
    parts = []
    for e in row.entries:
        got, expected = float(e["got"]), float(e["expected"])  # type: ignore[arg-type]
        digits = 6 if f"{got:.6g}" != f"{expected:.6g}" else 12  # show where they differ
        parts.append(
            f"{e['role']}: got {got:.{digits}g}, expected {expected:.{digits}g} "
            f"({how(got, expected)})"
        )
    return "; ".join(parts) or row.note


def _families(row: Row) -> set[str]:
    """The ops a row's graph holds: from the engine's graph, else from the check's name."""
    if row.ops:
        return {_symbol_family(s) for s in row.ops}
    name = row.name.split()
    return {name[1]} if len(name) == 3 else set()


def _assigns(reuse: Sequence[Row], rows: Sequence[Row], alone: str) -> str:
    """The line for ``.grad =`` instead of ``+=``, naming the op(s) where it shows alone."""
    ops = sorted({f for r in reuse if len(fs := _families(r)) == 1 for f in fs})
    r = next((r for r in reuse if len(_families(r)) == 1), reuse[0])
    if not ops:
        return (
            f"{alone}a node used twice gets one of its gradients only ({r.name} {_at(r)}: "
            f"{_wrong_gradient(r)}): a _backward assigns `.grad = ...` where it must add, "
            "`.grad += ...`"
        )
    named = " and ".join(f"`{op}`" for op in ops)
    fine = [
        f"`{f}`"
        for x in rows
        if x.kind == "reuse" and x.verdict is Outcome.OK and len(fs := _families(x)) == 1
        for f in fs
    ]
    unlike = f" (unlike {' and '.join(fine)})" if fine else ""
    whose = (
        " and ".join(f"`{op}`'s" for op in ops)
        + " _backward "
        + ("assign" if len(ops) > 1 else "assigns")
    )
    return (
        f"{alone}a node used twice by {named} gets one of its gradients only{unlike} "
        f"({r.name} {_at(r)}: {_wrong_gradient(r)}): {whose} `.grad = ...` where it must "
        "add, `.grad += ...`"
    )


def recursion(row: Row) -> str:
    """What a RecursionError in the deep chain means, and what to do (a note or a failure).

    Example:
        >>> print(recursion(Row("chain of 5000 ops", "depth", Outcome.NOTE, depth=991))[:57])
        chain of 5000 ops: RecursionError at depth 991: the topol
    """
    return (
        f"{row.name}: RecursionError at depth {row.depth}: the topological sort in "
        "backward() calls itself once per node, and Python stops at about "
        "sys.getrecursionlimit() (1000) nested calls; walk the graph with an "
        "explicit stack (a list you push and pop) instead"
    )


def diagnose(rows: Sequence[Row]) -> tuple[list[str], dict[str, str]]:
    """The causes the failing rows point at, and a short note for each failing row.

    Args:
        rows: One engine's rows, all of its battery.

    Returns:
        The summary (one line per cause, most telling first; empty when
        every row passed) and ``{row name: note}`` for every row that did
        not pass.

    Example:
        >>> from minigrad.checking.lab.trials import Row
        >>> rows = [Row("x - y", "op", Outcome.FAIL, ["x", "y"], [1.0, 2.0],
        ...             [{"operand": "y", "role": "the right operand y", "got": 1.0,
        ...               "expected": -1.0, "abs": 2.0, "rel": 2.0}]),
        ...         Row("x * x", "reuse")]
        >>> summary, notes = diagnose(rows)
        >>> for part in summary[0].split(": "):
        ...     print(part)
        `-` is wrong on its own
        x - y at x=1, y=2
        the right operand y
        got 1, expected -1 (sign flipped)
    """
    summary: list[str] = []
    notes: dict[str, str] = {}
    bad = [r for r in rows if r.verdict in FAILING]
    fails = [r for r in bad if r.verdict is Outcome.FAIL]

    for r in fails:
        if r.kind == "twice" and r.first_pass:
            summary.append(
                "backward() keeps state between calls: right on the first graph, wrong on a "
                f"later one ({r.note}): a visited set or a topological order kept in the "
                "class, a global or a default argument such as visited=set(); make them "
                "afresh in every call"
            )
            notes[r.name] = "state kept between backward() calls"

    errors = [r for r in bad if r.verdict is Outcome.ERROR]
    # One line per error, however many checks it broke (a typo in __mul__
    # breaks every check that multiplies).
    same: dict[str, list[Row]] = {}
    for r in errors:
        same.setdefault(re.sub(r" at \([^()]*\)$", "", r.note), []).append(r)
        notes[r.name] = r.note
    for message, members in same.items():
        names = [r.name for r in members]
        shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
        summary.append(f"{shown}: {message}")

    forward = [r for r in fails if r.forward is not None]
    for r in forward:
        assert r.forward is not None
        got, expected = r.forward["got"], r.forward["expected"]
        text = f"the forward is wrong {_at(r)}: got {got:.9g}, expected {expected:.9g}"
        summary.append(f"{r.name}: {text}")
        notes[r.name] = "forward wrong"

    ops = [r for r in fails if r.kind in _OP_KINDS and r.forward is None]
    failing_families: dict[str, list[Row]] = {}
    for r in ops:
        failing_families.setdefault(family(r), []).append(r)
    # A family whose every failing row is built from another failing family's
    # op follows from it (micrograd: a / b is a * b**-1).
    follows: dict[str, str] = {}
    for name, members in failing_families.items():
        for other in failing_families:
            if other != name and all(
                other in {_symbol_family(s) for s in r.ops} and name not in r.ops for r in members
            ):
                follows[name] = other
    for name, members in failing_families.items():
        first = members[0]
        if name in follows:
            for r in members:
                notes[r.name] = f"follows from `{follows[name]}` (its graph: {', '.join(r.ops)})"
            continue
        shown = ", ".join(r.name for r in members)
        summary.append(
            f"`{name}` is wrong on its own: {first.name} {_at(first)}: {_wrong_gradient(first)}"
            + (f" (failing: {shown})" if len(members) > 1 else "")
        )
        for r in members:
            notes[r.name] = "; ".join(_how_entry(e) for e in r.entries) or r.note
    for name, other in follows.items():
        summary.append(
            f"`{name}` fails too, but each of its graphs is built from `{other}` "
            f"({', '.join(failing_families[name][0].ops)}): fix `{other}` first"
        )

    # A failing op explains a failing composite whose graph holds it; what
    # no failing op explains is a bug of its own (two bugs, two lines).
    failing = set(failing_families) | {family(r) for r in [*forward, *errors]}
    rest = [r for r in fails if r.name not in notes and r.kind not in ("depth", "twice")]
    for r in rest:
        used = _families(r)
        if failing and (not used or used & failing):
            notes[r.name] = "follows from the failing op(s)"
    rest = [r for r in rest if r.name not in notes]
    alone = "every op is right on its own, but " if not failing else ""
    identity = [r for r in rest if r.kind == "identity"]
    reuse = [r for r in rest if r.kind == "reuse"]
    order = [r for r in rest if r.kind in ("order", "composite")]
    if identity:
        r = identity[0]
        summary.append(
            f"{alone}two nodes of equal data are taken for one ({r.name} {_at(r)}: "
            f"{_wrong_gradient(r)}): `__eq__` and `__hash__` compare .data, so backward()'s "
            "visited set, holding `u * 1.0`, takes `u` for it and skips it: `u`'s _backward "
            "never runs. Nodes must be equal only to themselves: delete `__eq__` and "
            "`__hash__`"
        )
        for r in [*identity, *order]:
            notes[r.name] = "equality by value"
        order = []
    if reuse:
        summary.append(_assigns(reuse, rows, alone))
        for r in [*reuse, *order]:
            notes[r.name] = "= instead of +=" if r.kind == "reuse" else "follows from = vs +="
    elif order:
        r = next((r for r in order if r.kind == "order"), order[0])
        summary.append(
            f"{alone}where an intermediate node is used by two ops the gradient is wrong "
            f"({r.name} {_at(r)}: {_wrong_gradient(r)}), though it is right with a node used "
            "twice in one op: backward() runs a node's _backward before every node "
            "that uses it has added its gradient. The topological order is wrong: list each "
            "node after all the nodes it was made from (a post-order depth-first search from "
            "the output), then walk that list in reverse"
        )
        for r in order:
            notes[r.name] = "topological order"

    for r in fails:
        if r.kind == "depth" and r.depth:
            summary.append(recursion(r))
            notes[r.name] = f"RecursionError at depth {r.depth}"
        elif r.kind in ("depth", "twice") and r.name not in notes:
            if summary:  # wrong on the first pass too: what is wrong elsewhere explains it
                notes[r.name] = "follows from the failures above"
            else:
                notes[r.name] = _wrong_gradient(r)
                summary.append(f"{r.name} {_at(r)}: {_wrong_gradient(r)}")
    return summary, notes
