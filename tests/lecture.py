"""The micrograd lecture's examples, written once for the tests that run them.

:func:`neuron` is the lecture's tanh neuron, labelled as there;
:func:`more_ops` is micrograd's ``test_more_ops`` expression (its README
example), generic over the engine: it uses only what every micrograd-style
node has. :func:`closure_exp` is the lecture's way of writing an op.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from minigrad import Value


def closure_exp(x: Value) -> Value:
    """micrograd's exp: a node whose step is the user's closure (right)."""
    out = Value(math.exp(x.data), (x,), "exp")

    def _backward() -> None:
        x.grad += out.data * out.grad

    out._backward = _backward
    return out


def neuron() -> dict[str, Value]:
    """The lecture's neuron, cell by cell: ``o = tanh(x1*w1 + x2*w2 + b)``, by name."""
    x1, x2 = Value(2.0, label="x1"), Value(0.0, label="x2")
    w1, w2 = Value(-3.0, label="w1"), Value(1.0, label="w2")
    b = Value(6.8813735870195432, label="b")
    x1w1 = x1 * w1
    x1w1.label = "x1*w1"
    x2w2 = x2 * w2
    x2w2.label = "x2*w2"
    x1w1x2w2 = x1w1 + x2w2
    x1w1x2w2.label = "x1*w1 + x2*w2"
    n = x1w1x2w2 + b
    n.label = "n"
    o = n.tanh()
    o.label = "o"
    named = {"x1": x1, "x2": x2, "w1": w1, "w2": w2, "b": b, "x1w1": x1w1, "x2w2": x2w2}
    named.update({"x1w1x2w2": x1w1x2w2, "n": n, "o": o})
    return named


def more_ops(a: Value, b: Value) -> Value:
    """micrograd's ``test_more_ops``: g(-4, 2) = 24.7041, dg/da = 138.8338, dg/db = 645.5773."""
    c = a + b
    d = a * b + b**3
    c += c + 1
    c += 1 + c + (-a)
    d += d * 2 + (b + a).relu()
    d += 3 * d + (b - a).relu()
    e = c - d
    f = e**2
    g = f / 2.0
    g += 10.0 / f
    return g


def descend(loss: Callable[[], Any], params: Sequence[Any], steps: int) -> None:
    """``steps`` steps of gradient descent at a rate of 0.05, as the lecture trains
    (minigrad's Values or any micrograd-style engine's nodes)."""
    for _ in range(steps):
        out = loss()
        for p in params:
            p.grad = 0.0
        out.backward()
        for p in params:
            p.data -= 0.05 * p.grad
