"""From a traced graph to the source of one Python function: its statements and their form.

:func:`_generate` numbers the variables, writes the forward pass and the
reverse pass as statements (:class:`~minigrad.compiler.templates._Code`), and
has them written as one loop over the examples (:mod:`minigrad.compiler.loop`)
or, when the examples do not repeat, one statement after another
(:mod:`minigrad.compiler.straight`).

How the code is written:

* An op whose rule declares an inline form (``Rule.inline``, an
  :class:`~minigrad.core.inline.Inline`: the built-in ones beside their rules
  in :mod:`minigrad.core.rules`, where a test proves each equal to its rule's
  functions) is written as those expressions. Any other rule's ``forward``
  and ``partials`` are called by reference: the rule stays the one source of
  truth.
* A temporary used once, whose value the reverse pass does not need, is fused
  into the expression that uses it (``b + w0 * x0 + w1 * x1 ...``), up to
  :data:`MAX_DEPTH` levels and :data:`MAX_FUSED` ops per expression (CPython
  refuses deeper nesting).
* A batch whose examples repeat one subgraph (of
  :data:`~minigrad.compiler.loop.LOOP_MIN_OPS` ops or more) runs as one loop
  over the examples, forward and reverse, when every example's code is the
  same text (:func:`~minigrad.compiler.loop._units`,
  :func:`~minigrad.compiler.loop._write_loop`).
* A parameter's gradient is added into only when its user's gradient is not
  0 (``if g:``), as in eager ``backward``. A computed node's gradient is
  gathered where eager reaches it and inlined into its one use: behind a
  relu, into the true branch, so an idle neuron costs one test.
* relu and abs are expressions (``x if x > 0.0 else 0.0 ...``) evaluated on
  every call: their branches are not frozen.
* An op that can turn a number that is not finite into a finite one
  (``tanh(inf)`` is 1.0) is guarded, and a rule called by reference is called
  through a check (:func:`~minigrad.compiler.templates.checked`), so that
  where eager evaluation raises, the loss comes out NaN and the call is
  evaluated eagerly: compiled results equal eager ones, errors included.
* Above :data:`~minigrad.compiler.straight.CHUNK_ABOVE` statements the code is
  split into functions of :data:`~minigrad.compiler.straight.CHUNK_SIZE`
  statements sharing one list of variables (below, one function compiles in
  linear time and runs faster; see docs/compile.md).
"""

from __future__ import annotations

import re

from minigrad.compiler.loop import _Units, _units, _write_loop
from minigrad.compiler.straight import _write
from minigrad.compiler.templates import _Block, _Code, _const, _ref, bind, checked, guarded
from minigrad.core.inline import Inline
from minigrad.core.rule import Rule
from minigrad.core.value import Value, _args

__all__ = ["MAX_DEPTH", "MAX_FUSED"]

#: Deepest nesting of fused ops in one expression (CPython refuses 200 parentheses).
MAX_DEPTH = 24
#: Most ops fused into one expression (a balanced tree of depth 24 would be huge).
MAX_FUSED = 64


#: A slope template that is 1.0 or 0.0 (relu's): its condition, so that the
#: product is ``(g if c else 0.0)`` and a wide gathered sum runs only ``if c:``.
_GATE = re.compile(r"\(1\.0 if ((?:(?! else ).)+) else 0\.0\)")
#: Code that can raise when it runs: a call (a partial by reference, math's
#: functions), a division, a power. Sums and products of floats never raise.
_MAY_RAISE = re.compile(r"[A-Za-z_]\w*\(|/|\*\*")


def _generate(
    order: list[Value], out: Value, is_input: dict[Value, int], params: list[Value]
) -> tuple[str, dict[str, object]]:
    """The source of ``_run(P, X)``, a generator: yields the loss, receives the seed, yields grads.

    The reverse pass visits the nodes in the order eager ``backward`` does and
    adds the same products in the same order, so gradients equal eager ones.
    """
    fwd = order[::-1]
    found = _units(fwd, is_input)
    unit_of, roots = found if found is not None else ({}, [])
    param_index = {p: i for i, p in enumerate(params)}
    names: dict[str, object] = {}
    custom: dict[int, tuple[str, tuple[float | str, ...]]] = {}

    inlined: dict[int, Inline] = {}  # id(rule) -> its form, for the rules written inline

    def template(rule: Rule) -> tuple[str, tuple[float | str, ...]]:
        t = custom.get(id(rule))
        if t is not None:
            return t
        form = rule.inline
        if form is not None and bind(form, names):
            inlined[id(rule)] = form
            t = custom[id(rule)] = (form.forward, form.partials)
        else:
            k = len(custom) - len(inlined)  # _f0, _f1, ...: the rules called by reference
            names[f"_f{k}"] = checked(rule.forward)
            slots = ", ".join(f"{{{i}}}" for i in range(rule.arity))
            partials: list[float | str] = []
            for i, d in enumerate(rule.partials):
                if isinstance(d, float):
                    partials.append(d)
                else:
                    names[f"_d{k}_{i}"] = d
                    partials.append(f"_d{k}_{i}({slots}, {{out}})")
            t = custom[id(rule)] = (f"_f{k}({slots})", tuple(partials))
        return t

    # Which nodes depend on a parameter (need a gradient); each node's uses.
    needs: dict[Value, bool] = {}
    uses: dict[Value, int] = {}
    user: dict[Value, tuple[Value, int]] = {}
    for n in fwd:
        if n._rule is None:
            needs[n] = n in param_index
            continue
        flag = False
        for j, a in enumerate(_args(n)):
            if isinstance(a, Value):
                uses[a] = uses.get(a, 0) + 1
                user[a] = (n, j)
                flag = flag or needs[a]
        needs[n] = flag
    # The values the reverse pass reads, and the units' roots: never fused.
    kept: set[Value] = {out, *(r for r in roots)}
    for n in fwd:
        rule = n._rule
        if rule is None or not needs[n]:
            continue
        args = _args(n)
        partials = template(rule)[1]
        for i, a in enumerate(args):
            d = partials[i]
            if isinstance(d, float) or not (isinstance(a, Value) and needs[a]):
                continue
            for j, b in enumerate(args):
                if isinstance(b, Value) and f"{{{j}}}" in d:
                    kept.add(b)
            if "{out}" in d:
                kept.add(n)
    # A guarded argument is named three times in its user's forward: never fused.
    for n in fwd:
        if n._rule is None:
            continue
        template(n._rule)  # a rule first met here, where no gradient is needed
        form = inlined.get(id(n._rule))
        if form is not None:
            args = _args(n)
            kept.update(args[i] for i in guarded(form, args))  # type: ignore[misc]

    # Variable numbering: a slot per forward variable and per gradient.
    slots = 0
    var: dict[Value, int] = {}  # forward value -> slot (computed nodes)
    slot_unit: dict[int, int] = {}  # slot -> its unit, for the slots of a unit's nodes
    leaf: dict[Value, tuple[str, int]] = {p: ("P", i) for i, p in enumerate(params)}
    for v, i in is_input.items():
        leaf[v] = ("X", i)

    # Forward: fuse single-use temporaries the reverse pass does not read.
    fwd_lines: list[tuple[int, int, str]] = []  # (unit or -1, slot, expression)
    expr: dict[Value, tuple[str, int, int]] = {}  # fused: (text, depth, size)
    # Text is written with placeholders, \x00<slot>\x01 for a variable and
    # \x02P<i>\x01 or \x02X<i>\x01 for a leaf, replaced once the mode (locals,
    # or one list shared by chunks) is known.
    for n in fwd:
        rule = n._rule
        if rule is None:
            continue
        forward = template(rule)[0]
        parts = []
        depth = 0
        size = 1
        for a in _args(n):
            if isinstance(a, Value):
                fused = expr.pop(a, None)
                if fused is not None:
                    parts.append(fused[0])
                    depth = max(depth, fused[1])
                    size += fused[2]
                elif a in var:
                    parts.append(f"\x00{var[a]}\x01")
                else:
                    kind, i = leaf[a]
                    parts.append(f"\x02{kind}{i}\x01")
            else:
                parts.append(_const(a))
        text = forward.format(*parts)
        form = inlined.get(id(rule))
        if form is not None:
            for i in guarded(form, _args(n)):
                text = f"({text} - ({parts[i]} - {parts[i]}))"
        fusable = uses.get(n, 0) == 1 and n not in kept
        if fusable and depth + 1 < MAX_DEPTH and size < MAX_FUSED:
            u, j = user[n]
            fusable = template(u._rule).__getitem__(0).count(f"{{{j}}}") == 1  # type: ignore[arg-type]
        else:
            fusable = False
        if fusable:
            expr[n] = (text, depth + 1, size)
        else:
            var[n] = slots
            e = unit_of.get(n, -1)
            if e >= 0:
                slot_unit[slots] = e
            fwd_lines.append((e, slots, text))
            slots += 1

    def value_ref(a: Value | float) -> str:
        if not isinstance(a, Value):
            return _const(a)
        if a in var:
            return f"\x00{var[a]}\x01"
        if a not in leaf:
            return "<fused: never read by a partial>"
        kind, i = leaf[a]
        return f"\x02{kind}{i}\x01"

    # Gradients. A parameter's is a slot: zeroed up front when more than one
    # node uses it, and added into (``+=``) in the blocks ``if g:`` of its users.
    # A computed node's is gathered where eager backward reaches it, from the
    # terms its users left in ``pending``, in the order they left them: an
    # expression, inlined into the node's single use of it (the true branch
    # of a relu: an idle neuron costs nothing), or else stored in a slot first.
    # A node used once through a slope of exactly 1.0 shares its user's slot.
    seed = slots
    slots += 1
    gslot: dict[Value, int] = {out: seed}
    multi: list[int] = []
    for p in params:
        if p not in gslot:
            gslot[p] = slots
            if uses.get(p, 0) != 1:
                multi.append(slots)
            slots += 1
    pending: dict[Value, list[tuple[str, int]]] = {}  # node -> its gradient's terms, depths
    blocks: list[_Block] = []

    opened: dict[tuple[int, int], int] = {}  # (gradient slot, unit) -> its latest block
    written: dict[int, int] = {}  # parameter's slot -> the block that last added into it

    def block(g: int, e: int, target: int = -1) -> _Block:
        """The block ``if g:`` (unit ``e``) to add into slot ``target`` in: the last
        block, or an earlier one of the same gradient if nothing added into
        ``target`` since (one test instead of one per line), or a new one."""
        if blocks and blocks[-1][0] == g and blocks[-1][3] == e:
            k = len(blocks) - 1
        else:
            k = opened.get((g, e), -1)
            if g < 0 or k < 0 or written.get(target, -1) > k:
                k = opened[g, e] = len(blocks)
                blocks.append((g, [], [], e))
        if target >= 0:
            written[target] = k
        return blocks[k]

    for n in order:
        rule = n._rule
        if rule is None or not needs[n]:
            continue
        e = unit_of.get(n, -1)
        args = _args(n)
        partials = template(rule)[1]
        refs_n = [value_ref(a) for a in args]
        # What n passes back, per argument, with \x03 for n's gradient.
        # (argument, product, shares n's slot, the condition of a 0-or-1 slope)
        flows: list[tuple[Value, str, bool, str | None]] = []
        for i, a in enumerate(args):
            if not (isinstance(a, Value) and needs[a]):
                continue
            d = partials[i]
            cond: str | None = None
            if isinstance(d, float):
                product = "\x03" if d == 1.0 else "(-\x03)" if d == -1.0 else f"\x03 * {_const(d)}"
            elif (gate := _GATE.fullmatch(d)) is not None:
                # g * (1.0 if c else 0.0) (relu's slope), without the multiplication.
                cond = gate[1].format(*refs_n, out=value_ref(n))
                product = f"(\x03 if {cond} else 0.0)"
            else:
                product = "\x03 * " + d.format(*refs_n, out=value_ref(n))
            shares = a._rule is not None and d == 1.0 and uses[a] == 1
            flows.append((a, product, shares, cond))
        # n's gradient: its slot, or its gathered terms.
        g = gslot.get(n)
        terms = pending.pop(n, [])
        depth = max((t[1] for t in terms), default=0) + len(terms)
        single = len(flows) == 1 and not flows[0][2] and flows[0][0]._rule is not None
        if g is None and single and depth < MAX_DEPTH - 4:
            # Inlined into the one term n passes on: no line, no test.
            a, product, _, cond = flows[0]
            text = terms[0][0] if len(terms) == 1 else f"({' + '.join(t[0] for t in terms)})"
            if cond is not None and _MAY_RAISE.search(text):
                # A relu that is off passes 0 back, but eager backward still
                # computes the gradient reaching it, raising where a slope
                # fails (and NaN * 0.0 carries a NaN on): so does this.
                product = f"(\x03 if {cond} else \x03 * 0.0)"
            pending.setdefault(a, []).append((product.replace("\x03", text), depth + 1))
            continue
        if g is None:
            g = gslot[n] = slots
            if e >= 0:
                slot_unit[slots] = e
            slots += 1
            gref = _ref(g)
            lines = [
                f"{gref} = {f'{gref} + ' if i else ''}{' + '.join(t[0] for t in terms[i : i + 16])}"
                for i in range(0, len(terms), 16)
            ]
            gate_on = flows[0][3] if single else None
            if gate_on is not None:
                # Too wide to inline: gathered only when the slope is 1 (a relu on).
                idle = [f"    {gref} = 0.0"]
                if any(_MAY_RAISE.search(t[0]) for t in terms):
                    # Evaluated when the relu is off too, as above.
                    idle = [*(f"    {line}" for line in lines), f"    {gref} = {gref} * 0.0"]
                lines = [f"if {gate_on}:", *(f"    {line}" for line in lines), "else:", *idle]
                flows = [(flows[0][0], "\x03", flows[0][2], None)]
            block(-1, e)[1].extend(lines)
        gref = _ref(g)
        for a, product, shares, _ in flows:
            if shares:
                gslot[a] = g
            elif a._rule is not None:
                pending.setdefault(a, []).append((product.replace("\x03", gref), 1))
            else:  # a parameter: added into its slot when n's gradient is not 0
                _, body, zeroed, _ = block(g, e, gslot[a])
                target = _ref(gslot[a])
                if uses[a] == 1:
                    body.append(f"{target} = {product.replace(chr(3), gref)}")
                    zeroed.append(gslot[a])
                elif product == "\x03":
                    body.append(f"{target} += {gref}")
                elif product == "(-\x03)":
                    body.append(f"{target} -= {gref}")
                else:
                    body.append(f"{target} += {product.replace(chr(3), gref)}")
    grads = [gslot[p] for p in params]
    code = _Code(
        fwd_lines, value_ref(out), seed, multi, blocks, grads, len(params), len(is_input), slots
    )
    if roots:
        units = _Units(roots, slot_unit, [var[r] for r in roots], [gslot.get(r, -1) for r in roots])
        source = _write_loop(code, units, names)
        if source is not None:
            return source, names
    return _write(code, names), names
