"""Naming an engine's bug from the rows of its battery: the classic bugs by their signature.

A wrong gradient is a symptom; which graphs fail, and which pass, points at
the cause (:func:`diagnose`). An op's rows run it alone and inside bigger
graphs (:func:`~minigrad.checking.lab.battery.graphs`); the first of them
to fail that no other op's bug explains names the bug: ``alone``, the op
is wrong on its own (an op built from it follows); ``weighted`` (``f(x) *
w``), its ``_backward`` leaves out ``out.grad``; ``pair`` (``f(x) *
f(y)``), it reads a value from another node; ``reused x`` (``f(x) + x``),
it assigns ``.grad =`` where it must add; ``x * x`` only, it skips
``other`` when it is ``self``. The graph rows name a wrong topological
order, a recursive sort (a note unless depth counts, :func:`recursion`),
equality by value, and a ``backward()`` that replaces ``.grad`` or keeps
state between calls; an output whose ``.grad`` stays 0, a ``backward()``
that does not start it at 1. An op that raises is named from the
traceback, a missing reflected operator from Python's message.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from minigrad.checking.lab.battery import _REFLECTED, METHODS, OP_KINDS
from minigrad.checking.lab.trials import FAILING, Outcome, Row

__all__ = ["diagnose", "family", "how", "recursion"]


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
    name, parts = row.name, row.name.split()
    if name.startswith("x."):
        return name[2:].removesuffix("()")
    return {"-x": "neg", "abs(x)": "abs"}.get(name, parts[1] if len(parts) == 3 else name)


def _symbol_family(symbol: str) -> str:
    """The family of one of the engine's own op symbols (``**-1`` is ``**``, ``ReLU`` relu)."""
    if symbol.startswith("**"):
        return "**"
    lowered = symbol.lower()
    return lowered if lowered in METHODS else symbol


def _at(row: Row) -> str:
    shown = ", ".join(f"{n}={x:.6g}" for n, x in zip(row.operands, row.point, strict=False))
    return f"at {shown}" if shown else ""


def _wrong_gradient(row: Row, graph: str = "", brief: bool = False) -> str:
    """``the right operand y: got 1, expected -1 (sign flipped)`` for each wrong entry of ``graph``.

    ``brief`` leaves the numbers out: ``the right operand y: sign flipped``.
    """
    parts = []
    for e in row.entries:
        got, expected = float(e["got"]), float(e["expected"])  # type: ignore[arg-type]
        digits = 6 if f"{got:.6g}" != f"{expected:.6g}" else 12  # show where they differ
        said = f"got {got:.{digits}g}, expected {expected:.{digits}g} ({how(got, expected)})"
        if not graph or e.get("graph", graph) == graph:
            parts.append(f"{e['role']}: {how(got, expected) if brief else said}")
    return "; ".join(parts) or row.note


def _evidence(row: Row, graph: str) -> str:
    """The failing graph written out at its point, and what came out wrong."""
    where = row.where.get(graph) or f"{row.name} {_at(row)}"
    return f"{where}: {_wrong_gradient(row, graph)}"


def _families(row: Row) -> set[str]:
    """The ops a row's graph holds: from the engine's graph, else from the check's name."""
    if row.ops:
        return {_symbol_family(s) for s in row.ops}
    name = row.name.split()
    return {name[1]} if len(name) == 3 else set()


def _failed(row: Row) -> list[str]:
    """The labels of the row's graphs that failed, in the order they ran."""
    return list(dict.fromkeys(str(e.get("graph", "alone")) for e in row.entries))


#: A graph's kind -> the op that joins the checked op to the output there ("" for none), in
#: the order their failure is most telling; one node as both operands (``x * x``) comes last.
_JOINS = {"alone": "", "weighted": "*", "pair": "*", "reused": "+", "": ""}


def _kind(label: str) -> str:
    return label.split()[0] if label.split()[0] in _JOINS else ""


def _built_from(row: Row, name: str, wrong: set[str]) -> str:
    """The wrong op other than ``name`` the row's graph is built from, when it has no ``name``."""
    if name in row.ops:
        return ""
    return next((f for f in sorted(_families(row) & wrong) if f != name), "")


def _cause(members: list[Row], culprits: set[str], name: str) -> tuple[str, Row] | None:
    """The first graph (in :data:`_JOINS`) that fails and that no other op's bug explains."""
    joins = [(_JOINS[_kind(label)], label, r) for r in members for label in _failed(r)]
    found = [(label, r) for via, label, r in joins if via in ("", name) or via not in culprits]
    return min(found, key=lambda f: list(_JOINS).index(_kind(f[0]))) if found else None


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


_NO_REFLECTED = re.compile(
    r"unsupported operand type\(s\) for (\S+?)(?: or pow\(\))?: '(?:int|float)'"
)


def _errors(errors: list[Row], summary: list[str], notes: dict[str, str]) -> set[str]:
    """One line per error, however many checks it broke; the ops it names."""
    same: dict[tuple[str, str], list[Row]] = {}
    bare: dict[str, str] = {}
    for r in errors:
        where = f" in {[*r.where.values()][-1]}" if r.where else ""
        bare[r.name] = re.sub(r" at \([^()]*\)$", "", r.note).removesuffix(where)
        same.setdefault((r.raised_in, "" if r.raised_in else bare[r.name]), []).append(r)
        notes[r.name] = r.note
    named: set[str] = set()
    for (where, _), members in same.items():
        message = bare[members[0].name]
        names = [r.name for r in members]
        shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
        missing = _NO_REFLECTED.search(message)
        if missing and missing.group(1) in (*_REFLECTED, "**"):
            symbol, dunder = missing.group(1), _REFLECTED.get(missing.group(1), "__rpow__")
            summary.append(f"`{dunder}` is missing, so `2 {symbol} x` fails ({shown}: {message})")
        elif where:
            named.add(where.split("`")[1])
            summary.append(f"{where} raises {message.removeprefix('it raises ')} ({shown})")
        else:
            summary.append(f"{shown}: {message}")
    return named


def diagnose(rows: Sequence[Row]) -> tuple[list[str], dict[str, str]]:
    """The causes the failing rows point at, and a short note for each failing row.

    Returns the summary (one line per cause, most telling first; empty when
    every row of ``rows``, one engine's battery, passed) and ``{row name:
    note}`` for every row that did not pass.

    Example:
        >>> from minigrad.checking.lab.trials import Row
        >>> rows = [Row("x - y", "op", Outcome.FAIL, ["x", "y"], [1.0, 2.0],
        ...             [{"operand": "y", "role": "the right operand y", "got": 1.0,
        ...               "expected": -1.0, "abs": 2.0, "rel": 2.0}]),
        ...         Row("x * y", "op")]
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
    seeds = [r.seed for r in rows if r.seed is not None]
    if fails and seeds and not any(seeds):
        summary.append(
            "`backward()` does not start the output's grad at 1: after backward() the "
            "output's .grad is 0, so nothing arrives anywhere; set `self.grad = 1.0` before "
            "running the nodes' _backward"
        )
        notes.update({r.name: "the output's grad is not started at 1" for r in fails})
        fails = []
    failing = _errors([r for r in bad if r.verdict is Outcome.ERROR], summary, notes)

    forward = [r for r in fails if r.forward is not None]
    for r in forward:
        assert r.forward is not None
        got, expected = r.forward["got"], r.forward["expected"]
        text = f"the forward is wrong {_at(r)}: got {got:.9g}, expected {expected:.9g}"
        summary.append(f"{r.name}: {text}")
        notes[r.name] = "forward wrong"
        failing.add(family(r))

    members: dict[str, list[Row]] = {}
    for r in fails:
        if r.kind in OP_KINDS and r.forward is None:
            members.setdefault(family(r), []).append(r)
    # A row built from another wrong op follows from it (micrograd: a / b is
    # a * b**-1), and a graph joined by a `*` or `+` that is wrong alone is
    # explained by it. Which ops are wrong is known after a first pass.
    joins = {f for f, rs in members.items() if any("alone" in _failed(r) for r in rs)}
    builds = joins | failing
    for _ in range(2):
        causes: dict[str, tuple[str, Row]] = {}
        follows: dict[str, str] = {}
        for name, rs in members.items():
            own = [r for r in rs if not _built_from(r, name, builds)]
            if cause := _cause(own, joins | failing, name):
                causes[name] = cause
            elif len(own) < len(rs):
                follows[name] = next(o for r in rs if (o := _built_from(r, name, builds)))
        joins = {f for f, c in causes.items() if c[0] == "alone"} | set(follows)
        builds = set(causes) | set(follows) | failing
    for name in set(members) - set(causes) - set(follows):
        for r in members[name]:
            notes[r.name] = "follows from the failing op(s) that join it to the output"
    later = []  # what follows from a cause is said after the causes
    for name, other in follows.items():
        notes.update({r.name: f"follows from `{other}`" for r in members[name]})
        later.append(
            f"`{name}` fails too, but each of its graphs is built from `{other}` "
            f"({', '.join(next(r.ops for r in members[name] if other in _families(r)))}): "
            f"fix `{other}` first"
        )
    failing |= set(causes)

    rest = [r for r in fails if r.kind not in (*OP_KINDS, "depth", "twice")]
    identity = [r for r in rest if r.kind == "identity" and not _families(r) & failing]
    if identity:
        r = identity[0]
        summary.append(
            f"two nodes of equal data are taken for one ({r.name} {_at(r)}: "
            f"{_wrong_gradient(r)}): `__eq__` and `__hash__` compare .data, so backward()'s "
            "visited set, holding `u * 1.0`, takes `u` for it and skips it: `u`'s _backward "
            "never runs. Nodes must be equal only to themselves: delete `__eq__` and "
            "`__hash__`"
        )
        for name, (label, _) in list(causes.items()):
            if label != "alone":  # relu(x) + x at x > 0: two nodes of equal data
                del causes[name]
                notes.update({r.name: "equality by value" for r in members[name]})
        notes.update({r.name: "equality by value" for r in rest})
        rest = []

    alone = (
        ""
        if any(c[0] == "alone" for c in causes.values())
        else "every op is right on its own, but "
    )
    assigns = sorted(f for f, (label, _) in causes.items() if label.startswith("reused"))
    for name, (label, r) in causes.items():
        for m in members[name]:
            shown = label if label in _failed(m) else _failed(m)[0]
            said = _wrong_gradient(m, shown, brief=True)
            notes[m.name] = said if shown == "alone" else f"{shown}: {said}"
        if not label.startswith("reused"):
            summary.append(_op_line(name, label, r, [m.name for m in members[name]]))
    if assigns:
        summary.append(_assigns(assigns, causes, rows, alone))
    summary += later

    for r in rest:
        if failing and (not _families(r) or _families(r) & failing):
            notes[r.name] = "follows from the failing op(s)"
    rest = [r for r in rest if r.name not in notes]
    if rest:
        r = next((r for r in rest if r.kind == "order"), rest[0])
        summary.append(
            f"{alone}where an intermediate node is used by two ops the gradient is wrong "
            f"({r.name} {_at(r)}: {_wrong_gradient(r)}), though it is right with a node used "
            "twice in one op: backward() runs a node's _backward before every node "
            "that uses it has added its gradient. The topological order is wrong: list each "
            "node after all the nodes it was made from (a post-order depth-first search from "
            "the output), then walk that list in reverse"
        )
        notes.update({r.name: "topological order" for r in rest})

    for r in fails:
        if r.kind == "depth" and r.depth:
            summary.append(recursion(r))
            notes[r.name] = f"RecursionError at depth {r.depth}"
        elif r.kind not in ("depth", "twice") or r.name in notes:
            continue
        elif summary:  # what is wrong elsewhere explains it
            notes[r.name] = "follows from the failures above"
        elif r.replaces:
            summary.append(
                f"`backward()` replaces `.grad` instead of adding: {r.note} "
                f"({_wrong_gradient(r)}); every op adds (`+=`), so backward() itself zeroes "
                "or assigns the .grad it starts from; zeroing is the caller's job (zero_grad)"
            )
            notes[r.name] = "backward() replaces .grad"
        elif r.kind == "twice" and r.first_pass:
            summary.append(
                "backward() keeps state between calls: right on the first graph, wrong on a "
                f"later one ({r.note}): a visited set or a topological order kept in the "
                "class, a global or a default argument such as visited=set(); make them "
                "afresh in every call"
            )
            notes[r.name] = "state kept between backward() calls"
        else:
            notes[r.name] = _wrong_gradient(r)
            summary.append(f"{r.name} {_at(r)}: {_wrong_gradient(r)}")
    return summary, notes


def _left_out(row: Row) -> bool:
    """Whether each wrong entry of the weighted graph is the right one divided by its weight."""
    return all(
        abs(float(e["got"]) * row.weight - float(e["expected"]))  # type: ignore[arg-type]
        <= 1e-8 * max(1.0, abs(float(e["expected"])))  # type: ignore[arg-type]
        for e in row.entries
        if e["graph"] == "weighted"
    )


def _op_line(name: str, label: str, r: Row, failing: list[str]) -> str:
    """The line for an op whose first telling graph ``label`` fails, ``r`` its row there."""
    seen = _evidence(r, label)
    if label == "alone":
        listed = f" (failing: {', '.join(failing)})" if len(failing) > 1 else ""
        return f"`{name}` is wrong on its own: {seen}{listed}"
    if label == "weighted":
        bug = "`_backward` leaves out `out.grad`" if _left_out(r) else "derivative is off"
        return (
            f"`{name}`'s {bug}: right at the output, where out.grad is 1, wrong under a "
            f"weight ({seen}): multiply what it adds by `out.grad`"
        )
    if label == "pair":
        return (
            f"`{name}`'s `_backward` reads a value from another node: right alone and under a "
            f"weight, wrong with two of its nodes in one graph ({seen}): use only its own "
            "node's numbers (`self`, `other`, `out`), not a global or a class attribute "
            "that the last node overwrote"
        )
    return (
        f"`{name}`'s `_backward` gets {label} wrong, one node as both operands ({seen}), "
        "though a node used by two ops is right: when `other` is `self`, both of its terms "
        "must still be added"
    )


def _assigns(
    ops: list[str], causes: dict[str, tuple[str, Row]], rows: Sequence[Row], alone: str
) -> str:
    """The line for ``.grad =`` instead of ``+=``, naming the op(s) whose reused graph fails."""
    label, r = causes[ops[0]]
    fine = [
        f"`{family(x)}`" for x in rows if x.name in ("x + y", "x * y") and x.verdict is Outcome.OK
    ]
    unlike = f" (unlike {' and '.join(fine)})" if fine else ""
    whose = " and ".join(f"`{op}`'s" for op in ops) + " _backward assign" + "s"[len(ops) > 1 :]
    return (
        f"{alone}a node used twice by {' and '.join(f'`{op}`' for op in ops)} gets one of its "
        f"gradients only{unlike} ({_evidence(r, label)}): {whose} `.grad = ...` where it "
        "must add, `.grad += ...`"
    )
