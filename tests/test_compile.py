"""minigrad.compile: generated code gives eager's results, refuses what it cannot replay."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from typing import Any

import pytest

import minigrad
import minigrad.compiler.loop
import minigrad.compiler.straight
import minigrad.compiler.templates
import sympy_oracle
from minigrad import Rule, Value, ops
from minigrad.compiler.trace import CheckError, CompiledValue, TracingError
from minigrad.core.inline import Inline
from minigrad.teach.nn import MLP

RTOL = 1e-12


def close(a: float, b: float) -> bool:
    return abs(a - b) <= RTOL * max(abs(a), abs(b)) or a == b


def eager_grads(
    fn: Callable[..., Value], args: tuple[Any, ...], params: Sequence[Value]
) -> tuple[float, list[float]]:
    for p in params:
        p.grad = 0.0
    loss = fn(*args)
    loss.backward()
    return loss.data, [p.grad for p in params]


def compiled_grads(
    step: Callable[..., Value], args: tuple[Any, ...], params: Sequence[Value]
) -> tuple[float, list[float]]:
    for p in params:
        p.grad = 0.0
    loss = step(*args)
    assert isinstance(loss, CompiledValue)  # the generated code ran, not eager
    loss.backward()
    return loss.data, [p.grad for p in params]


def test_mlp_gradients_equal_eager_over_sgd_steps_with_flipping_relus() -> None:
    rng = random.Random(1)
    model = MLP(2, [8, 8, 1], rng=rng)
    params = model.parameters()
    xs = [[rng.uniform(-2, 2), rng.uniform(-2, 2)] for _ in range(20)]
    ys = [1.0 if a * b > 0 else -1.0 for a, b in xs]

    def loss_fn(xs: list[list[float]], ys: list[float]) -> Value:
        errs = [(model.forward(x)[0] - y) ** 2 for x, y in zip(xs, ys, strict=True)]
        return sum(errs[1:], errs[0]) * (1.0 / len(errs))

    step = minigrad.compile(loss_fn)
    patterns = set()
    for _ in range(25):
        want_loss, want = eager_grads(loss_fn, (xs, ys), params)
        got_loss, got = compiled_grads(step, (xs, ys), params)
        assert close(got_loss, want_loss)
        assert all(close(a, b) for a, b in zip(got, want, strict=True))
        # Which hidden relus are on: the trained weights flip some of them.
        h1 = [[n.predict(x) > 0 for n in model.layers[0].neurons] for x in xs]
        patterns.add(str(h1))
        for p, g in zip(params, got, strict=True):
            p.data -= 0.5 * g
    assert len(patterns) > 3  # relu states did flip, and compiled code followed
    assert len(step._programs) == 1  # one trace served every step


def test_a_value_dependent_branch_is_refused_never_frozen() -> None:
    w = Value(1.0)

    def branchy(x: Value) -> Value:
        y = w * x
        if y.data > 0:  # frozen by a trace: refused
            return y * 3.0
        return y * -1.0

    step = minigrad.compile(branchy)
    with pytest.raises(TracingError, match=r"branchy read \.data of the result of op '\*'"):
        step(2.0)
    assert not step._programs  # nothing was cached
    assert w.data == 1.0  # reading outside a trace works
    # relu's branch is an expression evaluated on every call.
    relu_step = minigrad.compile(lambda x: (w * x).relu())
    assert relu_step(2.0).data == 2.0
    assert relu_step(-2.0).data == 0.0


@pytest.mark.parametrize(
    "decide",
    [
        lambda y: y > 0,  # a comparison of Values' data
        lambda y: y > 0,
        lambda y: max(y, 0.5) is y,
        lambda y: bool(y),  # `if y:`
        lambda y: f"{y:.2f}" == "2.00",
    ],
    ids=["y > 0", "0 < y", "max", "bool", "format"],
)
def test_the_number_protocol_is_refused_while_tracing(decide: Callable[[Value], bool]) -> None:
    # Comparisons, bool() and formatting read the data as .data does: under a
    # trace each would freeze a branch, so each is refused like .data.
    w = Value(1.0)

    def branchy(x: Value) -> Value:
        y = w * x
        return y * 3.0 if decide(y) else y * -1.0

    step = minigrad.compile(branchy)
    with pytest.raises(TracingError, match="branchy read"):
        step(2.0)
    assert not step._programs


def test_reading_a_parameter_while_tracing_is_refused() -> None:
    w = Value(2.0, label="w")
    step = minigrad.compile(lambda x: w * (x * w.data))
    with pytest.raises(TracingError, match="the leaf 'w'"):
        step(1.0)


def _points(rule: Rule, rng: random.Random) -> list[tuple[float, ...]]:
    """Random points, and both sides of every kink in every argument."""
    points = [rule.sample(rng) for _ in range(20)]
    for a in rule.avoid:
        for i in range(rule.arity):
            for side in (-0.3, 0.3):
                p = list(rule.sample(rng))
                p[i] = a + side
                lo, hi = rule.sample_box[i]
                if lo < p[i] < hi:
                    points.append(tuple(p))
    return points


CUBE = Rule("cube", lambda x: x**3, (lambda x, out: 3.0 * x * x,), math="x**3")
HYPOT = Rule(
    "hypot",
    math.hypot,
    (lambda x, y, out: x / out, lambda x, y, out: y / out),
    math="sqrt(x**2 + y**2)",
    sample=((0.5, 2.0), (0.5, 2.0)),
)


@pytest.mark.parametrize("rule", [*ops.TABLE, CUBE, HYPOT], ids=lambda r: r.name)
def test_every_rule_through_compiled_code(rule: Rule) -> None:
    rng = random.Random(7)
    params = [Value(1.0) for _ in range(rule.arity)]

    def direct() -> Value:
        return rule(*params)

    def fused() -> Value:  # the arguments are fused temporaries, the result feeds an op
        return rule(*[p * 1.0 + 0.0 for p in params]) * 2.0

    for fn in (direct, fused):
        step = minigrad.compile(fn)
        for point in _points(rule, rng):
            for p, x in zip(params, point, strict=True):
                p.data = x  # read afresh by the compiled code
            want_loss, want = eager_grads(fn, (), params)
            got_loss, got = compiled_grads(step, (), params)
            assert got_loss == want_loss, (rule.name, point)
            assert all(close(a, b) for a, b in zip(got, want, strict=True)), (rule.name, point)


INLINED = [rule for rule in ops.TABLE if rule.inline is not None]


@pytest.mark.parametrize("rule", INLINED, ids=lambda r: r.name)
def test_each_inline_form_is_its_rule(rule: Rule) -> None:
    assert rule.inline is not None
    forward, partials = rule.inline.forward, rule.inline.partials
    namespace = {**minigrad.compiler.templates._NAMESPACE}
    assert minigrad.compiler.templates.bind(rule.inline, namespace)
    rng = random.Random(3)
    syms = sympy_oracle.SYMBOLS[: rule.arity]
    expr = sympy_oracle.rule_sympy(rule)
    for point in _points(rule, rng):
        args = [repr(x) if x >= 0 else f"({x!r})" for x in point]
        out = eval(forward.format(*args), namespace)
        assert out == rule.forward(*point)
        local = sympy_oracle.localize(expr, syms, point)
        for i, d in enumerate(partials):
            want = rule.partials[i]
            want_value = want if isinstance(want, float) else want(*point, out)
            got = d if isinstance(d, float) else eval(d.format(*args, out=repr(out)), namespace)
            assert got == want_value, (rule.name, i, point)
            if rule is ops.POW and i == 1 and out == 0.0:
                continue
            (exact,) = sympy_oracle.sympy_values(
                [sympy_oracle._derivative(local, tuple(syms), (i,))], syms, point
            )
            sympy_oracle.check(got, exact, f"template of {rule.name} partial {i}", "compile")


def test_rules_without_a_template_are_called_by_reference() -> None:
    # The table's rules without an inline form (tan, gamma, ...) go through
    # their own functions, as custom rules do; every rule is compiled above.
    untemplated = [rule for rule in ops.TABLE if rule.inline is None]
    assert ops.TAN in untemplated
    w = Value(0.3)
    step = minigrad.compile(lambda x: ops.TAN(w * x))
    source = step.program(1.0).source
    assert "_f0(" in source and "_d0_0(" in source  # the rule's forward and partial, called
    assert "math.tan" not in source
    assert step(1.0).data == ops.TAN(w * 1.0).data


def test_the_built_in_inline_forms_share_their_names() -> None:
    # Two rules that call _exp bind the same function: none of the table's
    # forms is pushed back to a call by reference by another one's names.
    names: dict[str, object] = {}
    assert all(minigrad.compiler.templates.bind(rule.inline, names) for rule in INLINED)  # type: ignore[arg-type]
    assert names["_exp"] is math.exp
    assert ops.TANH.inline is not None and ops.SIGMOID.inline is not None
    assert names["_sech2"] is ops.TANH.inline.names["_sech2"] is ops.SIGMOID.inline.names["_sech2"]


def test_a_custom_rule_with_an_inline_form_is_written_inline() -> None:
    # The compiler reads the form from the rule, built-in or not; a form whose
    # names clash with the compiler's own, or with another rule's, is called
    # by reference instead, with the same results.
    def cube_form(name: str) -> Inline:
        return Inline("({0} * {0} * {0})", (name + "({0})",), names={name: lambda x: 3.0 * x * x})

    w = Value(0.7)
    results = []
    # With _exp, cube is met first and binds it: exp is then called by reference.
    for name in ("_three", "_f0", "_exp"):
        cube = Rule(
            "cube", lambda x: x * x * x, (lambda x, out: 3.0 * x * x,), inline=cube_form(name)
        )
        step = minigrad.compile(lambda x: cube(w * x).exp())  # noqa: B023
        source = step.program(1.5).source
        assert ("_f0(" in source) is (name != "_three"), name
        assert ("(t0 * t0 * t0)" in source) is (name != "_f0"), name  # cube written inline
        w.grad = 0.0
        loss = step(1.5)
        loss.backward()
        results.append((loss.data, w.grad))
    eager = cube(w * 1.5).exp()
    w.grad = 0.0
    eager.backward()
    assert results == [(eager.data, w.grad)] * 3


def test_an_inline_form_must_fit_its_rule() -> None:
    with pytest.raises(TypeError, match="inline must be an Inline with 1 partials"):
        Rule("sq", lambda x: x * x, (lambda x, out: 2.0 * x,), inline=Inline("{0}", (1.0, 1.0)))
    with pytest.raises(TypeError, match="identifier starting with _"):
        Inline("sq({0})", ("{0}",), names={"sq": abs})
    with pytest.raises(TypeError, match="argument indices below 1"):
        Inline("({0} * {0})", ("{0}",), absorbing=(1,))


def test_a_new_argument_structure_traces_again() -> None:
    w = Value(0.5)
    step = minigrad.compile(lambda xs: sum((w * x for x in xs), Value(0.0) * 0.0))
    assert step([1.0, 2.0]).data == 1.5
    assert step([1.0, 2.0, 3.0]).data == 3.0
    assert len(step._programs) == 2
    assert step([4.0, 4.0]).data == 4.0
    assert len(step._programs) == 2
    with pytest.raises(TypeError, match=r"argument 0\[1\] must be a float"):
        step([1.0, "2"])


def test_parameter_data_is_read_afresh_and_backward_twice_accumulates() -> None:
    w = Value(2.0)
    step = minigrad.compile(lambda x: (w * x).tanh())
    loss = step(0.5)
    assert loss.data == math.tanh(1.0)
    w.data = -1.0
    assert step(0.5).data == math.tanh(-0.5)
    loss.backward()  # the point it was computed at: w = 2.0
    loss.backward()
    assert w.grad == 2 * (0.5 * ops.TANH.partials[0](1.0, math.tanh(1.0)))  # type: ignore[operator]


def _error(fn: Callable[..., object], *args: object) -> tuple[type, str] | None:
    try:
        fn(*args)
    except Exception as exc:
        return type(exc), str(exc)
    return None


def test_a_non_finite_result_gives_minigrads_usual_error() -> None:
    w = Value(1.0)
    step = minigrad.compile(lambda x: (w * x).log())
    assert step(2.0).data == math.log(2.0)
    want = _error(lambda: (w * -2.0).log())
    assert want is not None
    assert _error(step, -2.0) == want
    big = minigrad.compile(lambda x: (w * x).exp())
    assert _error(big, 1000.0) == _error(lambda: (w * 1000.0).exp())
    # The reverse pass: sqrt's slope at 0 is infinite.
    w.data = 0.0
    root = minigrad.compile(lambda x: (w * x).sqrt())
    loss = root(1.0)
    w.grad = 5.0
    want_b = _error(lambda: (w * 1.0).sqrt().backward())
    assert want_b is not None
    assert _error(loss.backward) == want_b
    assert w.grad == 5.0  # all or nothing, as eager


def test_a_closure_over_a_float_is_frozen_and_check_catches_it() -> None:
    w = Value(1.5)
    scale = 2.0
    step = minigrad.compile(lambda x: w * x * scale)
    assert step(1.0).data == 3.0
    scale = 3.0
    assert step(1.0).data == 3.0  # documented: pass data as arguments
    with pytest.raises(CheckError, match=r"compiled gives 3\.0, eager 4\.5"):
        step.check(1.0)


def test_check_passes_a_correct_function_and_leaves_grads() -> None:
    w = Value(0.3)
    w.grad = 7.0
    assert minigrad.compile(lambda x, y: (w * x - y).softplus()).check(2.0, 1.0)
    assert w.grad == 7.0


def test_check_of_a_loss_that_reaches_no_parameter_says_so() -> None:
    with pytest.raises(ValueError, match="reaches no parameter"):
        minigrad.compile(lambda x: x * 2.0).check(1.0)
    with pytest.raises(ValueError, match="reaches no parameter"):  # a leaf made per call
        minigrad.compile(lambda x: Value(0.0) + x * 2.0).check(1.0)


def test_check_takes_a_leaf_made_on_each_call_for_a_constant() -> None:
    # total = Value(0.0): the eager call makes another leaf, whose gradient says nothing
    # of the traced one's (eager 0, compiled 1 was a CheckError for a right function).
    w = Value(0.3)

    def mse(xs: list[float]) -> Value:
        total = Value(0.0)
        for x in xs:
            total = total + (w * x - 1.0) ** 2
        return total

    assert minigrad.compile(mse).check([1.0, 2.0])
    stale = 2.0
    wrong = minigrad.compile(lambda x: Value(0.0) + w * x * stale)
    wrong(1.0)
    stale = 3.0  # a float the trace froze: still caught
    with pytest.raises(CheckError):
        wrong.check(1.0)


@pytest.mark.parametrize("tolerance", [{"rtol": -1.0}, {"atol": math.nan}, {"atol": math.inf}])
def test_check_refuses_a_tolerance_it_cannot_use(tolerance: dict[str, float]) -> None:
    w = Value(0.3)
    with pytest.raises(ValueError, match="tol must be finite and >= 0"):
        minigrad.compile(lambda x: (w * x).sin()).check(2.0, **tolerance)


def test_large_graphs_are_split_into_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(minigrad.compiler.straight, "CHUNK_ABOVE", 10)
    monkeypatch.setattr(minigrad.compiler.straight, "CHUNK_SIZE", 7)
    monkeypatch.setattr(minigrad.compiler.loop, "LOOP_MIN_OPS", 10**9)  # no loop over examples
    rng = random.Random(2)
    model = MLP(2, [4, 1], rng=rng)
    params = model.parameters()

    def fn(xs: list[list[float]]) -> Value:
        return sum(((model.forward(x)[0]) ** 2 for x in xs), Value(0.0) * 0.0)

    step = minigrad.compile(fn)
    xs = [[0.5, -1.0], [1.0, 2.0], [-0.3, 0.2]]
    assert "def _f1(v, P, X):" in step.program(xs).source
    want_loss, want = eager_grads(fn, (xs,), params)
    got_loss, got = compiled_grads(step, (xs,), params)
    assert got_loss == want_loss
    assert all(close(a, b) for a, b in zip(got, want, strict=True))


@pytest.mark.parametrize("create_graph", [False, True])
def test_grad_of_a_compiled_loss_is_refused_not_zero(create_graph: bool) -> None:
    # The compiled loss is a leaf to the engine: grad would silently give 0.
    w = Value(1.5)
    step = minigrad.compile(lambda x: (w * x).tanh())
    loss = step(2.0)
    with pytest.raises(TypeError, match=r"grad: outputs is a compiled loss") as info:
        minigrad.grad(loss, [w], create_graph=create_graph)
    assert "loss.backward()" in str(info.value)
    assert "eager" in str(info.value)
    with pytest.raises(TypeError, match=r"grad: outputs\[1\] is a compiled loss"):
        minigrad.grad([w * 1.0, loss], [w], create_graph=create_graph)
    # What the message advises gives the derivative grad could not.
    loss.backward()
    assert close(w.grad, 2.0 * (1.0 - math.tanh(3.0) ** 2))


# The loop over examples: a batch whose examples repeat one subgraph runs as
# one loop; anything else is written out statement by statement.


def _batch(
    widths: list[int], n: int, act: str, seed: int
) -> tuple[Callable[..., Value], list[Value], list[list[float]], list[float]]:
    rng = random.Random(seed)
    model = MLP(2, widths, rng=rng, nonlin=act)
    xs = [[rng.uniform(-2, 2), rng.uniform(-2, 2)] for _ in range(n)]
    ys = [1.0 if a * b > 0 else -1.0 for a, b in xs]

    def loss_fn(xs: list[list[float]], ys: list[float]) -> Value:
        errs = [(model.forward(x)[0] - y) ** 2 for x, y in zip(xs, ys, strict=True)]
        return sum(errs[1:], errs[0]) * (1.0 / len(errs)) + 1e-3 * sum(
            p * p for p in model.parameters()
        )

    return loss_fn, model.parameters(), xs, ys


def _train_alongside_eager(
    step: minigrad.compiler.trace.Compiled,
    fn: Callable[..., Value],
    args: tuple[Any, ...],
    params: list[Value],
    steps: int,
) -> tuple[float, float]:
    """SGD steps on compiled gradients, each equal to eager's; the first and last loss."""
    losses = []
    for _ in range(steps):
        want_loss, want = eager_grads(fn, args, params)
        got_loss, got = compiled_grads(step, args, params)
        assert close(got_loss, want_loss)
        assert all(close(a, b) for a, b in zip(got, want, strict=True))
        losses.append(got_loss)
        for p, g in zip(params, got, strict=True):
            p.data -= 0.02 * g
    return losses[0], losses[-1]


def _looped(step: minigrad.compiler.trace.Compiled, *args: Any) -> bool:
    return "for gr," in step.program(*args).source


@pytest.mark.parametrize(
    ("widths", "act"),
    [([8, 8, 1], "relu"), ([24, 24, 1], "relu"), ([6, 1], "tanh")],
    ids=["relu 8-8", "relu 24-24 (gathered under the relu's test)", "tanh"],
)
def test_a_batch_runs_as_one_loop_and_equals_eager_over_sgd_steps(
    widths: list[int], act: str
) -> None:
    loss_fn, params, xs, ys = _batch(widths, 30, act, seed=4)
    step = minigrad.compile(loss_fn)
    assert _looped(step, xs, ys)
    eager_nodes = step.program(xs, ys).nodes
    assert step.program(xs, ys).source.count("\n") < eager_nodes / 10  # the loop is short
    first, last = _train_alongside_eager(step, loss_fn, (xs, ys), params, steps=12)
    assert 0.0 < last < first  # trained, not diverged


def test_check_compares_the_loop_with_eager_and_central_differences() -> None:
    loss_fn, _, xs, ys = _batch([3, 1], 4, "relu", seed=6)
    step = minigrad.compile(loss_fn)
    assert _looped(step, xs, ys)
    assert step.check(xs, ys)


def test_examples_that_differ_are_written_out_and_equal_eager() -> None:
    w = [Value(0.3), Value(-0.7)]
    consts = [1.0, 2.0, 3.0]  # a closure's floats: each example's subgraph differs

    def fn(xs: list[float]) -> Value:
        terms = [
            ((w[0] * x + w[1]).tanh() * c + (w[1] * x).sigmoid() * w[0]) ** 2
            for x, c in zip(xs, consts, strict=True)
        ]
        return sum(terms[1:], terms[0])

    step = minigrad.compile(fn)
    assert not _looped(step, [0.5, 1.0, -1.5])
    assert close(step([0.5, 1.0, -1.5]).data, fn([0.5, 1.0, -1.5]).data)
    assert step.check([0.5, 1.0, -1.5])


@pytest.mark.parametrize("shared", [False, True], ids=["weighted sum", "shared node"])
def test_batches_that_cannot_loop_are_written_out_and_equal_eager(shared: bool) -> None:
    # A weight per example puts a line of other code between the examples'
    # reverse passes; a node every example uses makes them overlap: neither loops.
    loss_fn, params, xs, ys = _batch([6, 1], 8, "relu", seed=5)
    w = Value(0.8)
    weights = [Value(0.1 * k) for k in range(len(xs))]

    def fn(xs: list[list[float]], ys: list[float]) -> Value:
        s = w.exp()
        errs = [loss_fn([x], [y]) for x, y in zip(xs, ys, strict=True)]
        if shared:
            errs = [(s * e).tanh() for e in errs]
            return sum(errs[1:], errs[0])
        return sum((c * e for c, e in zip(weights, errs, strict=True)), s)

    step = minigrad.compile(fn)
    assert not _looped(step, xs, ys)
    _train_alongside_eager(step, fn, (xs, ys), [*params, w, *weights], steps=3)


@pytest.mark.parametrize("rule", [*ops.TABLE, CUBE, HYPOT], ids=lambda r: r.name)
def test_every_rule_through_the_loop_over_examples(
    rule: Rule, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(minigrad.compiler.loop, "LOOP_MIN_OPS", 2)
    rng = random.Random(8)
    points = _points(rule, rng)
    params = [Value(x) for x in points[0]]

    def fn(xs: list[float]) -> Value:
        outs = [rule(*[p * x for p in params]) for x in xs]
        return sum(outs[1:], outs[0])

    step = minigrad.compile(fn)
    xs = [1.0, 1.0, 1.0]
    assert _looped(step, xs)
    for point in points:
        for p, x in zip(params, point, strict=True):
            p.data = x
        want_loss, want = eager_grads(fn, (xs,), params)
        got_loss, got = compiled_grads(step, (xs,), params)
        assert got_loss == want_loss, (rule.name, point)
        assert all(close(a, b) for a, b in zip(got, want, strict=True)), (rule.name, point)


def test_constant_powers_equal_eager_and_keep_pows_checks() -> None:
    w = Value(1.5)

    def fn(x: float) -> Value:
        y = w * x
        return y**2.0 + y**-1.0 + y**0.5 + y**0.0

    step = minigrad.compile(fn)
    for x in (2.0, 0.3, 7.0):
        want_loss, want = eager_grads(fn, (x,), [w])
        got_loss, got = compiled_grads(step, (x,), [w])
        assert got_loss == want_loss
        assert close(got[0], want[0])
    # 0 ** -1.0 raises in _pow: the call runs eagerly and gives eager's error.
    want_error = _error(fn, 0.0)
    assert want_error is not None
    assert _error(step, 0.0) == want_error


def test_a_slope_eager_skips_but_a_gathered_sum_evaluates_falls_back_to_eager() -> None:
    # sqrt's gradient is 0 here, so eager backward never evaluates its slope
    # 0.5 / sqrt(0); the generated code does (times that 0), divides by zero,
    # and runs this backward eagerly instead: the same gradients.
    w = Value(1.0)

    def fn(x: float) -> Value:
        return (w * x).relu().sqrt() * 0.0 + w * w

    step = minigrad.compile(fn)
    for x in (4.0, -4.0):
        want_loss, want = eager_grads(fn, (x,), [w])
        got_loss, got = compiled_grads(step, (x,), [w])
        assert got_loss == want_loss
        assert got == want


def test_a_closure_op_written_as_a_free_function_is_named_with_its_rule() -> None:
    # The lecture's tanh as a function, not a method: the refusal named op '+' alone, never
    # the op that read .data, nor that it must become a Rule.
    def ctanh(x: minigrad.Value) -> minigrad.Value:
        t = math.tanh(x.data)
        out = minigrad.Value(t, (x,), "ctanh")

        def _backward() -> None:
            x.grad += (1 - t * t) * out.grad

        out._backward = _backward
        return out

    w = minigrad.Value(0.3)
    step = minigrad.compile(lambda xs: (ctanh(w * xs[0]) - 1.0) ** 2)
    with pytest.raises(TracingError, match=r"The read is in ctanh\(\) \(.*minigrad\.Rule"):
        step([0.5])
    branchy = minigrad.compile(lambda xs: w * 2.0 if w.data > 0 else w)
    with pytest.raises(TracingError) as caught:  # the traced function's own read: no hint
        branchy([0.5])
    assert "The read is in" not in str(caught.value)


def test_a_compiled_loss_inside_the_checked_function_is_refused() -> None:
    # step(X, Y) + an L2 term added outside: the compiled value is a leaf, its derivative
    # lost, and the check said "wrong" with a cause asking whether func reads .data.
    w = minigrad.Value(0.3)
    step = minigrad.compile(lambda xs: (w * xs[0]).tanh() ** 2)
    with pytest.raises(TypeError, match=r"a value of func's graph is a compiled loss"):
        minigrad.check(lambda v: step([0.5]) + 1e-6 * v * v, [w])
