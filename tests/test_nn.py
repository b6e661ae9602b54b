"""Tests for minigrad.nn: shapes, forward values, gradients, SGD, seeding, errors."""

from __future__ import annotations

import json
import math
import pickle
import random
from itertools import pairwise
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minigrad import Value
from minigrad.teach.data import make_moons
from minigrad.teach.nn import MLP, NONLINEARITIES, SGD, Layer, Module, Neuron


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


def test_a_students_activation_method_reaches_a_model_made_before_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The lecture's exercise: Value.tanh replaced by one's own (here a closure
    # whose _backward is 1% off); MLP and Neuron call the method as micrograd does.
    def student_tanh(self: Value) -> Value:
        t = math.tanh(self.data)
        out = Value(t, (self,), "student_tanh")

        def _backward() -> None:
            self.grad += 1.01 * (1 - t * t) * out.grad

        out._backward = _backward
        return out

    model = MLP(2, [3, 1], nonlin="tanh", rng=random.Random(0))
    neuron = Neuron(2, nonlin="tanh", rng=random.Random(0))
    monkeypatch.setattr(Value, "tanh", student_tanh)
    assert model.layers[0].forward([0.3, -0.7])[0].op == "student_tanh"
    assert neuron([0.3, -0.7]).op == "student_tanh"
    assert neuron.predict([0.3, -0.7]) == neuron([0.3, -0.7]).data


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
        (lambda: Neuron(2, nonlin=None), TypeError, "Neuron: nonlin must be a str .*NoneType None"),  # type: ignore[arg-type]
        (lambda: Neuron(2, 1), TypeError, "Neuron: nonlin must be a str .*, got int 1"),  # type: ignore[arg-type]
        (
            lambda: Layer(2, 2, nonlin="Linear"),
            ValueError,
            "Layer: nonlin must be one of .*'Linear'",
        ),
        (lambda: MLP(2, [1], rng=random), TypeError, "MLP: rng must be a random.Random"),  # type: ignore[arg-type]
        (lambda: Layer(2, 2, rng=42), TypeError, "Layer: rng must be a random.Random.*got int 42"),  # type: ignore[arg-type]
    ],
)
def test_bad_model_arguments(make: object, error: type[Exception], message: str) -> None:
    assert callable(make)
    with pytest.raises(error, match=message):
        make()


def test_a_wrong_nonlin_is_told_about_micrograds_true_and_false() -> None:
    with pytest.raises(TypeError) as caught:
        Neuron(2, nonlin=None)  # type: ignore[arg-type]
    assert str(caught.value) == (
        "Neuron: nonlin must be a str such as 'relu' (or micrograd's True or False), "
        "got NoneType None"
    )
    with pytest.raises(ValueError) as wrong:
        MLP(2, [1], nonlin="ReLU")
    assert str(wrong.value) == (
        "MLP: nonlin must be one of 'relu', 'tanh', 'sigmoid', 'gelu', 'softplus', 'linear' "
        "(or micrograd's True or False), got 'ReLU'"
    )


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
        ([Value(1.0)], 0.0, ValueError, "SGD: lr must be finite and > 0, got 0.0"),
        ([Value(1.0)], -0.1, ValueError, "SGD: lr must be finite and > 0, got -0.1"),
        ([Value(1.0)], math.inf, ValueError, "SGD: lr must be finite and > 0, got inf"),
        ([Value(1.0)], math.nan, ValueError, "SGD: lr must be finite and > 0, got nan"),
        ([Value(1.0)], "0.1", TypeError, "SGD: lr must be an int or float, got str '0.1'"),
        ([Value(1.0)], True, TypeError, "SGD: lr must be an int or float, got bool True"),
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


# predict: the forward pass on floats.


@given(
    st.sampled_from(NONLINEARITIES),
    st.lists(st.floats(-3.0, 3.0), min_size=3, max_size=3),
    st.integers(0, 2**16),
)
def test_predict_equals_the_forward_pass_exactly(nonlin: str, x: list[float], seed: int) -> None:
    model = MLP(3, [4, 3, 2], nonlin=nonlin, rng=random.Random(seed))
    assert model.predict(x) == [y.data for y in model.forward(x)]
    layer = model.layers[0]
    assert layer.predict(x) == [y.data for y in layer.forward(x)]
    neuron = layer.neurons[0]
    assert neuron.predict(x) == neuron(x).data


def test_predict_builds_no_graph_and_leaves_gradients_alone() -> None:
    model = MLP(2, [3, 1], rng=random.Random(0))
    for p in model.parameters():
        p.grad = 0.5
    out = model.predict([1.0, 2.0])
    assert all(type(y) is float for y in out)
    assert all(p.grad == 0.5 for p in model.parameters())


def test_predict_checks_the_number_of_inputs() -> None:
    with pytest.raises(ValueError, match="Neuron: expected 2 inputs, got 3"):
        MLP(2, [3, 1], rng=random.Random(0)).predict([1.0, 2.0, 3.0])


# Keeping a model: pickle, state, save and load.


def _bits(model: Module) -> list[str]:
    """Every parameter exactly: float.hex differs for any two different floats."""
    return [p.data.hex() for p in model.parameters()]


def _trained(nonlin: str = "tanh") -> MLP:
    """A small model a few SGD steps away from its initial weights."""
    rng = random.Random(7)
    points, labels = make_moons(10, noise=0.1, rng=rng)
    model = MLP(2, [4, 3, 1], nonlin=nonlin, rng=rng)
    opt = SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        scores = [model.forward(p)[0] for p in points]
        loss = sum(((s - y) ** 2 for s, y in zip(scores, labels, strict=True)), Value(0.0))
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model


@pytest.mark.parametrize("nonlin", NONLINEARITIES)
def test_an_mlp_pickles_with_every_nonlinearity(nonlin: str) -> None:
    model = _trained(nonlin)
    copy = pickle.loads(pickle.dumps(model))
    assert isinstance(copy, MLP)
    assert repr(copy) == repr(model)
    assert _bits(copy) == _bits(model)
    x = [0.3, -0.8]
    assert copy.predict(x) == model.predict(x)
    assert [y.data for y in copy.forward(x)] == [y.data for y in model.forward(x)]
    # A copy, not a view: training it leaves the original alone.
    copy.parameters()[0].data += 1.0
    assert _bits(copy) != _bits(model)


@pytest.mark.parametrize("nonlin", NONLINEARITIES)
def test_save_and_load_give_back_every_parameter_bit_for_bit(nonlin: str, tmp_path: Path) -> None:
    model = _trained(nonlin)
    # A parameter that needs all 17 digits, and one that is an integer.
    model.parameters()[0].data = 0.1 + 0.2
    model.parameters()[1].data = -3.0
    path = model.save(tmp_path / "model.json")
    assert path == tmp_path / "model.json"
    loaded = MLP.load(path)
    assert repr(loaded) == repr(model)
    assert [layer.nonlin for layer in loaded.layers] == [layer.nonlin for layer in model.layers]
    assert _bits(loaded) == _bits(model)
    assert [p.label for p in loaded.parameters()] == [p.label for p in model.parameters()]
    points, _ = make_moons(20, noise=0.2, rng=random.Random(1))
    assert [loaded.predict(p) for p in points] == [model.predict(p) for p in points]
    assert loaded.layers[0].neurons[0].w[0] is not model.layers[0].neurons[0].w[0]


def test_a_saved_model_is_plain_json_one_neuron_per_line(tmp_path: Path) -> None:
    model = MLP(2, [3, 1], rng=random.Random(0))
    text = model.save(tmp_path / "m.json").read_text(encoding="utf-8")

    def strict(name: str) -> float:
        raise AssertionError(f"not plain JSON: {name}")

    data = json.loads(text, parse_constant=strict)
    assert data == model.state()
    assert data["nouts"] == [3, 1]
    rows = [line.strip().rstrip(",") for line in text.splitlines()]
    neurons = [json.loads(row) for row in rows if row.startswith("[") and row.endswith("]")]
    assert neurons == [
        [p.data for p in n.parameters()] for layer in model.layers for n in layer.neurons
    ]


def test_state_round_trips_without_a_file() -> None:
    model = _trained()
    state = model.state()
    assert state["format"] == "minigrad.nn.MLP"
    assert state["version"] == 1
    assert _bits(MLP.from_state(state)) == _bits(model)
    # The state is a copy: changing the model afterwards does not change it.
    model.parameters()[0].data += 1.0
    assert _bits(MLP.from_state(state)) != _bits(model)


def test_save_refuses_a_model_that_diverged(tmp_path: Path) -> None:
    model = MLP(2, [2, 1], rng=random.Random(0))
    model.layers[1].neurons[0].b.data = math.nan
    with pytest.raises(ValueError, match=r"MLP.save: parameter layers\[1\]\[0\]\[2\] is nan"):
        model.save(tmp_path / "m.json")
    assert not (tmp_path / "m.json").exists()


def _good_state() -> dict[str, object]:
    return MLP(2, [2, 1], rng=random.Random(0)).state()


def _with(**changes: object) -> str:
    state = _good_state()
    state.update(changes)
    return json.dumps({k: v for k, v in state.items() if v is not None})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "not JSON: Expecting value: line 1 column 1"),
        ("{", "not JSON: Expecting property name"),
        ("[1, 2]", "must be a JSON object, got list"),
        (_with(format="pytorch"), "not a saved minigrad MLP: its 'format' is 'pytorch'"),
        (_with(version=2), "format version 2; this minigrad reads version 1"),
        (_with(nouts=None), "'nouts' is missing"),
        (_with(nouts=[2, 0]), r"the architecture is not valid: nouts\[1\] must be >= 1, got 0"),
        (_with(nonlin=True), "'nonlin' must be a name such as 'relu', got bool True"),
        (_with(nonlin="swish"), "the architecture is not valid: nonlin must be one of"),
        (_with(layers=[[]]), "'layers' must be a list of 2 layers, got a list of 1"),
        (_with(layers="x"), "'layers' must be a list of 2 layers, got str 'x'"),
        (
            _with(layers=[[[1.0, 2.0, 3.0]], [[1.0, 2.0, 3.0]]]),
            r"layers\[0\] must be a list of 2 neurons, got a list of 1",
        ),
        (
            _with(layers=[[[1.0, 2.0, 3.0], [1.0, 2.0]], [[1.0, 2.0, 3.0]]]),
            r"layers\[0\]\[1\] must be a list of 3 numbers \(2 weights, then the bias\), "
            "got a list of 2",
        ),
        (
            _with(layers=[[[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]], [[1.0, "2", 3.0]]]),
            r"layers\[1\]\[0\]\[1\] must be a number, got str '2'",
        ),
        (
            _with(layers=[[[1.0, 2.0, 3.0], [1.0, True, 3.0]], [[1.0, 2.0, 3.0]]]),
            r"layers\[0\]\[1\]\[1\] must be a number, got bool True",
        ),
        (
            _with(layers=[[[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]], [[1.0, 2.0, 1e400]]]),
            "not JSON: Infinity is not a number JSON allows",
        ),
        (
            _with(layers=[[[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]], [[1.0, 2.0, math.nan]]]),
            "not JSON: NaN is not a number JSON allows",
        ),
    ],
)
def test_a_bad_file_is_named_with_what_is_wrong(text: str, message: str, tmp_path: Path) -> None:
    path = tmp_path / "bad model.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=message) as caught:
        MLP.load(path)
    assert str(caught.value).startswith(f"MLP: {str(path)!r}: ")


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"nothing\.json"):
        MLP.load(tmp_path / "nothing.json")


def test_from_state_names_its_source() -> None:
    with pytest.raises(ValueError, match=r"^MLP: state: must be a JSON object, got NoneType$"):
        MLP.from_state(None)
    with pytest.raises(ValueError, match=r"^MLP: checkpoint 3: 'nin' is missing$"):
        MLP.from_state({"format": "minigrad.nn.MLP", "version": 1}, source="checkpoint 3")


def test_from_state_refuses_a_parameter_that_is_not_finite() -> None:
    state = _good_state()
    layers = state["layers"]
    assert isinstance(layers, list)
    layers[1][0][0] = math.inf
    with pytest.raises(
        ValueError, match=r"^MLP: state: layers\[1\]\[0\]\[0\] must be finite, got inf$"
    ):
        MLP.from_state(state)


# micrograd's call forms and texts, beside minigrad's own.


def _micrograd_nn() -> ModuleType:
    # A test dependency (pyproject's dev extra); skipped where it is not installed.
    module: ModuleType = pytest.importorskip(
        "micrograd.nn", reason="micrograd==0.1.0 is a test dependency"
    )
    return module


def test_micrograds_nonlin_true_and_false_positionally_and_by_keyword() -> None:
    x = [1.0, -2.0, 0.5]
    for linear in (Neuron(3, False, rng=random.Random(0)), Neuron(3, nonlin=False)):
        assert linear.nonlin == "linear" and repr(linear) == "Neuron(3, nonlin='linear')"
        y = linear(x)
        assert y.op == "+"
        assert y.data == pytest.approx(sum(w.data * xi for w, xi in zip(linear.w, x, strict=True)))
    for relu in (Neuron(3, True, rng=random.Random(0)), Neuron(3, nonlin=True)):
        assert relu.nonlin == "relu" and relu(x).op == "relu"
    # minigrad's names keep working, positionally too now.
    assert Neuron(3, "tanh")(x).op == "tanh"
    assert Neuron(3, nonlin="sigmoid")(x).op == "sigmoid"
    # A Layer passes nonlin to its neurons, as micrograd's **kwargs does; so does an MLP.
    assert [y.op for y in Layer(3, 2, nonlin=False).forward(x)] == ["+", "+"]
    assert [y.op for y in Layer(3, 2, nonlin=True).forward(x)] == ["relu", "relu"]
    assert [layer.nonlin for layer in MLP(3, [2, 2, 1], nonlin=False).layers] == ["linear"] * 3


def test_str_is_micrograds_text_and_repr_minigrads_call() -> None:
    rng = random.Random(0)
    assert str(Neuron(3, nonlin=False, rng=rng)) == "LinearNeuron(3)"
    assert str(Neuron(2, rng=rng)) == "ReLUNeuron(2)"
    assert str(Neuron(2, nonlin="tanh", rng=rng)) == "TanhNeuron(2)"
    assert str(Layer(2, 2, rng=rng)) == "Layer of [ReLUNeuron(2), ReLUNeuron(2)]"
    model = MLP(2, [3, 1], rng=rng)
    assert str(model) == (
        "MLP of [Layer of [ReLUNeuron(2), ReLUNeuron(2), ReLUNeuron(2)], "
        "Layer of [LinearNeuron(3)]]"
    )
    assert repr(model) == "MLP(2, [3, 1], nonlin='relu')"
    assert [str(Neuron(1, nonlin=name, rng=rng)) for name in NONLINEARITIES] == [
        "ReLUNeuron(1)",
        "TanhNeuron(1)",
        "SigmoidNeuron(1)",
        "GELUNeuron(1)",
        "SoftplusNeuron(1)",
        "LinearNeuron(1)",
    ]


def test_micrograds_modules_print_as_micrograds_do() -> None:
    nn = _micrograd_nn()
    pairs = [
        (Neuron(3, nonlin=False), nn.Neuron(3, nonlin=False)),
        (Neuron(2), nn.Neuron(2)),
        (Layer(3, 2, nonlin=False), nn.Layer(3, 2, nonlin=False)),
        (Layer(2, 4), nn.Layer(2, 4)),
        (MLP(2, [16, 16, 1]), nn.MLP(2, [16, 16, 1])),
        (MLP(3, [4, 4, 1]), nn.MLP(3, [4, 4, 1])),
    ]
    for ours, theirs in pairs:
        assert str(ours) == str(theirs)
        assert len(ours.parameters()) == len(theirs.parameters())


def test_with_micrograds_weights_an_mlp_computes_micrograds_numbers() -> None:
    nn = _micrograd_nn()
    theirs = nn.MLP(3, [4, 4, 1])
    ours = MLP(3, [4, 4, 1])
    rng = random.Random(3)  # weights of both from one seed: no dead ReLU by chance
    for p, q in zip(ours.parameters(), theirs.parameters(), strict=True):
        p.data = q.data = rng.uniform(-1.0, 1.0)
    x = [2.0, 3.0, -1.0]
    y, their_y = ours(x), theirs(x)
    assert isinstance(y, Value)
    (y * y).backward()
    (their_y * their_y).backward()
    assert y.data == pytest.approx(their_y.data, rel=1e-12, abs=1e-15)
    grads = [p.grad for p in ours.parameters()]
    assert grads == pytest.approx([q.grad for q in theirs.parameters()], rel=1e-12, abs=1e-15)
    assert any(g != 0.0 for g in grads)
    # zero_grad, micrograd's name, clears every parameter of the model.
    ours.zero_grad()
    assert [p.grad for p in ours.parameters()] == [0.0] * 41
