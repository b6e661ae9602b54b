"""What ``test_pyodide.py`` runs inside Pyodide, and again here, to compare the two.

:func:`probe` exercises what a class does with minigrad (the README's first
example, a passing and a failing gradcheck, ``minigrad check`` of the rules,
a few steps of the demo, a graph picture) and returns what came out as plain
JSON-able data. Under Pyodide the file is run as a script and the test reads
``probe_json()``; under CPython the test imports :func:`probe`.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import sys
from collections.abc import Callable

import minigrad as mg
from minigrad import Value, grad
from minigrad.cli import main
from minigrad.teach import demo


def _first_example() -> list[float]:
    x = Value(2.0, label="x")
    y = x * x + 3 * x
    y.backward()
    (dy,) = grad(x**3, [x], create_graph=True)
    (d2y,) = grad(dy, [x])
    return [y.data, x.grad, dy.data, d2y.data]


def _failing_gradcheck() -> str:
    bad_sin = mg.Rule("bad_sin", math.sin, (lambda x, out: -mg.cos(x),))
    p, q = Value(0.7, label="p"), Value(1.3, label="q")
    try:
        mg.gradcheck(lambda p, q: (bad_sin(p) * q).exp(), [p, q])
    except mg.GradcheckError as error:
        return str(error)
    return "gradcheck passed a wrong rule"


def _neuron() -> Value:
    x1, x2 = Value(2.0, label="x1"), Value(0.0, label="x2")
    w1, w2 = Value(-3.0, label="w1"), Value(1.0, label="w2")
    b = Value(6.8813735870195432, label="b")
    o = (x1 * w1 + x2 * w2 + b).tanh()
    o.label = "o"
    o.backward()
    return o


def _draw_dot() -> list[str]:
    picture = mg.draw_dot(_neuron())
    return [repr(picture), picture._repr_svg_()]


def _check_command() -> list[object]:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        status = main(["check", "--points", "3", "--order", "2"])
    return [status, printed.getvalue()]


def _demo() -> list[list[float]]:
    _, history = demo.run(io.StringIO(), io.StringIO(), seed=0, steps=3, every=1)
    return [history.losses, history.accuracies]


def _attempt(work: Callable[[], object]) -> object:
    """``work()``, or the line naming what it raised: one broken part fails its own test."""
    try:
        return work()
    except Exception as error:
        return f"raised {type(error).__name__}: {error}"


def probe() -> dict[str, object]:
    """Run everything once; the results by name (a part that raised: the error's text)."""
    parts: dict[str, Callable[[], object]] = {
        "platform": lambda: sys.platform,
        "file": lambda: mg.__file__,
        "first example": _first_example,
        "gradcheck": lambda: mg.gradcheck(lambda a, b: (a * b).tanh(), [Value(0.3), Value(-1.2)]),
        "check report": lambda: str(
            mg.check(lambda a, b: (a * b).tanh(), [Value(0.3), Value(-1.2)], order=3)
        ),
        "failure": _failing_gradcheck,
        "check command": _check_command,
        "demo": _demo,
        "graph": lambda: _neuron().graph().svg(),
        "draw_dot": _draw_dot,
    }
    return {name: _attempt(work) for name, work in parts.items()}


def probe_json() -> str:
    """:func:`probe` as JSON text (what crosses from Pyodide to Node)."""
    return json.dumps(probe())
