"""The straight form: the generated statements written out one after another.

One generator function runs the forward pass in local variables, yields the
loss, and, sent the seed, runs the reverse pass and yields the gradients.
Above :data:`CHUNK_ABOVE` statements the code is split into functions of
:data:`CHUNK_SIZE` statements sharing one list of variables (below, one
function compiles in linear time and runs faster; see docs/compile.md).
"""

from __future__ import annotations

import functools

from minigrad.compiler.templates import _TOKEN, _block_lines, _Code, _head, _name_of, _zero

__all__ = ["CHUNK_ABOVE", "CHUNK_SIZE"]

#: Statements above which the code is split into functions sharing a list.
CHUNK_ABOVE = 500_000
#: Statements per function when split.
CHUNK_SIZE = 4_000


def _write(code: _Code, names: dict[str, object]) -> str:
    """The source, in one generator of locals or in chunks sharing one list ``v``.

    Chunked above :data:`CHUNK_ABOVE` statements.
    """
    chunked = len(code.fwd_lines) + sum(len(b[1]) for b in code.blocks) > CHUNK_ABOVE
    sub = functools.partial(_TOKEN.sub, _name_of(chunked))
    forward = [sub(f"\x00{k}\x01 = {text}") for _, k, text in code.fwd_lines]
    backward = [
        [sub(line) for line in _block_lines(block, zero_on_skip=not chunked)]
        for block in code.blocks
        if block[1]
    ]
    if not chunked:
        lines = _head(code) + [f"    {line}" for line in forward]
        lines.append(f"    t{code.seed} = yield {sub(code.out)}")
        lines += [f"    {sub(line)}" for line in _zero(code.multi)]
        for unit in backward:
            lines += [f"    {line}" for line in unit]
        lines.append(f"    yield ({''.join(f't{k}, ' for k in code.grads)})")
        return "\n".join(lines) + "\n"
    lines = []
    calls_f: list[str] = []
    for c, i in enumerate(range(0, len(forward), CHUNK_SIZE)):
        lines.append(f"def _f{c}(v, P, X):")
        lines += [f"    {line}" for line in forward[i : i + CHUNK_SIZE]]
        calls_f.append(f"    _f{c}(v, P, X)")
    calls_b: list[str] = []
    chunk: list[str] = []
    pieces: list[list[str] | None] = [*backward, None]
    for piece in pieces:
        if piece is None or len(chunk) >= CHUNK_SIZE:
            if chunk:
                lines.append(f"def _b{len(calls_b)}(v, P, X):")
                lines += chunk
                calls_b.append(f"    _b{len(calls_b)}(v, P, X)")
            chunk = []
        if piece is not None:
            chunk += [f"    {line}" for line in piece]
    lines.append("def _run(P, X):")
    lines.append(f"    v = [0.0] * {code.size}")
    lines += calls_f
    lines.append(f"    v[{code.seed}] = yield {sub(code.out)}")
    lines += calls_b
    names["_G"] = code.grads
    lines.append("    yield [v[k] for k in _G]")
    return "\n".join(lines) + "\n"
