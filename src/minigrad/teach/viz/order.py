"""Ranks, and the order within each rank that crosses few edges (steps 1 and 3 of the layout).

The combinatorial half of the layered layout of :mod:`minigrad.teach.viz.layout`:
on vertices numbered from 0, with no sizes or coordinates.
"""

from __future__ import annotations


def _ranks(n: int, ends: list[tuple[int, int]]) -> list[int]:
    """Each node's rank: results rightmost, everything else just left of its consumers."""
    preds: list[list[int]] = [[] for _ in range(n)]
    waiting = [0] * n
    for s, d in ends:
        preds[d].append(s)
        waiting[s] += 1
    depth = [0] * n
    ready = [v for v in range(n) if waiting[v] == 0]
    while ready:
        v = ready.pop()
        for p in preds[v]:
            depth[p] = max(depth[p], depth[v] + 1)
            waiting[p] -= 1
            if waiting[p] == 0:
                ready.append(p)
    top = max(depth)
    return [top - d for d in depth]


def _order(
    layers: list[list[int]], up: list[list[int]], down: list[list[int]], sweeps: int
) -> None:
    """Reorder each layer in place to cross few edges (none are moved when ``sweeps`` is 0)."""
    pos = [0] * len(up)

    def number() -> None:
        for layer in layers:
            for i, v in enumerate(layer):
                pos[v] = i

    number()
    best = _crossings(layers, down, pos)
    kept = [list(layer) for layer in layers]
    if sweeps:
        # Start from the order of a depth-first walk back from the results,
        # arguments in order: a tree is then drawn without crossings, and an
        # op's first argument above its second.
        seen = [-1] * len(up)
        count = 0
        stack = [v for layer in reversed(layers) for v in reversed(layer) if not down[v]]
        while stack:
            v = stack.pop()
            if seen[v] < 0:
                seen[v] = count
                count += 1
                stack.extend(reversed(up[v]))
        for layer in layers:
            layer.sort(key=seen.__getitem__)
        number()
        crossings = _crossings(layers, down, pos)
        if crossings <= best:
            best, kept = crossings, [list(layer) for layer in layers]
    for sweep in range(sweeps):
        if best == 0:
            break
        if sweep % 2 == 0:
            for r in range(1, len(layers)):
                _by_barycenter(layers[r], up, pos)
        else:
            for r in range(len(layers) - 2, -1, -1):
                _by_barycenter(layers[r], down, pos)
        crossings = _crossings(layers, down, pos)
        if crossings < best:
            best, kept = crossings, [list(layer) for layer in layers]
    layers[:] = kept
    number()
    if sweeps and best:
        _transpose(layers, up, down, pos)


def _by_barycenter(layer: list[int], nbrs: list[list[int]], pos: list[int]) -> None:
    # A vertex with no neighbours on that side keeps its place.
    key = {
        v: sum(pos[u] for u in nbrs[v]) / len(nbrs[v]) if nbrs[v] else float(i)
        for i, v in enumerate(layer)
    }
    layer.sort(key=key.__getitem__)
    for i, v in enumerate(layer):
        pos[v] = i


def _transpose(
    layers: list[list[int]], up: list[list[int]], down: list[list[int]], pos: list[int]
) -> None:
    """Swap neighbours within a layer while that removes crossings (a few passes)."""

    def cost(a: int, b: int) -> int:
        # Crossings among the edges of a and b when a is above b.
        return sum(1 for nbrs in (up, down) for p in nbrs[a] for q in nbrs[b] if pos[p] > pos[q])

    for _ in range(8):
        swapped = False
        for layer in layers:
            for i in range(len(layer) - 1):
                a, b = layer[i], layer[i + 1]
                if cost(b, a) < cost(a, b):
                    layer[i], layer[i + 1] = b, a
                    pos[a], pos[b] = i + 1, i
                    swapped = True
        if not swapped:
            break


def _crossings(layers: list[list[int]], down: list[list[int]], pos: list[int]) -> int:
    """How many pairs of edges cross between neighbouring layers: O(E log V)."""
    total = 0
    for layer in layers[:-1]:
        heads = [b for _, b in sorted((pos[u], pos[v]) for u in layer for v in down[u])]
        # Inversions of the heads' positions, counted with a Fenwick tree.
        size = max(heads, default=0) + 1
        tree = [0] * (size + 1)
        for seen, head in enumerate(heads):
            i = head + 1
            not_above = 0
            while i > 0:
                not_above += tree[i]
                i -= i & -i
            total += seen - not_above
            i = head + 1
            while i <= size:
                tree[i] += 1
                i += i & -i
    return total
