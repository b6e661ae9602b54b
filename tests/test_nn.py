"""Tests for minigrad.nn: shapes, forward values, gradients, SGD, seeding, errors."""

from __future__ import annotations

import math
import random
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minigrad import Value
from minigrad.data import make_moons
from minigrad.nn import MLP, NONLINEARITIES, SGD, Layer, Module, Neuron


def _weights(model: Module) -> list[float]:
    return [p.data for p in model.parameters()]


# Shapes and parameter counts.


def test_parameter_counts_match_the_formula() -> None:
    rng = random.Random(0)
    assert len(Neuron(3, rng=rng).parameters()) == 4
    assert len(Layer(3, 5, rng=rng).parameters()) == 5 * 4
    # micrograd's demo model: (2+1)*16 + (16+1)*16 + (16+1)*1.
    assert len(MLP(2, [16, 16, 1], rng=rng).parameters()) == 337


@given(st.integers(1, 6), st.lists(st.integers(1, 6), min_size=1, max_size=4))
def test_mlp_parameter_count_for_any_sizes(nin: int, nouts: list[int]) -> None:
    model = MLP(nin, nouts, rng=random.Random(0))
    params = model.parameters()
    assert len(params) == sum((a + 1) * b for a, b in pairwise([nin, *nouts]))
    # Every parameter is its own Value: none is shared between neurons.
    assert len({id(p) for p in params}) == len(params)
    assert [len(layer.neurons) for layer in model.layers] == nouts


def test_call_returns_a_value_for_one_output_and_a_list_otherwise() -> None:
    rng = random.Random(0)
    single = MLP(2, [3, 1], rng=rng)([1.0, 2.0])
    assert isinstance(single, Value)
    several = MLP(2, [3, 2], rng=rng)([1.0, 2.0])
    assert isinstance(several, list)
    assert len(several) == 2
    layer = Layer(2, 1, rng=rng)
    assert isinstance(layer([1.0, 2.0]), Value)
    assert isinstance(layer.forward([1.0, 2.0]), list)


def test_reprs_read_like_constructors() -> None:
    rng = random.Random(0)
    assert repr(Neuron(2, nonlin="tanh", rng=rng)) == "Neuron(2, nonlin='tanh')"
    assert repr(Layer(2, 3, rng=rng)) == "Layer(2, 3, nonlin='relu')"
    assert repr(MLP(2, [4, 1], rng=rng)) == "MLP(2, [4, 1], nonlin='relu')"
    assert repr(SGD([Value(1.0)], lr=0.5)) == "SGD(1 parameters, lr=0.5)"


# Forward values and gradients.


def test_neuron_computes_nonlin_of_w_dot_x_plus_b() -> None:
    n = Neuron(3, nonlin="tanh", rng=random.Random(1))
    n.b.data = 0.25
    x = [0.5, -1.0, 2.0]
    expected = math.tanh(sum(w.data * xi for w, xi in zip(n.w, x, strict=True)) + 0.25)
    assert n(x).data == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("nonlin", NONLINEARITIES)
def test_every_nonlinearity_is_applied(nonlin: str) -> None:
    n = Neuron(2, nonlin=nonlin, rng=random.Random(0))
    y = n([1.0, -1.0])
    assert y.op == ("+" if nonlin == "linear" else nonlin)


def test_hidden_layers_use_nonlin_and_the_last_layer_is_linear() -> None:
    model = MLP(2, [4, 3, 2], nonlin="tanh", rng=random.Random(0))
    assert [layer.nonlin for layer in model.layers] == ["tanh", "tanh", "linear"]
    outputs = model.forward([0.3, -0.7])
    assert [y.op for y in outputs] == ["+", "+"]
    hidden = model.layers[0].forward([0.3, -0.7])
    assert all(h.op == "tanh" for h in hidden)


def test_neuron_gradient_is_the_input() -> None:
    # d(w . x + b)/dw_i = x_i and d/db = 1, for the linear neuron.
    n = Neuron(3, nonlin="linear", rng=random.Random(2))
    x = [0.5, -1.5, 2.0]
    n(x).backward()
    assert [w.grad for w in n.w] == x
    assert n.b.grad == 1.0


def test_inputs_may_be_values_and_receive_gradients() -> None:
    n = Neuron(2, nonlin="linear", rng=random.Random(3))
    x = [Value(1.0), Value(2.0)]
    n(x).backward()
    assert [xi.grad for xi in x] == [w.data for w in n.w]


def test_zero_grad_clears_every_parameter() -> None:
    model = MLP(2, [4, 1], nonlin="tanh", rng=random.Random(0))
    y = model.forward([1.0, -2.0])[0]
    y.backward()
    assert any(p.grad != 0.0 for p in model.parameters())
    model.zero_grad()
    assert all(p.grad == 0.0 for p in model.parameters())


def test_module_base_has_no_parameters() -> None:
    m = Module()
    assert m.parameters() == []
    m.zero_grad()  # nothing to clear; must not fail on an empty module
    assert m.parameters() == []


# SGD.


def test_sgd_step_moves_each_parameter_against_its_gradient() -> None:
    params = [Value(1.0), Value(-2.0), Value(0.5)]
    grads = [0.5, -1.0, 0.0]
    for p, g in zip(params, grads, strict=True):
        p.grad = g
    opt = SGD(params, lr=0.1)
    opt.step()
    assert [p.data for p in params] == [1.0 - 0.1 * 0.5, -2.0 + 0.1 * 1.0, 0.5]
    # step() leaves the gradients alone; zero_grad() clears them.
    assert [p.grad for p in params] == grads
    opt.zero_grad()
    assert [p.grad for p in params] == [0.0, 0.0, 0.0]


def test_sgd_step_lowers_a_loss() -> None:
    w = Value(3.0)
    opt = SGD([w], lr=0.1)
    losses = []
    for _ in range(5):
        loss = (w - 1.0) ** 2
        losses.append(loss.data)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert losses == sorted(losses, reverse=True)
    assert w.data == pytest.approx(1.0 + 2.0 * 0.8**5)


def test_sgd_learning_rate_can_be_changed() -> None:
    w = Value(1.0)
    w.grad = 1.0
    opt = SGD([w], lr=1.0)
    opt.lr = 0.25
    opt.step()
    assert w.data == 0.75
    assert opt.lr == 0.25


def test_a_short_training_run_lowers_the_loss() -> None:
    rng = random.Random(0)
    points, labels = make_moons(20, noise=0.1, rng=rng)
    model = MLP(2, [8, 1], rng=rng)
    opt = SGD(model.parameters(), lr=0.05)
    losses: list[float] = []
    for _ in range(15):
        scores = [model.forward(p)[0] for p in points]
        errors = [(s - y) ** 2 for s, y in zip(scores, labels, strict=True)]
        loss = sum(errors[1:], errors[0]) / len(errors)
        losses.append(loss.data)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert losses == sorted(losses, reverse=True)
    assert losses[-1] < 0.5 * losses[0]


# Seeding: reproducible from the seed, and the global generator is never used.


def test_same_seed_gives_the_same_model_and_different_seeds_differ() -> None:
    a = MLP(2, [4, 4, 1], rng=random.Random(42))
    b = MLP(2, [4, 4, 1], rng=random.Random(42))
    c = MLP(2, [4, 4, 1], rng=random.Random(43))
    assert _weights(a) == _weights(b)
    assert _weights(a) != _weights(c)
    assert all(-1.0 <= w <= 1.0 for w in _weights(a))


def test_the_global_random_generator_is_left_alone() -> None:
    state = random.getstate()
    MLP(2, [4, 1], rng=random.Random(0))
    MLP(2, [4, 1])  # rng=None: a fresh generator of its own
    Neuron(3)
    Layer(2, 2)
    assert random.getstate() == state


def test_without_rng_two_models_differ() -> None:
    # None means a fresh unseeded generator, not a fixed seed.
    assert _weights(MLP(2, [8, 1])) != _weights(MLP(2, [8, 1]))


# Argument errors name the argument and the value.


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda: Neuron(0), ValueError, "Neuron: nin must be >= 1, got 0"),
        (lambda: Neuron(2.0), TypeError, "Neuron: nin must be an int, got float 2.0"),  # type: ignore[arg-type]
        (lambda: Neuron(True), TypeError, "Neuron: nin must be an int, got bool True"),
        (lambda: Layer(2, -1), ValueError, "Layer: nout must be >= 1, got -1"),
        (lambda: MLP(2, []), ValueError, "MLP: nouts must name at least one layer size"),
        (lambda: MLP(2, 16), TypeError, "MLP: nouts must be a sequence"),  # type: ignore[arg-type]
        (lambda: MLP(2, "16"), TypeError, "MLP: nouts must be a sequence"),  # type: ignore[arg-type]
        (lambda: MLP(2, [16, 0, 1]), ValueError, r"MLP: nouts\[1\] must be >= 1, got 0"),
        (lambda: MLP(0, [1]), ValueError, "MLP: nin must be >= 1, got 0"),
        (lambda: MLP(2, [1], nonlin="ReLU"), ValueError, "nonlin must be one of 'relu', 'tanh'"),
        (lambda: Neuron(2, nonlin=None), TypeError, "Neuron: nonlin must be a str, got NoneType"),  # type: ignore[arg-type]
        (lambda: MLP(2, [1], rng=random), TypeError, "MLP: rng must be a random.Random"),  # type: ignore[arg-type]
        (lambda: Layer(2, 2, rng=42), TypeError, "Layer: rng must be a random.Random.*got int 42"),  # type: ignore[arg-type]
    ],
)
def test_bad_model_arguments(make: object, error: type[Exception], message: str) -> None:
    assert callable(make)
    with pytest.raises(error, match=message):
        make()


def test_wrong_number_of_inputs_is_a_clear_error() -> None:
    model = MLP(3, [2, 1], rng=random.Random(0))
    with pytest.raises(ValueError, match="Neuron: expected 3 inputs, got 2"):
        model([1.0, 2.0])


@pytest.mark.parametrize(
    ("params", "lr", "error", "message"),
    [
        ([], 0.1, ValueError, "SGD: params is empty"),
        ([Value(1.0), 2.0], 0.1, TypeError, r"SGD: params\[1\] must be a Value, got float 2.0"),
        (Value(1.0), 0.1, TypeError, "SGD: params must be an iterable of Values"),
        ([Value(1.0)], 0.0, ValueError, "SGD: lr must be a finite number > 0, got 0.0"),
        ([Value(1.0)], -0.1, ValueError, "SGD: lr must be a finite number > 0, got -0.1"),
        ([Value(1.0)], math.inf, ValueError, "SGD: lr must be a finite number > 0, got inf"),
        ([Value(1.0)], math.nan, ValueError, "SGD: lr must be a finite number > 0, got nan"),
        ([Value(1.0)], "0.1", TypeError, "SGD: lr must be a number, got str '0.1'"),
        ([Value(1.0)], True, TypeError, "SGD: lr must be a number, got bool True"),
    ],
)
def test_bad_sgd_arguments(
    params: object, lr: object, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        SGD(params, lr)  # type: ignore[arg-type]


def test_sgd_refuses_a_parameter_listed_twice() -> None:
    w = Value(1.0)
    with pytest.raises(ValueError, match=r"SGD: params\[1\] appears more than once"):
        SGD([w, w], lr=0.1)


def test_sgd_takes_a_generator_of_parameters() -> None:
    model = MLP(2, [3, 1], rng=random.Random(0))
    opt = SGD((p for p in model.parameters()), lr=0.1)
    assert len(opt.params) == len(model.parameters())
