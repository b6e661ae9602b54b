"""What the generated code is made of: the op templates, their names, placeholders, statements.

:data:`TEMPLATES` gives each built-in rule's forward and partials as Python
expressions, bound to the names in :data:`_NAMESPACE`. Code is written first
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

from minigrad.core import rules
from minigrad.core.rule import Rule
from minigrad.core.value import Value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["ABSORBING", "TEMPLATES"]

#: Per built-in rule with an inline form (the others, and custom rules, are
#: called by reference): the forward as an expression in ``{0}``, ``{1}``, and per
#: argument the partial: a constant slope, or an expression in the arguments and
#: ``{out}``. Each reads as its rule's own functions, operation for operation,
#: so compiled results equal eager ones bit for bit (``tests/test_compile.py``);
#: relu's slope tests its output, positive exactly when its input is, so the
#: reverse pass keeps one number per relu instead of two. relu's forward gives
#: 0.0 where it is not positive only for a finite x, and NaN for NaN and -inf,
#: which reach the loss (see :data:`ABSORBING`): a test against the most
#: negative float, which costs nothing measurable where ``x - x`` cost the MLP
#: step's forward pass 6%.
TEMPLATES: dict[Rule, tuple[str, tuple[float | str, ...]]] = {
    rules.ADD: ("({0} + {1})", (1.0, 1.0)),
    rules.SUB: ("({0} - {1})", (1.0, -1.0)),
    rules.MUL: ("({0} * {1})", ("{1}", "{0}")),
    rules.DIV: ("({0} / {1})", ("(1.0 / {1})", "(-{out} / {1})")),
    rules.POW: ("_pow({0}, {1})", ("_pow_x({0}, {1})", "_pow_y({0}, {1})")),
    rules.NEG: ("(-{0})", (-1.0,)),
    rules.ABS: ("abs({0})", ("(1.0 if {0} > 0.0 else -1.0 if {0} < 0.0 else 0.0)",)),
    rules.EXP: ("_exp({0})", ("{out}",)),
    rules.LOG: ("_log({0})", ("_exp(-{out})",)),
    rules.LOG1P: ("_log1p({0})", ("_exp(-{out})",)),
    rules.SQRT: ("_sqrt({0})", ("(0.5 / {out})",)),
    rules.SIN: ("_sin({0})", ("_cos({0})",)),
    rules.COS: ("_cos({0})", ("(-_sin({0}))",)),
    rules.TANH: ("_tanh({0})", ("_sech2({0})",)),
    rules.SIGMOID: ("_sigmoid({0})", ("(0.25 * _sech2(0.5 * {0}))",)),
    rules.RELU: (
        "({0} if {0} > 0.0 else 0.0 if {0} >= -1.7976931348623157e+308 else _NAN)",
        ("(1.0 if {out} > 0.0 else 0.0)",),
    ),
    rules.SOFTPLUS: ("_softplus({0})", ("_sigmoid({0})",)),
    rules.ERF: ("_erf({0})", ("(_TWO_OVER_SQRT_PI * _gauss({0}))",)),
    rules.GELU: (
        "(0.5 * {0} * _erfc(-{0} * _INV_SQRT2))",
        ("(0.5 * _erfc(-{0} * _INV_SQRT2) + {0} * _half_gauss({0}) * _INV_SQRT_2PI)",),
    ),
}


#: Per built-in rule with a template, the arguments through which its forward
#: can turn a number that is not finite into a finite one: tanh(inf) is 1.0,
#: 1.0 / inf is 0.0, exp(-inf) is 0.0, nan ** 0.0 is 1.0. Eager evaluation
#: raises at the op that made such a number (an overflow, or a NaN or an
#: infinity given as an argument); generated code that carried on would
#: return a finite loss where eager raises. So the forward of such an op is
#: guarded on each such argument ``a`` that is a variable (:func:`guarded`):
#: ``f - (a - a)`` is ``f`` itself for a finite ``a`` (``a - a`` is +0.0, and
#: ``f - 0.0`` is ``f``, -0.0 included) and NaN otherwise. NaN then reaches the
#: loss, and the call is evaluated eagerly (see ``_Program.call``), which gives
#: eager's result or error. Every other argument of a template carries a
#: number that is not finite on, or raises (tests/test_compile.py probes each),
#: and relu's template guards itself. A rule without a template is called
#: through :func:`checked`.
ABSORBING: dict[Rule, tuple[int, ...]] = {
    rules.DIV: (1,),
    rules.POW: (0, 1),
    rules.EXP: (0,),
    rules.TANH: (0,),
    rules.SIGMOID: (0,),
    rules.SOFTPLUS: (0,),
    rules.ERF: (0,),
}


def guarded(rule: Rule, args: tuple[Value | float, ...]) -> tuple[int, ...]:
    """The arguments of a node of ``rule`` whose forward must be guarded (see :data:`ABSORBING`).

    Only Values: a constant argument is the same number in eager evaluation,
    where ``Value(1.0) / math.inf`` is 0.0 too. ``x ** c`` with a constant
    ``c > 0`` (the square of an error, say) keeps inf and NaN, so ``x`` needs
    no guard there.
    """
    found = ABSORBING.get(rule, ())
    if rule is rules.POW and type(args[1]) is float and args[1] > 0.0:
        found = (1,)
    return tuple(i for i in found if isinstance(args[i], Value))


def checked(forward: Callable[..., Any]) -> Callable[..., float]:
    """A rule's forward for generated code: NaN wherever eager ``apply`` would raise.

    Eager ``apply`` refuses a forward's result that is not a finite float (an
    int is converted); its arguments, being Values' data or constants, may be
    anything. Here an argument that is not finite, or a result that eager
    would refuse, gives NaN, which reaches the loss, and the call is then
    evaluated eagerly (see :data:`ABSORBING`).
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

#: The names the templates use, bound in the generated code's globals.
_NAMESPACE: dict[str, object] = {
    "_pow": rules._pow,
    "_pow_x": rules._pow_x,
    "_pow_y": rules._pow_y,
    "_exp": math.exp,
    "_log": math.log,
    "_log1p": math.log1p,
    "_sqrt": math.sqrt,
    "_sin": math.sin,
    "_cos": math.cos,
    "_tanh": math.tanh,
    "_erf": math.erf,
    "_erfc": math.erfc,
    "_sech2": rules._sech2,
    "_gauss": rules._gauss,
    "_half_gauss": rules._half_gauss,
    "_sigmoid": rules._sigmoid,
    "_softplus": rules._softplus,
    "_TWO_OVER_SQRT_PI": rules._TWO_OVER_SQRT_PI,
    "_INV_SQRT2": rules._INV_SQRT2,
    "_INV_SQRT_2PI": rules._INV_SQRT_2PI,
    "_INF": math.inf,
    "_NAN": math.nan,
}


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
