"""What the generated code is made of: the ops' forms, their names, placeholders, statements.

A rule's forward and partials come as Python expressions from the rule itself
(its :class:`~minigrad.core.inline.Inline`, declared in
:mod:`minigrad.core.rules`), with the names they call bound by :func:`bind`;
a rule without one is called by reference, through :func:`checked`. Code is written first
with placeholders for its variables (:func:`_ref`, :data:`_TOKEN`), named once
the form is known (:func:`_name_of`). :class:`_Code` holds the statements so
written by :func:`minigrad.compiler.generate._generate`; the straight form
(:mod:`minigrad.compiler.straight`) and the loop over the examples
(:mod:`minigrad.compiler.loop`) turn them into source, with the helpers here for
the lines both write alike (:func:`_block_lines`, :func:`_zero`, :func:`_head`).
"""

from __future__ import annotations

import math
import re
from typing import NamedTuple

from minigrad.core.value import Value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from minigrad.core.inline import Inline

__all__ = ["bind", "checked", "guarded"]

#: Names the compiler binds in generated code itself; a rule's inline form
#: that uses one of them is called by reference instead (see :func:`bind`).
_RESERVED = re.compile(r"_f\d+|_d\d+_\d+|_IDX|_G|_run")


def bind(form: Inline, names: dict[str, object]) -> bool:
    """Add the names ``form`` uses to ``names``, the generated code's globals, if they fit.

    They fit where no name is the compiler's own (:data:`_RESERVED`) or bound
    already to another object (two rules that both call ``_exp`` share it).
    Returns False, and adds nothing, where one does not: that rule is then
    called by reference, like a rule without an inline form.
    """
    for name, obj in form.names.items():
        if _RESERVED.fullmatch(name):
            return False
        if names.get(name, obj) is not obj or _NAMESPACE.get(name, obj) is not obj:
            return False
    names.update(form.names)
    return True


def guarded(form: Inline, args: tuple[Value | float, ...]) -> tuple[int, ...]:
    """The arguments of a node written as ``form`` whose forward must be guarded.

    Eager evaluation raises at the op that makes a number that is not finite
    (an overflow, or a NaN or an infinity given as an argument); generated
    code that carried on through an op that turns it into a finite one
    (``tanh(inf)`` is 1.0: the form's ``absorbing`` arguments) would return a
    finite loss where eager raises. So the forward is guarded on each such
    argument ``a`` that is a variable: ``f - (a - a)`` is ``f`` itself for a
    finite ``a`` (``a - a`` is +0.0, and ``f - 0.0`` is ``f``, -0.0 included)
    and NaN otherwise. NaN then reaches the loss, and the call is evaluated
    eagerly (see ``_Program.call``), which gives eager's result or error.
    Every other argument of a built-in form carries a number that is not
    finite on, or raises (``tests/test_compile_nonfinite.py`` probes each). A
    constant argument needs no guard: it is the same number in eager
    evaluation, where ``Value(1.0) / math.inf`` is 0.0 too. A rule called by
    reference goes through :func:`checked` instead.
    """
    return form.guards(tuple(None if isinstance(a, Value) else a for a in args))


def checked(forward: Callable[..., Any]) -> Callable[..., float]:
    """A rule's forward for generated code: NaN wherever eager ``apply`` would raise.

    Eager ``apply`` refuses a forward's result that is not a finite float (an
    int is converted); its arguments, being Values' data or constants, may be
    anything. Here an argument that is not finite, or a result that eager
    would refuse, gives NaN, which reaches the loss, and the call is then
    evaluated eagerly (see :func:`guarded`).
    """

    def run(*xs: float) -> float:
        for x in xs:
            if x - x != 0.0:
                return _NAN
        out = forward(*xs)
        if type(out) is float:
            return out if out - out == 0.0 else _NAN
        if isinstance(out, int) and not isinstance(out, bool):
            return float(out)  # beyond the floats: OverflowError, and eager's error
        return _NAN

    return run


_NAN = math.nan

#: The names generated code uses besides those of the rules' inline forms
#: (:func:`bind`): the constants that are not names in Python.
_NAMESPACE: dict[str, object] = {"_INF": math.inf, "_NAN": _NAN}


def _const(x: float) -> str:
    if x - x != 0.0:  # repr gives inf or nan, which are not names in Python
        return "_NAN" if x != x else "_INF" if x > 0.0 else "(-_INF)"
    r = repr(float(x))
    return f"({r})" if r.startswith("-") else r


#: A block of the reverse pass: (gradient slot, lines, slots zeroed on skip, unit
#: or -1); lines run ``if g:``, or unconditionally when the slot is -1.
_Block = tuple[int, list[str], list[int], int]


class _Code(NamedTuple):
    """The generated statements, with placeholders for names.

    Written by :func:`minigrad.compiler.generate._generate`.
    """

    fwd_lines: list[tuple[int, int, str]]  # (unit or -1, slot, expression)
    out: str
    seed: int
    multi: list[int]  # parameters' gradient slots added into more than once: zeroed first
    blocks: list[_Block]
    grads: list[int]  # the parameters' gradient slots
    n_params: int
    n_inputs: int
    size: int  # slots in all


_TOKEN = re.compile("\x00(\\d+)\x01|\x02([PX])(\\d+)\x01")


def _name_of(chunked: bool) -> Callable[[re.Match[str]], str]:
    """Placeholder names: ``t<k>``, ``p<i>``, ``x<i>``; chunked, ``v[k]``, ``P[i]``, ``X[i]``."""

    def name(m: re.Match[str]) -> str:
        slot, kind, i = m.groups()
        if slot is not None:
            return f"v[{slot}]" if chunked else f"t{slot}"
        return f"{kind}[{i}]" if chunked else f"{kind.lower()}{i}"

    return name


def _ref(slot: int) -> str:
    """The placeholder of a slot."""
    return f"\x00{slot}\x01"


def _block_lines(block: _Block, zero_on_skip: bool = True) -> list[str]:
    """``if g:`` and the block's lines (placeholders kept), and else the zeroing."""
    g, body, zeroed, _ = block
    if g < 0:  # unconditional
        return list(body)
    lines = [f"if \x00{g}\x01:", *(f"    {line}" for line in body)]
    if zeroed and zero_on_skip:
        lines += ["else:", f"    {' = '.join(map(_ref, zeroed))} = 0.0"]
    return lines


def _zero(slots: list[int]) -> list[str]:
    """Lines setting the slots to 0.0, a hundred a line."""
    return [f"{' = '.join(map(_ref, slots[i : i + 100]))} = 0.0" for i in range(0, len(slots), 100)]


def _head(code: _Code) -> list[str]:
    head = ["def _run(P, X):"]
    if code.n_params:
        head.append(f"    {', '.join(f'p{i}' for i in range(code.n_params))}, = P")
    if code.n_inputs:
        head.append(f"    {', '.join(f'x{i}' for i in range(code.n_inputs))}, = X")
    return head
