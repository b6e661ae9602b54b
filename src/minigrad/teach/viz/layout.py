"""Where the SVG puts every node and edge: a layered layout, as Graphviz's ``dot`` makes.

Ranks and the order within them come from :mod:`minigrad.teach.viz.order`;
this module sizes the boxes (with font metrics, as no fonts are at hand),
routes long edges through the ranks they cross, and places everything in
px. :mod:`minigrad.teach.viz.drawing` draws the result.
"""

from __future__ import annotations

import itertools
import math

from minigrad.teach.viz.order import _order, _ranks
from minigrad.teach.viz.scene import _Node, _Scene

# The SVG drawing: a layered ("Sugiyama") layout, as Graphviz's dot makes.
#
# 1. Ranks (order.py): every node as far right as its consumers allow (the
#    longest path to a result), so a constant or an input sits just left of
#    the op that uses it.
# 2. An edge that spans several ranks is cut by invisible points, one per rank
#    it passes, so it runs through a reserved slot and never over a box.
# 3. Order within each rank (order.py): sweeps of the barycenter heuristic,
#    keeping the order with fewest crossings, then swaps of neighbours while
#    they help.
# 4. Heights: each node is pulled towards the mean height of its neighbours,
#    rank by rank, as close as the order and the gaps between boxes allow (an
#    exact least-squares fit under those constraints: pool adjacent violators).
# 5. Edges (drawn by svg.py): cubic curves between ranks with level ends,
#    straight through the ranks, an arrowhead at the head; argument names just
#    before the arrowhead.

_FONT = 11.0  # px, the DOT text's fontsize
_EDGE_FONT = 9.0
_BOX_H = 24.0
_CELL_PAD = 6.0
_OP_RY = 12.0
_NODE_GAP = 14.0  # vertical, between two boxes of one rank
_LANE_GAP = 7.0  # vertical, around an edge passing through a rank
_RANK_GAP = 40.0  # horizontal, between ranks
_MARGIN = 10.0
_ARROW = 7.0
_PORT_STEP = 8.0
_NAMED_STEP = 12.0
_SWEEPS = 16
_PASSES = 24

# Advance widths (1/1000 em) of ASCII 32-126: the larger of Helvetica's and
# DejaVu Sans's (Linux's usual sans-serif, the wider), so a box sized with them
# holds its text in any common sans-serif font. No font metrics are at hand.
_REGULAR_TEXT = (
    "318 401 460 838 636 950 780 275 390 390 500 838 318 361 318 337 636 636 636 "
    "636 636 636 636 636 636 636 337 337 838 838 838 556 1015 684 686 722 770 667 "
    "611 778 752 295 500 667 557 863 748 787 667 787 722 667 611 732 684 989 685 "
    "667 685 390 337 390 838 556 500 613 635 550 635 615 352 635 634 278 278 579 "
    "278 974 634 612 635 635 411 521 392 634 592 818 592 592 525 636 337 636 838"
)
_REGULAR = tuple(int(w) for w in _REGULAR_TEXT.split())
_BOLD_TEXT = (
    "348 456 521 838 696 1002 872 306 457 457 523 838 380 415 380 365 696 696 696 "
    "696 696 696 696 696 696 696 400 400 838 838 838 611 1000 774 762 734 830 683 "
    "683 821 837 372 556 775 637 995 837 850 733 850 770 720 682 812 774 1103 771 "
    "724 725 457 365 457 838 556 500 675 716 593 716 678 435 716 712 343 343 665 "
    "343 1042 712 687 716 716 493 595 478 712 652 924 645 652 582 712 365 712 838"
)
_BOLD = tuple(int(w) for w in _BOLD_TEXT.split())


def _text_width(text: str, size: float, *, bold: bool = False) -> float:
    """An estimate of ``text``'s width in px at font size ``size``, erring wide."""
    table = _BOLD if bold else _REGULAR
    total = 0
    for ch in text:
        code = ord(ch)
        if 32 <= code < 127:
            total += table[code - 32]
        else:
            import unicodedata  # only for text beyond ASCII

            if unicodedata.combining(ch):
                continue
            total += 1100 if unicodedata.east_asian_width(ch) in "WF" else 750
    return total * size / 1000


class _Layout:
    """Where the SVG puts every node and edge (px; y grows downwards).

    Vertices ``0 .. len(nodes) - 1`` are the scene's nodes, in its order; the
    rest are the points that carry long edges through the ranks they cross.
    """

    def __init__(self, scene: _Scene, sweeps: int) -> None:
        nodes = scene.nodes
        n = len(nodes)
        index = {node.name: i for i, node in enumerate(nodes)}
        ends = [(index[edge.src], index[edge.dst]) for edge in scene.edges]
        rank = _ranks(n, ends)

        # Size of each node, and of each cell of a Value's box.
        self.cells: list[list[float]] = []
        width: list[float] = []
        height: list[float] = []
        for node in nodes:
            w, h, cells = _size(node)
            width.append(w)
            height.append(h)
            self.cells.append(cells)
        # Argument names need room between their edges: an op with three or
        # more of them is drawn taller, so its ports are _NAMED_STEP apart.
        self.step = [_PORT_STEP] * n
        named = [0] * n
        for edge, (_, d) in zip(scene.edges, ends, strict=True):
            named[d] += edge.label is not None
        for v in range(n):
            if named[v] > 2:
                self.step[v] = _NAMED_STEP
                height[v] = max(height[v], _NAMED_STEP * (named[v] - 1) / 0.6)

        # Long edges become chains through one invisible point per rank crossed.
        self.chains: list[list[int]] = []
        for s, d in ends:
            chain = [s]
            for r in range(rank[s] + 1, rank[d]):
                chain.append(len(rank))
                rank.append(r)
                width.append(0.0)
                height.append(0.0)
            chain.append(d)
            self.chains.append(chain)
        up: list[list[int]] = [[] for _ in rank]
        down: list[list[int]] = [[] for _ in rank]
        for chain in self.chains:
            for a, b in itertools.pairwise(chain):
                down[a].append(b)
                up[b].append(a)
        layers: list[list[int]] = [[] for _ in range(max(rank) + 1)]
        for v, r in enumerate(rank):
            layers[r].append(v)

        _order(layers, up, down, sweeps)
        self.layers = layers
        self.rank = rank
        self.width = width
        self.height = height
        self.n = n
        self.y = _heights(layers, up, down, height, n)

        # Columns: as wide as their widest box; between them room for each
        # curve to climb gently, plus its arrowhead and argument name.
        room = [_RANK_GAP] * len(layers)
        for edge, chain in zip(scene.edges, self.chains, strict=True):
            for a, b in itertools.pairwise(chain):
                needed = min(max(24.0, abs(self.y[a] - self.y[b])), 120.0)
                if b == chain[-1]:
                    needed += _ARROW
                    if edge.label is not None:
                        needed += _text_width(edge.label, _EDGE_FONT) + 6.0
                room[rank[b]] = max(room[rank[b]], needed)
        self.left: list[float] = []
        self.right: list[float] = []
        x = _MARGIN
        for r, layer in enumerate(layers):
            if r:
                x += room[r]
            self.left.append(x)
            x += max((width[v] for v in layer if v < n), default=0.0)
            self.right.append(x)
        self.x = [(self.left[r] + self.right[r]) / 2 for r in rank]
        self.canvas = (
            x + _MARGIN,
            max(self.y[v] + height[v] / 2 for v in range(n)) + _MARGIN,
        )
        self._ports(nodes)

    def _ports(self, nodes: list[_Node]) -> None:
        """Where each edge leaves its tail and meets its head: spread along the sides."""
        y = self.y
        outs: list[list[int]] = [[] for _ in range(self.n)]
        ins: list[list[int]] = [[] for _ in range(self.n)]
        for e, chain in enumerate(self.chains):
            outs[chain[0]].append(e)
            ins[chain[-1]].append(e)
        self.exit = [(0.0, 0.0)] * len(self.chains)
        self.entry = [(0.0, 0.0)] * len(self.chains)
        self.below = [False] * len(self.chains)
        for v in range(self.n):
            ellipse = nodes[v].kind == "op"
            ordered = sorted(outs[v], key=lambda e: (y[self.chains[e][1]], e))
            for e, dy in zip(ordered, self._offsets(v, len(ordered)), strict=True):
                self.exit[e] = (self.x[v] + self._half_width(v, dy, ellipse), y[v] + dy)
        for v in range(self.n):
            ellipse = nodes[v].kind == "op"

            def came_from(e: int) -> tuple[float, int]:
                chain = self.chains[e]
                return (self.exit[e][1] if len(chain) == 2 else y[chain[-2]], e)

            ordered = sorted(ins[v], key=came_from)
            for i, (e, dy) in enumerate(zip(ordered, self._offsets(v, len(ordered)), strict=True)):
                self.entry[e] = (self.x[v] - self._half_width(v, dy, ellipse), y[v] + dy)
                # Of several arguments, the lower half's names go below their edges.
                self.below[e] = len(ordered) > 1 and 2 * i >= len(ordered)

    def _offsets(self, v: int, k: int) -> list[float]:
        if k < 2:
            return [0.0] * k
        span = min(self.step[v] * (k - 1), 0.6 * self.height[v])
        return [-span / 2 + i * span / (k - 1) for i in range(k)]

    def _half_width(self, v: int, dy: float, ellipse: bool) -> float:
        half = self.width[v] / 2
        if not ellipse:
            return half
        return half * math.sqrt(max(0.0, 1.0 - (2 * dy / self.height[v]) ** 2))


def _size(node: _Node) -> tuple[float, float, list[float]]:
    """Width and height of a node, and the widths of a Value's cells."""
    if node.kind == "value":
        cells = [
            _text_width(text, _FONT, bold=node.bold and i == 0) + 2 * _CELL_PAD
            for i, text in enumerate(node.room)
        ]
        return sum(cells), _BOX_H, cells
    if node.kind == "op":
        return max(2 * _OP_RY + 8, _text_width(node.texts[0], _FONT) + 22), 2 * _OP_RY, []
    if node.kind == "const":
        return max(32.0, _text_width(node.texts[0], _FONT) + 16), _BOX_H, []
    widest = max(_text_width(line, _FONT) for line in node.texts)
    return widest + 28, 14.0 * len(node.texts) + 12, []


def _heights(
    layers: list[list[int]],
    up: list[list[int]],
    down: list[list[int]],
    height: list[float],
    n: int,
) -> list[float]:
    """The y of every vertex's centre, top margin included."""
    y = [0.0] * len(up)

    def gap(a: int, b: int) -> float:
        between = _NODE_GAP if a < n and b < n else _LANE_GAP
        return (height[a] + height[b]) / 2 + between

    for layer in layers:
        at = 0.0
        for i, v in enumerate(layer):
            if i:
                at += gap(layer[i - 1], v)
            y[v] = at
        for v in layer:
            y[v] -= at / 2
    for sweep in range(_PASSES):
        # Alternately towards the left and the right neighbours, ending with
        # the left: then every op's result sits level with its op.
        rightwards = sweep % 2 == (_PASSES - 1) % 2
        for layer in layers if rightwards else reversed(layers):
            targets: list[float] = []
            weights: list[float] = []
            for v in layer:
                nbrs, weight = (up[v], 1.0) if rightwards else (down[v], 1.0)
                if not nbrs:
                    # An input (or a result) follows its other side, gently: pinned
                    # where it is, it would be pushed a little further each pass.
                    nbrs, weight = (down[v], 0.05) if rightwards else (up[v], 0.05)
                if not nbrs:
                    targets.append(y[v])
                    weights.append(0.05)
                    continue
                # An input or constant pulls less than a Value with a history,
                # so the main line of the computation runs straight.
                pulls = [1.0 if up[u] else 0.1 for u in nbrs]
                targets.append(sum(p * y[u] for p, u in zip(pulls, nbrs, strict=True)) / sum(pulls))
                # Inputs and constants give way in turn (so the pulls balance and
                # nothing drifts); passing edges weigh more, so long edges run straight.
                own = 2.0 if v >= n else 1.0 if up[v] else 0.1
                weights.append(weight * sum(pulls) * own)
            gaps = [gap(a, b) for a, b in itertools.pairwise(layer)]
            for v, at in zip(layer, _fit_in_order(targets, weights, gaps), strict=True):
                y[v] = at
    top = min(y[v] - height[v] / 2 for v in range(n))
    return [at - top + _MARGIN for at in y]


def _fit_in_order(targets: list[float], weights: list[float], gaps: list[float]) -> list[float]:
    """Positions nearest ``targets`` (weighted least squares) that keep order and gaps.

    With ``z[i] = y[i] - (gaps before i)`` the constraints become ``z``
    non-decreasing: isotonic regression, solved exactly by pooling adjacent
    violators in O(len(targets)).
    """
    offsets = [0.0]
    for g in gaps:
        offsets.append(offsets[-1] + g)
    blocks: list[tuple[float, float, int]] = []  # (mean, weight, size)
    for t, w, o in zip(targets, weights, offsets, strict=True):
        block = (t - o, w, 1)
        while blocks and blocks[-1][0] > block[0]:
            mean, weight, size = blocks.pop()
            total = weight + block[1]
            block = ((mean * weight + block[0] * block[1]) / total, total, size + block[2])
        blocks.append(block)
    fitted = [mean for mean, _, size in blocks for _ in range(size)]
    return [z + o for z, o in zip(fitted, offsets, strict=True)]
