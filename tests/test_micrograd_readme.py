"""micrograd's README and demo code, run as written against minigrad.

Each snippet is micrograd's text; only its import line names minigrad. The
printed numbers are the README's; where micrograd 0.1.0 is installed (a test
dependency), the same text is run against it too and the outputs compared.
"""

from __future__ import annotations

import contextlib
import io
import random
from fractions import Fraction
from types import ModuleType

import pytest

import minigrad
from minigrad.nn import MLP
from minigrad.teach.data import make_moons

# micrograd's README, "Example usage", as written there.
README_EXAMPLE = """\
from micrograd.engine import Value

a = Value(-4.0)
b = Value(2.0)
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
print(f'{g.data:.4f}') # prints 24.7041, the outcome of this forward pass
g.backward()
print(f'{a.grad:.4f}') # prints 138.8338, i.e. the numerical value of dg/da
print(f'{b.grad:.4f}') # prints 645.5773, i.e. the numerical value of dg/db
"""

# micrograd's README, "Tracing / visualization" (draw_dot is its notebook's helper).
README_TRACING = """\
from micrograd import nn
n = nn.Neuron(2)
x = [Value(1.0), Value(-2.0)]
y = n(x)
dot = draw_dot(y)
"""

# micrograd's demo.ipynb: the model cell.
DEMO_MODEL = """\
from micrograd.nn import Neuron, Layer, MLP
model = MLP(2, [16, 16, 1]) # 2-layer neural network
print(model)
print("number of parameters", len(model.parameters()))
"""

# micrograd's demo.ipynb: the loss and the training loop, with plain lists for
# its numpy arrays (X, y), batch_size=None, and three steps instead of 100.
DEMO_TRAINING = """\
from micrograd.engine import Value

def loss(batch_size=None):
    Xb, yb = X, y
    inputs = [list(map(Value, xrow)) for xrow in Xb]
    scores = list(map(model, inputs))
    losses = [(1 + -yi*scorei).relu() for yi, scorei in zip(yb, scores)]
    data_loss = sum(losses) * (1.0 / len(losses))
    alpha = 1e-4
    reg_loss = alpha * sum((p*p for p in model.parameters()))
    total_loss = data_loss + reg_loss
    accuracy = [(yi > 0) == (scorei.data > 0) for yi, scorei in zip(yb, scores)]
    return total_loss, sum(accuracy) / len(accuracy)

for k in range(3):
    total_loss, acc = loss()
    model.zero_grad()
    total_loss.backward()
    learning_rate = 1.0 - 0.9*k/100
    for p in model.parameters():
        p.data -= learning_rate * p.grad
    print(f"step {k} loss {total_loss.data}, accuracy {acc*100}%")
"""


def _on_minigrad(code: str) -> str:
    """micrograd's code with its imports pointed at minigrad, and nothing else changed."""
    lines = code.splitlines(keepends=True)
    swapped = {
        "from micrograd.engine import Value\n": "from minigrad import Value\n",
        "from micrograd import nn\n": "from minigrad import nn\n",
        "from micrograd.nn import Neuron, Layer, MLP\n": (
            "from minigrad.nn import Neuron, Layer, MLP\n"
        ),
    }
    changed = [swapped.get(line, line) for line in lines]
    assert sum(a != b for a, b in zip(lines, changed, strict=True)) == 1
    return "".join(changed)


def _readme_g() -> Fraction:
    """The README's g computed in exact rationals (relu as max(0, x))."""
    a, b = Fraction(-4), Fraction(2)
    c = a + b
    d = a * b + b**3
    c += c + 1
    c += 1 + c + (-a)
    d += d * 2 + max(Fraction(0), b + a)
    d += 3 * d + max(Fraction(0), b - a)
    f = (c - d) ** 2
    return f / 2 + 10 / f


def _run(code: str, namespace: dict[str, object] | None = None) -> tuple[str, dict[str, object]]:
    """Run ``code`` as a notebook cell would; return what it printed and its names."""
    names: dict[str, object] = {} if namespace is None else namespace
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<micrograd>", "exec"), names)
    return out.getvalue(), names


def _micrograd() -> ModuleType:
    # A test dependency (pyproject's dev extra); skipped where it is not installed.
    module: ModuleType = pytest.importorskip(
        "micrograd.engine", reason="micrograd==0.1.0 is a test dependency"
    )
    return module


def test_readme_example_prints_the_readmes_numbers_on_minigrad() -> None:
    printed, names = _run(_on_minigrad(README_EXAMPLE))
    assert printed == "24.7041\n138.8338\n645.5773\n"
    a, b, g = names["a"], names["b"], names["g"]
    assert isinstance(a, minigrad.Value) and isinstance(b, minigrad.Value)
    assert isinstance(g, minigrad.Value)
    # The forward value exactly: every op is rational here, relu included.
    assert g.data == pytest.approx(float(_readme_g()), rel=1e-15)


def test_readme_example_gives_micrograds_own_numbers() -> None:
    _micrograd()
    theirs, their_names = _run(README_EXAMPLE)
    ours, our_names = _run(_on_minigrad(README_EXAMPLE))
    assert ours == theirs
    for name in ("a", "b", "g"):
        our, their = our_names[name], their_names[name]
        assert isinstance(our, minigrad.Value)
        assert our.data == pytest.approx(their.data, rel=1e-13)  # type: ignore[attr-defined]
        assert our.grad == pytest.approx(their.grad, rel=1e-13)  # type: ignore[attr-defined]


def test_readme_tracing_example_draws_the_neuron_with_minigrad() -> None:
    code = _on_minigrad(README_TRACING)
    _, names = _run(code, {"Value": minigrad.Value, "draw_dot": minigrad.draw_dot})
    y, dot = names["y"], names["dot"]
    assert isinstance(y, minigrad.Value) and y.op == "relu"
    # x1, x2, two weights, the bias, two products, two sums and the relu.
    assert repr(dot) == "Diagram(values=10, ops=5, constants=0, format='svg', rankdir='LR')"
    assert str(dot).startswith("digraph minigrad {")
    svg = dot._repr_svg_()  # type: ignore[attr-defined]
    assert isinstance(svg, str) and svg.startswith("<svg") and "relu" in svg


def _demo_model_text() -> str:
    first = ", ".join(["ReLUNeuron(2)"] * 16)
    second = ", ".join(["ReLUNeuron(16)"] * 16)
    return f"MLP of [Layer of [{first}], Layer of [{second}], Layer of [LinearNeuron(16)]]"


def test_demo_model_prints_as_in_micrograds_demo() -> None:
    printed, names = _run(_on_minigrad(DEMO_MODEL))
    assert printed == f"{_demo_model_text()}\nnumber of parameters 337\n"
    assert isinstance(names["model"], MLP)


def test_demo_model_prints_what_micrograd_prints() -> None:
    _micrograd()
    theirs, _ = _run(DEMO_MODEL)
    ours, _ = _run(_on_minigrad(DEMO_MODEL))
    assert ours == theirs


def test_demo_training_loop_runs_on_minigrad_with_micrograds_numbers() -> None:
    _micrograd()
    their_nn = pytest.importorskip("micrograd.nn")

    rng = random.Random(1337)
    points, labels = make_moons(20, noise=0.1, rng=rng)
    data = {"X": [list(p) for p in points], "y": [float(label) for label in labels]}
    theirs = their_nn.MLP(2, [16, 16, 1])
    ours = MLP(2, [16, 16, 1])
    for p, q in zip(ours.parameters(), theirs.parameters(), strict=True):
        p.data = q.data = rng.uniform(-1.0, 1.0)
    their_out, _ = _run(DEMO_TRAINING, {**data, "model": theirs})
    our_out, _ = _run(_on_minigrad(DEMO_TRAINING), {**data, "model": ours})
    our_lines, their_lines = our_out.splitlines(), their_out.splitlines()
    assert len(our_lines) == len(their_lines) == 3
    for ours_line, theirs_line in zip(our_lines, their_lines, strict=True):
        our_loss = float(ours_line.split()[3].rstrip(","))
        their_loss = float(theirs_line.split()[3].rstrip(","))
        assert our_loss == pytest.approx(their_loss, rel=1e-9)
        assert ours_line.split("accuracy")[1] == theirs_line.split("accuracy")[1]
    # The loop trained: the loss fell over the three steps.
    losses = [float(line.split()[3].rstrip(",")) for line in our_lines]
    assert losses[2] < losses[0]
