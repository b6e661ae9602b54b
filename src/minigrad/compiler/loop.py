"""The loop form: a batch whose examples repeat one subgraph, run as one loop over them.

:func:`_units` finds the repeated, self-contained subgraphs of the traced
graph (an example's loss, say: the units), of :data:`LOOP_MIN_OPS` ops or
more; :func:`_write_loop` writes each unit's statements with its own names
(:class:`_Renamer`) and, when every unit's text is the same, the source with
one loop over the units for the forward pass and one for the reverse pass.
Otherwise the code is written out (:mod:`minigrad.compiler.straight`).
"""

from __future__ import annotations

import collections
import functools
import re
from typing import NamedTuple

from minigrad.compiler.templates import (
    _TOKEN,
    _Block,
    _block_lines,
    _Code,
    _head,
    _name_of,
    _zero,
)
from minigrad.core.value import Value, _args

__all__ = ["LOOP_MIN_OPS"]

#: Ops in a repeated subgraph (an example's loss, say) from which the
#: repetitions run as one loop over the examples. Measured (500 examples, step
#: time of the loop over that of the code written out): 7 ops 1.35x, 24 ops
#: 0.96x, 67 ops 0.94x; the loop also compiles in a fraction of the time.
LOOP_MIN_OPS = 20


def _units(
    fwd: list[Value], is_input: dict[Value, int]
) -> tuple[dict[Value, int], list[Value]] | None:
    """Repeated, self-contained subgraphs (an example's loss, say): ``(unit_of, roots)``.

    Every node gets an interned structural key: its rule and its arguments'
    keys, where a parameter is itself, all inputs are alike and a constant is
    its repr. Of the keys shared by at least two subgraphs of at least
    :data:`LOOP_MIN_OPS` ops, the family largest in count times size whose
    subgraphs are disjoint and used only through their roots gives the units,
    numbered in forward order. None when there is no such family.
    """
    intern: dict[object, int] = {}
    key_of: dict[Value, int] = {}
    size: dict[Value, int] = {}
    uses: dict[Value, int] = {}
    members: dict[int, list[Value]] = {}
    for n in fwd:
        rule = n._rule
        if rule is None:
            key_of[n] = intern.setdefault("x" if n in is_input else id(n), len(intern))
            size[n] = 0
            continue
        parts: list[object] = [id(rule)]
        total = 1
        for a in _args(n):
            if isinstance(a, Value):
                parts.append(key_of[a])
                total += size[a]
                uses[a] = uses.get(a, 0) + 1
            else:
                parts.append(repr(a))
        k = key_of[n] = intern.setdefault(tuple(parts), len(intern))
        size[n] = min(total, 1 << 40)  # a tree's size: shared nodes count again
        members.setdefault(k, []).append(n)
    families = [m for m in members.values() if len(m) >= 2 and size[m[0]] >= LOOP_MIN_OPS]
    families.sort(key=lambda m: len(m) * size[m[0]], reverse=True)
    for roots in families[:3]:
        unit_of = _claim(roots, uses)
        if unit_of is not None and fwd[-1] not in unit_of:
            return unit_of, roots
    return None


def _claim(roots: list[Value], uses: dict[Value, int]) -> dict[Value, int] | None:
    """Node -> unit for the roots' subgraphs, if disjoint and used only inside (else None)."""
    unit_of: dict[Value, int] = {}
    for e, root in enumerate(roots):
        inner = {root: 0}  # node -> its uses from inside the unit
        stack = [root]
        while stack:
            for a in _args(stack.pop()):
                if isinstance(a, Value) and a._rule is not None:
                    count = inner.get(a)
                    if count is None:
                        if a in unit_of:
                            return None  # shared with an earlier unit
                        stack.append(a)
                        count = 0
                    inner[a] = count + 1
        for n, count in inner.items():
            if n is not root and count != uses[n]:
                return None  # an inner value is used outside its unit
            unit_of[n] = e
    return unit_of


class _Units(NamedTuple):
    """Which slots belong to which unit, and each root's gradient slot (-1: none)."""

    roots: list[Value]
    slot_unit: dict[int, int]
    root_slot: list[int]
    root_grad: list[int]


class _Renamer:
    """Names for unit ``e``'s placeholders: ``a<k>`` for its own slots (in order of
    appearance), ``u<k>`` for its inputs (``inputs`` lists them), ``gr`` for its
    root's gradient; parameters and other slots keep their global names."""

    def __init__(self, units: _Units, e: int) -> None:
        self.units = units
        self.e = e
        self.local: dict[int, str] = {}
        self.inputs: dict[int, str] = {}

    def __call__(self, text: str) -> str:
        return _TOKEN.sub(self.name, text)

    def name(self, m: re.Match[str]) -> str:
        slot, kind, i = m.groups()
        if slot is not None:
            s = int(slot)
            if s == self.units.root_grad[self.e]:
                return "gr"
            if self.units.slot_unit.get(s) == self.e:
                return self.local.setdefault(s, f"a{len(self.local)}")
            return f"t{s}"
        if kind == "P":
            return f"p{i}"
        return self.inputs.setdefault(int(i), f"u{len(self.inputs)}")


def _write_loop(code: _Code, units: _Units, names: dict[str, object]) -> str | None:
    """The source with one loop over the units (examples), or None if they do not repeat.

    Each unit's statements are written with its own names (``a<k>`` for its
    values and gradients, ``u<k>`` for its inputs, ``gr`` for its root's
    gradient); the loop form is used only when every unit's text is the same,
    and the reverse pass visits the units one after another, with no line of
    other code between them, as eager ``backward`` would.
    """
    n = len(units.roots)
    rest_blocks: list[list[_Block]] = [[], []]  # before the units, after them
    unit_blocks: list[list[_Block]] = [[] for _ in range(n)]
    visited: list[int] = []
    for block in code.blocks:
        if not block[1]:
            continue
        e = block[3]
        if e < 0:
            rest_blocks[1 if visited else 0].append(block)
            if visited and visited[-1] != -1:
                visited.append(-1)
        else:
            if visited[-1:] != [e]:
                visited.append(e)
            unit_blocks[e].append(block)
    if visited and visited[-1] == -1:
        visited.pop()
    if visited not in ([], list(range(n - 1, -1, -1))):
        return None  # the units are not visited one after another, last first
    unit_lines: list[list[str]] = [[] for _ in range(n)]
    rest_lines: list[str] = []
    for e, slot, text in code.fwd_lines:
        (rest_lines if e < 0 else unit_lines[e]).append(f"\x00{slot}\x01 = {text}")
    if unit_blocks[0] and -1 in units.root_grad:
        return None  # a root whose gradient has no slot of its own to hand the loop
    forward = backward = ""
    index: list[tuple[int, ...]] = []
    for e in range(n):
        back = [line for block in unit_blocks[e] for line in _block_lines(block)]
        rename = _Renamer(units, e)
        texts = (rename("\n".join(unit_lines[e])), rename("\n".join(back)))
        if e == 0:
            forward, backward = texts
            root_name = rename.local[units.root_slot[0]]
        elif texts != (forward, backward):
            return None
        index.append(tuple(rename.inputs))
    k = len(index[0])
    defined = set(re.findall(r"\b[au]\d+\b", forward))
    saved = [v for v in dict.fromkeys(re.findall(r"\b[au]\d+\b", backward)) if v in defined]

    sub = functools.partial(_TOKEN.sub, _name_of(False))
    rest = [sub(line) for line in rest_lines]
    rest_back = [
        [sub(line) for block in part for line in _block_lines(block)] for part in rest_blocks
    ]
    inputs = any(re.search(r"\bx\d", line) for line in [*rest, *rest_back[0], *rest_back[1]])
    lines = _head(code._replace(n_inputs=code.n_inputs if inputs else 0))
    # CPython numbers a function's locals in order of first appearance, and a
    # load of one numbered above 255 takes an EXTENDED_ARG prefix: the names
    # the loops use most are named first (5-10% off the MLP step).
    used = collections.Counter(re.findall(r"\b(?:[apu]\d+|t\d+|gr)\b", forward + backward))
    hot = [name for name, _ in used.most_common(240)]
    if hot:
        lines.insert(1, f"    {' = '.join(hot)} = None")
    names["_IDX"] = tuple(index)
    lines.append("    K = []")
    lines.append("    R = []")
    targets = ", ".join(f"i{j}" for j in range(k))
    lines.append(f"    for {targets + ',' if k else '_'} in _IDX:")
    lines += [f"        u{j} = X[i{j}]" for j in range(k)]
    lines += [f"        {line}" for line in forward.split("\n")]
    if backward:
        lines.append(f"        K.append(({''.join(f'{v}, ' for v in saved)}))")
    lines.append(f"        R.append({root_name})")
    for i in range(0, n, 100):
        roots = "".join(f"t{s}, " for s in units.root_slot[i : i + 100])
        lines.append(f"    {roots}= R[{i}:{i + 100}]")
    lines += [f"    {line}" for line in rest]
    lines.append(f"    t{code.seed} = yield {sub(code.out)}")
    lines += [f"    {sub(line)}" for line in _zero(code.multi)]  # parameters' slots
    lines += [f"    {line}" for line in rest_back[0]]
    if backward:
        grs = ", ".join(f"t{units.root_grad[e]}" for e in range(n - 1, -1, -1))
        unpack = f"({''.join(f'{v}, ' for v in saved)})" if saved else "_"
        lines.append(f"    for gr, {unpack} in zip(({grs},), reversed(K)):")
        lines += [f"        {line}" for line in backward.split("\n")]
    lines += [f"    {line}" for line in rest_back[1]]
    lines.append(f"    yield ({''.join(f't{k}, ' for k in code.grads)})")
    return "\n".join(lines) + "\n"
