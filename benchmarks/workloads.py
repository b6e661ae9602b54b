"""Workloads: the user code every engine runs, written once (and run on floats too).

An engine enters through its leaves (``leaf``) and its ``relu``; everything
else is Python operators, so the same function runs on minigrad, micrograd,
torch 0-d tensors, the floor and plain floats.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from typing import Any

import minigrad

# The MLP workload of micrograd's demo: 2 inputs, two hidden relu layers of
# 16, one linear output; a batch of 100 points; squared loss + L2.
SIZES = (2, 16, 16, 1)
BATCH = 100
ALPHA = 1e-4

#: Per layer, the weight rows and the biases: floats, or one engine's leaves.
Layers = list[tuple[list[list[Any]], list[Any]]]


# The MLP step.


def make_layers(rng: random.Random) -> Layers:
    """Weights uniform in (-1, 1) and biases 0, as micrograd's ``nn.Neuron``."""
    layers = []
    for nin, nout in itertools.pairwise(SIZES):
        w_rows = [[rng.uniform(-1.0, 1.0) for _ in range(nin)] for _ in range(nout)]
        layers.append((w_rows, [0.0] * nout))
    return layers


def make_data(rng: random.Random, n: int) -> tuple[list[list[float]], list[float]]:
    """Points in the square (-2, 2)^2, labelled +1 inside a circle, -1 outside."""
    xs = [[rng.uniform(-2.0, 2.0), rng.uniform(-2.0, 2.0)] for _ in range(n)]
    ys = [1.0 if a * a + b * b < 2.0 else -1.0 for a, b in xs]
    return xs, ys


def mlp_problem() -> tuple[Layers, list[list[float]], list[float]]:
    """The float weights and the batch every MLP measurement uses (seed 0)."""
    rng = random.Random(0)
    layers = make_layers(rng)
    xs, ys = make_data(rng, BATCH)
    return layers, xs, ys


def to_engine(leaf: Callable[[float], Any], layers: Layers) -> Layers:
    """The same weights as one engine's leaves."""
    return [
        ([[leaf(w) for w in row] for row in w_rows], [leaf(b) for b in bs]) for w_rows, bs in layers
    ]


def flat(layers: Layers) -> list[Any]:
    """Every parameter: per layer, the weights row by row, then the biases."""
    return [p for w_rows, bs in layers for p in [*(p for row in w_rows for p in row), *bs]]


def mlp_loss(layers: Layers, xs: list[list[float]], ys: list[float], relu: Any) -> Any:
    """micrograd's MLP and demo loss, written once for every engine and for floats.

    A neuron is ``sum((wi * xi for wi, xi in zip(w, x)), b)``, as in
    micrograd's ``nn.Neuron``; hidden layers apply relu, the last is linear.
    The loss is the mean squared error plus ``ALPHA`` times the sum of the
    squared parameters.
    """
    last = len(layers) - 1
    errors = []
    for x, y in zip(xs, ys, strict=True):
        h: list[Any] = x
        for i, (w_rows, bs) in enumerate(layers):
            acts = [
                sum((wi * xi for wi, xi in zip(w, h, strict=True)), b)
                for w, b in zip(w_rows, bs, strict=True)
            ]
            h = acts if i == last else [relu(a) for a in acts]
        errors.append((h[0] - y) ** 2)
    data_loss = sum(errors) * (1.0 / len(errors))
    reg_loss = ALPHA * sum(p * p for p in flat(layers))
    return data_loss + reg_loss


def handwritten_step(
    layers: Layers, xs: list[list[float]], ys: list[float]
) -> tuple[float, list[float]]:
    """The loss of :func:`mlp_loss` and its gradient, by a reverse pass written by hand.

    The floor for any autograd on Python floats: the same forward, and the
    backward of each layer written out as loops, with no graph at all.
    """
    last = len(layers) - 1
    n = len(xs)
    g_ws = [[[0.0] * len(row) for row in w_rows] for w_rows, _ in layers]
    g_bs = [[0.0] * len(bs) for _, bs in layers]
    total = 0.0
    for x, y in zip(xs, ys, strict=True):
        hs = [x]
        h = x
        for i, (w_rows, bs) in enumerate(layers):
            acts = [
                sum((wi * xi for wi, xi in zip(w, h, strict=True)), b)
                for w, b in zip(w_rows, bs, strict=True)
            ]
            h = acts if i == last else [a if a > 0.0 else 0.0 for a in acts]
            hs.append(h)
        d = h[0] - y
        total += d * d
        g = [2.0 * d / n]
        for i in range(last, -1, -1):
            w_rows = layers[i][0]
            h_in, h_out = hs[i], hs[i + 1]
            g_w, g_b = g_ws[i], g_bs[i]
            g_in = [0.0] * len(h_in)
            for j, gj in enumerate(g):
                if i != last and h_out[j] <= 0.0:
                    continue  # the relu was off: nothing flows back
                g_b[j] += gj
                w, gw = w_rows[j], g_w[j]
                for k, hk in enumerate(h_in):
                    gw[k] += gj * hk
                    g_in[k] += gj * w[k]
            g = g_in
    params = flat(layers)
    grads = flat(list(zip(g_ws, g_bs, strict=True)))
    reg = sum(p * p for p in params)
    grads = [g + 2.0 * ALPHA * p for g, p in zip(grads, params, strict=True)]
    return total / n + ALPHA * reg, grads


def mlp_ops(layers: Layers, xs: list[list[float]], ys: list[float]) -> tuple[int, int]:
    """The ops of one MLP step and the Values of its graph, counted on minigrad."""
    graph = minigrad.toposort(
        [mlp_loss(to_engine(minigrad.Value, layers), xs, ys, minigrad.Value.relu)]
    )
    return sum(1 for v in graph if v.op), len(graph)


# A deep chain, a long sum, a balanced tree.


def chain(x: Any, depth: int, relu: Callable[[Any], Any]) -> Any:
    """``x = relu(x * 1.0001 + 0.001)``, ``depth`` times: 3 * depth ops in a line."""
    for _ in range(depth):
        x = relu(x * 1.0001 + 0.001)
    return x


def random_leaves(leaf: Callable[[float], Any], n: int, seed: int) -> list[Any]:
    """``n`` leaves with values uniform in (-1, 1)."""
    rng = random.Random(seed)
    return [leaf(rng.uniform(-1.0, 1.0)) for _ in range(n)]


def tree_sum(level: list[Any]) -> Any:
    """The sum of a power-of-two number of terms as a balanced tree of additions."""
    while len(level) > 1:
        level = [a + b for a, b in zip(level[::2], level[1::2], strict=True)]
    return level[0]


# The checkers' workload.


def ring(*xs: Any) -> Any:
    """A smooth function of N inputs with O(N) ops: sum of tanh(x_i * x_{i+1})."""
    total = 0.0
    for a, b in zip(xs, xs[1:] + xs[:1], strict=True):
        total = total + (a * b).tanh()
    return total


def manual_first(func: Callable[..., Any], inputs: list[Any], eps: float) -> None:
    """The work gradcheck must do: 2N + 1 evaluations and one reverse pass per output."""
    outs = func(*inputs)
    outs = outs if isinstance(outs, tuple | list) else [outs]
    for out in outs:
        minigrad.grad(out, inputs)
    for x in inputs:
        old = x.data
        x.data = old + eps
        func(*inputs)
        x.data = old - eps
        func(*inputs)
        x.data = old


def manual_second(func: Callable[..., Any], inputs: list[Any], eps: float) -> None:
    """The work of gradgradcheck: first order, then the same for the gradient function."""
    manual_first(func, inputs, eps)

    def gradient(*xs: Any) -> tuple[Any, ...]:
        return minigrad.grad(func(*xs), list(xs), create_graph=True)

    manual_first(gradient, inputs, eps)
