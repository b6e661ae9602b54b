"""micrograd's node protocol on minigrad's own Value: the lecture's cells, closures, refusals.

The cells are those of the micrograd lecture, run unchanged against
``minigrad.Value``: the positional constructor, manual backprop with
``o._backward()``, a hand-built topological order, ``Value.exp = exp`` with a
closure, a subclass whose method is a closure op. A user's closure op is
checked at order 1 (right passes; a flipped sign, a forgotten ``* out.grad``
and ``=`` for ``+=`` fail, naming the op) and refused by name wherever its
partials would be needed as formulas.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Callable, Iterator

import pytest
import sympy

import minigrad as mg
from lecture import more_ops, neuron
from minigrad import ClosureOpError, GradcheckError, Rule, Value
from minigrad.core.closure import Closure

Op = Callable[[Value], Value]


def lecture_neuron() -> tuple[dict[str, Value], Value]:
    named = neuron()
    return named, named["o"]


# The lecture's numbers: o = 0.7071, and the leaves' gradients.
LECTURE = {"x1": -1.5, "w1": 1.0, "x2": 0.5, "w2": 0.0, "b": 0.5}


def test_the_lectures_manual_backprop_gives_its_numbers() -> None:
    v, o = lecture_neuron()
    o.grad = 1.0
    o._backward()
    v["n"]._backward()
    v["b"]._backward()
    v["x1w1x2w2"]._backward()
    v["x2w2"]._backward()
    v["x1w1"]._backward()
    assert o.data == pytest.approx(0.7071067811865476)
    for name, expected in LECTURE.items():
        assert v[name].grad == pytest.approx(expected, abs=1e-12), name
    assert v["n"].grad == pytest.approx(0.5)


def build_topo(root: Value) -> list[Value]:
    """The lecture's recursive topological sort, as written there."""
    topo: list[Value] = []
    visited: set[Value] = set()

    def visit(v: Value) -> None:
        if v not in visited:
            visited.add(v)
            for child in v._prev:
                visit(child)
            topo.append(v)

    visit(root)
    return topo


def test_a_hand_built_topological_order_gives_backwards_numbers() -> None:
    v, o = lecture_neuron()
    o.grad = 1.0
    for node in reversed(build_topo(o)):
        node._backward()
    by_hand = {name: v[name].grad for name in LECTURE}
    for node in build_topo(o):
        node.grad = 0.0
    o.backward()
    assert by_hand == {name: v[name].grad for name in LECTURE}
    assert by_hand == pytest.approx(LECTURE, abs=1e-12)


def test_a_built_in_nodes_step_is_its_rule_and_nothing_else() -> None:
    a, b = Value(2.0), Value(-3.0)
    c = a * b
    c.grad = 0.5
    c._backward()
    assert (a.grad, b.grad, c.grad) == (-1.5, 1.0, 0.5)
    c._backward()  # a step adds, as every step does
    assert (a.grad, b.grad) == (-3.0, 2.0)
    leaf = Value(1.0)
    leaf.grad = 2.0
    leaf._backward()
    assert leaf.grad == 2.0
    # No closure is held: the step is made on each read.
    assert type(c.rule) is not Closure and c._backward is not c._backward


def _exp(self: Value) -> Value:
    """The lecture's exp, written as a closure."""
    x = self.data
    out = Value(math.exp(x), (self,), "exp")

    def _backward() -> None:
        self.grad += out.data * out.grad

    out._backward = _backward
    return out


@pytest.fixture
def closure_exp(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``Value.exp = exp``, the lecture's way, undone after the test."""
    monkeypatch.setattr(Value, "exp", _exp)
    yield


@pytest.mark.usefixtures("closure_exp")
def test_value_exp_as_a_closure_runs_the_lectures_tanh_by_exp() -> None:
    v, _ = lecture_neuron()
    n = v["n"]
    e = (2 * n).exp()
    o = (e - 1) / (e + 1)
    assert e.op == "exp" and type(e.rule) is Closure
    o.backward()
    assert o.data == pytest.approx(0.7071067811865476)
    for name, expected in LECTURE.items():
        assert v[name].grad == pytest.approx(expected, abs=1e-12), name
    # minigrad's own functions keep the built-in rule: their partials never
    # meet the user's closure, so they stay differentiable to any order.
    x = Value(0.3)
    assert type(mg.exp(x).rule) is not Closure
    assert mg.gradgradcheck(lambda t: mg.sigmoid(t) * mg.exp(t), [Value(0.3)])


class Micro(Value):
    """A subclass whose tanh is a closure op (the lecture's class body)."""

    def tanh(self) -> Value:
        t = (math.exp(2 * self.data) - 1) / (math.exp(2 * self.data) + 1)
        out = Micro(t, (self,), "tanh")

        def _backward() -> None:
            self.grad += (1 - t**2) * out.grad

        out._backward = _backward
        return out


def test_a_subclass_method_written_as_a_closure() -> None:
    x = Micro(0.8813735870195432)
    y = x.tanh() * 2.0
    y.backward()
    assert x.grad == pytest.approx(2 * (1 - math.tanh(0.8813735870195432) ** 2))
    assert mg.gradcheck(lambda t: Micro.tanh(t) * 3.0, [Value(0.4)])


def test_a_node_with_children_and_no_backward_passes_nothing_back() -> None:
    a = Value(2.0)
    out = Value(4.0, (a,), "twice")
    assert out.op == "twice" and out._op == "twice" and out._prev == {a}
    assert out.parents == (a,)
    (out * 3).backward()
    assert a.grad == 0.0 and out.grad == 3.0
    assert Value(1.0, (), "", "x").label == "x" and Value(1.0, ()).op == ""


def test_bad_constructor_arguments_and_steps_are_refused_by_name() -> None:
    a = Value(1.0)
    with pytest.raises(TypeError, match=r"_children\[1\] must be a Value, got float 2.0"):
        Value(1.0, (a, 2.0), "+")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="pass \\(v,\\) for one child"):
        Value(1.0, a, "exp")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="_op must be a str, got int 3"):
        Value(1.0, (a,), 3)  # type: ignore[arg-type]
    out = Value(2.0, (a,), "f")
    with pytest.raises(TypeError, match=r"function of no arguments, got float 1\.0"):
        out._backward = 1.0  # type: ignore[assignment]
    with pytest.raises(TypeError, match="function of no arguments"):
        out._backward = lambda g: None  # type: ignore[assignment,misc]


def closure_exp_with(bug: str) -> Op:
    """exp as a closure, right or with one of micrograd's common bugs."""

    def op(x: Value) -> Value:
        out = Value(math.exp(x.data), (x,), "myexp")

        def _backward() -> None:
            if bug == "right":
                x.grad += out.data * out.grad
            elif bug == "sign":
                x.grad -= out.data * out.grad
            elif bug == "no out.grad":
                x.grad += out.data
            elif bug == "=":
                x.grad = out.data * out.grad
            elif bug == "abs":  # right only for a positive upstream gradient
                x.grad += out.data * abs(out.grad)
            elif bug == "clipped":  # a gradient of at most 1 passed on
                x.grad += out.data * min(out.grad, 1.0)

        out._backward = _backward
        return out

    return op


SHAPES: dict[str, Callable[[Op], Callable[[Value], Value]]] = {
    "alone": lambda op: op,
    "times 3": lambda op: lambda x: op(x) * 3.0,
    "plus x": lambda op: lambda x: op(x) + x,
    "under tanh": lambda op: lambda x: op(x).tanh(),
}


@pytest.mark.parametrize("shape", SHAPES)
def test_a_right_closure_op_passes_gradcheck(shape: str) -> None:
    f = SHAPES[shape](closure_exp_with("right"))
    assert mg.gradcheck(f, [Value(0.3)])
    assert mg.check(f, [Value(-1.2)]).ok


@pytest.mark.parametrize(
    ("bug", "shape", "named"),
    [
        ("sign", "alone", "sign is flipped"),
        ("sign", "under tanh", "sign is flipped"),
        ("no out.grad", "alone", "ignores out.grad"),
        ("no out.grad", "plus x", "ignores out.grad"),
        ("no out.grad", "times 3", "ignores out.grad"),
        ("=", "plus x", "sets .grad (=) where it must add into it (+=)"),
        ("abs", "alone", "does not scale with out.grad"),
        ("abs", "times 3", "does not scale with out.grad"),
        ("clipped", "alone", "out.grad (it adds"),
        ("clipped", "under tanh", "out.grad (it adds"),
    ],
)
def test_a_wrong_closure_op_fails_and_is_named(bug: str, shape: str, named: str) -> None:
    f = SHAPES[shape](closure_exp_with(bug))
    with pytest.raises(GradcheckError) as caught:
        mg.gradcheck(f, [Value(0.3)])
    text = str(caught.value)
    assert "op 'myexp'" in text and named in text
    # The first line says what is wrong, not a number the closure's own entry lacks.
    assert "nan" not in text.splitlines()[0], text
    assert not mg.gradcheck(f, [Value(0.3)], raise_exception=False)


def test_a_forgotten_out_grad_fails_even_where_the_upstream_gradient_is_1() -> None:
    # func = op(x): the gradient reaching the op is 1, where `+= partial`
    # and `+= partial * out.grad` agree; the checker's pass makes it not 1.
    f = closure_exp_with("no out.grad")
    x = Value(0.3)
    f(x).backward()
    assert x.grad == pytest.approx(math.exp(0.3))  # right by accident here
    assert not mg.check(f, [Value(0.3)]).ok


def test_grad_through_a_closure_leaves_every_grad_as_it_was() -> None:
    op = closure_exp_with("right")
    x = Value(0.3)
    mid = op(x * 2.0)
    y = mid * x
    for node in mg.toposort([y]):
        node.grad = 7.0
    (dx,) = mg.grad(y, [x])
    assert dx.data == pytest.approx(math.exp(0.6) * (1 + 2 * 0.3))
    assert all(node.grad == 7.0 for node in mg.toposort([y]))
    # And when the closure raises, every .grad is put back too.
    boom = Value(1.0, (x,), "boom")

    def fails() -> None:
        raise ValueError("no")

    boom._backward = fails
    with pytest.raises(ValueError, match="op 'boom' backward: its _backward closure raised"):
        mg.grad(boom * x, [x])
    with pytest.raises(ValueError, match="op 'boom' backward"):
        (boom * x).backward()
    assert x.grad == 7.0 and boom.grad == 0.0


REFUSALS: dict[str, Callable[[Op], object]] = {
    "gradgradcheck": lambda op: mg.gradgradcheck(op, [Value(0.3)]),
    "create_graph": lambda op: (
        mg.grad(op(Value(0.3)), [], create_graph=True)
        or mg.grad(op(x := Value(0.3)), [x], create_graph=True)
    ),
    "hessian": lambda op: mg.hessian(op, [Value(0.3)]),
    "jvp": lambda op: mg.jvp(op, [Value(0.3)], [1.0]),
    "check_forward_ad": lambda op: mg.gradcheck(op, [Value(0.3)], check_forward_ad=True),
    "check_grads order 2": lambda op: mg.check_grads(op, (Value(0.3),), order=2),
}


@pytest.mark.parametrize("how", REFUSALS)
def test_what_needs_formulas_refuses_a_closure_op_by_name(how: str) -> None:
    with pytest.raises(ClosureOpError) as caught:
        REFUSALS[how](closure_exp_with("right"))
    text = str(caught.value)
    assert caught.value.op == "myexp"
    assert "op 'myexp'" in text and "_backward closure" in text
    assert 'myexp = minigrad.Rule("myexp", lambda x: ..., (lambda x, out: ...,))' in text


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("bug", ["sign", "no out.grad"])
def test_a_wrong_closure_fails_order_1_before_order_2_refuses_it(bug: str, fast_mode: bool) -> None:
    # gradgradcheck checks the first derivatives first: a closure that is wrong there
    # fails them, named, rather than being refused as an op order 2 cannot go through.
    op = closure_exp_with(bug)
    with pytest.raises(GradcheckError) as caught:
        mg.gradgradcheck(lambda a, b: op(a * b) + a, [Value(0.4), Value(-0.7)], fast_mode=fast_mode)
    assert "order 1" in str(caught.value) and "'myexp'" in str(caught.value)


def _pow_closure(k: float, right: bool) -> Op:
    """The lecture's __pow__ with a float exponent; wrong, without ``* a.data**(k - 1)``."""

    def op(a: Value) -> Value:
        out = Value(a.data**k, (a,), f"**{k}")

        def _backward() -> None:
            a.grad += k * (a.data ** (k - 1) if right else 1.0) * out.grad

        out._backward = _backward
        return out

    return op


@pytest.mark.parametrize("fast_mode", [False, True])
def test_a_float_power_closure_near_0_is_checked_where_its_steps_make_it_complex(
    fast_mode: bool,
) -> None:
    # Python's float power of a negative base is complex, and a Value of it is refused
    # (ComplexNumberError, a TypeError and a ValueError): at a point the check moved to,
    # that is the domain's edge, as math.sqrt's ValueError is. It raised TypeError,
    # "func must be defined around the inputs", for right rules (x ** 0.5 at 0.078).
    for k, x in [(0.5, 0.077554966869434), (-0.5, 0.0625), (1.5, 0.03)]:
        report = mg.check(_pow_closure(k, right=True), [Value(x)], fast_mode=fast_mode)
        assert report.ok, report
    report = mg.check(_pow_closure(0.5, right=False), [Value(0.8045893112953306)])
    assert not report.ok and report.failures[0].verdict == "wrong"
    with pytest.raises(TypeError) as caught:
        Value((-1.0) ** 0.5)
    assert isinstance(caught.value, ValueError) and "complex" in str(caught.value)


def _lecture_op(name: str, bug: str = "") -> Callable[..., Value]:
    """The lecture's +, * and tanh as closures; ``bug`` one a student makes."""

    def op(a: Value, b: Value | None = None) -> Value:
        if name == "tanh":
            out = Value(math.tanh(a.data), (a,), "tanh")
        else:
            assert b is not None
            out = Value(a.data + b.data if name == "+" else a.data * b.data, (a, b), name)

        def _backward() -> None:
            if name == "tanh":  # the classic slip: self.data where out.data is meant
                t = a.data if bug == "self.data" else out.data
                a.grad += (1 - t**2) * out.grad
            elif name == "+":
                a.grad += out.grad
                assert b is not None
                b.grad += -out.grad if bug == "sign" else out.grad
            else:
                assert b is not None
                a.grad += (1.0 if bug == "factor" else b.data) * out.grad
                b.grad += a.data * out.grad

        if bug != "unassigned":  # the other slip: the closure written, never assigned
            out._backward = _backward
        return out

    return op


@pytest.mark.parametrize(
    ("wrong", "bug"),
    [("tanh", "self.data"), ("+", "sign"), ("*", "factor"), ("tanh", "unassigned")],
)
def test_a_neuron_of_closures_alone_names_the_op_whose_slope_is_off(wrong: str, bug: str) -> None:
    # Every op a closure (the lecture's neuron): none can be checked against a forward of
    # its own, and a sign, a factor or another function's slope was "one of the ops '*',
    # '+', 'tanh'" (149 of 149 such neurons). Its value tells its op (tanh of its child,
    # the product of its two), and that op's slope what its _backward should add.
    add, mul, tanh = (_lecture_op(n, bug if n == wrong else "") for n in ("+", "*", "tanh"))

    def neuron(x1: Value, x2: Value, w1: Value, w2: Value, b: Value) -> Value:
        return tanh(add(add(mul(x1, w1), mul(x2, w2)), b))

    inputs = [Value(v) for v in (2.0, 0.0, -3.0, 1.0, 6.8813735870195432)]
    report = mg.check(neuron, inputs)
    assert not report.ok and report.fault.startswith(f"op {wrong!r}: its value is"), report.fault
    assert ("never assigned" in report.fault) == (bug == "unassigned"), report.fault
    add, mul, tanh = (_lecture_op(n) for n in ("+", "*", "tanh"))
    assert mg.check(neuron, inputs)  # the same ops, right: nothing to name


def test_compile_refuses_a_closure_op_by_name() -> None:
    op = closure_exp_with("right")
    made = op(Value(0.3))
    with pytest.raises(ClosureOpError, match=r"minigrad\.compile cannot go through op 'myexp'"):
        mg.compile(lambda x: made * x)(2.0)


@pytest.mark.usefixtures("closure_exp")
def test_compile_names_a_closure_method_met_while_tracing() -> None:
    with pytest.raises(mg.compiler.TracingError, match=r"the method exp\(\) of Value"):
        mg.compile(lambda x: (x * 1.0).exp())(0.3)


def test_the_same_op_as_a_rule_goes_to_every_order() -> None:
    myexp = mg.Rule("myexp", math.exp, (lambda x, out: out,))
    assert mg.gradgradcheck(myexp, [Value(0.3)])
    assert mg.check_grads(myexp, (Value(0.3),), order=3)


def test_built_in_nodes_hold_no_closure_and_are_freed_by_reference_counting() -> None:
    gc.collect()
    gc.disable()
    try:
        x = Value(0.5)
        y = (x * 2.0).tanh() + x.exp()
        y.backward()
        _ = y._backward  # reading the step makes no cycle
        assert not any(type(n.rule) is Closure for n in mg.toposort([y]))
        del y, _
        assert gc.collect() == 0  # nothing was left for the collector
        # A closure node holds a cycle (out -> closure -> out), as micrograd's do.
        z = closure_exp_with("right")(x)
        del z
        assert gc.collect() > 0
    finally:
        gc.enable()


# micrograd's own engine tests, with its ops written as closures on minigrad's
# Value (a subclass, micrograd's class body), against exact SymPy derivatives.


class Engine(Value):
    """micrograd's ops as closures on minigrad's node."""

    def __add__(self, other: Value | float) -> Engine:
        o = other if isinstance(other, Value) else Engine(other)
        out = Engine(self.data + o.data, (self, o), "+")

        def _backward() -> None:
            self.grad += out.grad
            o.grad += out.grad

        out._backward = _backward
        return out

    def __mul__(self, other: Value | float) -> Engine:
        o = other if isinstance(other, Value) else Engine(other)
        out = Engine(self.data * o.data, (self, o), "*")

        def _backward() -> None:
            self.grad += o.data * out.grad
            o.grad += self.data * out.grad

        out._backward = _backward
        return out

    def __pow__(self, other: Value | float) -> Engine:
        assert isinstance(other, int | float)
        out = Engine(self.data**other, (self,), f"**{other}")

        def _backward() -> None:
            self.grad += other * self.data ** (other - 1) * out.grad

        out._backward = _backward
        return out

    def relu(self) -> Engine:
        out = Engine(max(self.data, 0.0), (self,), "ReLU")

        def _backward() -> None:
            self.grad += (out.data > 0) * out.grad

        out._backward = _backward
        return out

    def __neg__(self) -> Engine:
        return self * -1

    def __radd__(self, other: Value | float) -> Engine:
        return self + other

    def __sub__(self, other: Value | float) -> Engine:
        return self + (-other)

    def __rsub__(self, other: Value | float) -> Engine:
        return other + (-self)

    def __rmul__(self, other: Value | float) -> Engine:
        return self * other

    def __truediv__(self, other: Value | float) -> Engine:
        return self * other**-1

    def __rtruediv__(self, other: Value | float) -> Engine:
        return other * self**-1


def _relu(e: sympy.Expr) -> sympy.Expr:
    return sympy.Max(0, e)


def test_micrograd_sanity_check_with_closures() -> None:
    x = Engine(-4.0)
    z = 2 * x + 2 + x
    q = z.relu() + z * x
    h = (z * z).relu()
    y = h + q + q * x
    y.backward()
    s = sympy.Symbol("x")
    zs = 2 * s + 2 + s
    qs = _relu(zs) + zs * s
    ys = _relu(zs * zs) + qs + qs * s
    assert y.data == float(ys.subs(s, -4))
    assert x.grad == float(sympy.diff(ys, s).subs(s, -4)) == 46.0
    assert all(type(n.rule) is Closure for n in mg.toposort([y]) if n.rule is not None)


def test_micrograd_more_ops_with_closures() -> None:
    a = Engine(-4.0)
    b = Engine(2.0)
    g = more_ops(a, b)
    g.backward()
    sa, sb = sympy.symbols("a b")
    cs = sa + sb
    ds = sa * sb + sb**3
    cs = cs + cs + 1
    cs = cs + 1 + cs + (-sa)
    ds = ds + ds * 2 + _relu(sb + sa)
    ds = ds + 3 * ds + _relu(sb - sa)
    fs = (cs - ds) ** 2
    gs = fs / 2 + 10 / fs
    at = {sa: -4, sb: 2}
    assert g.data == pytest.approx(float(gs.subs(at)), rel=1e-15)
    assert a.grad == pytest.approx(float(sympy.diff(gs, sa).subs(at)), rel=1e-12)
    assert b.grad == pytest.approx(float(sympy.diff(gs, sb).subs(at)), rel=1e-12)
    assert f"{g.data:.4f} {a.grad:.4f} {b.grad:.4f}" == "24.7041 138.8338 645.5773"
    # The same closures, checked: every entry agrees with the numbers.
    assert mg.gradcheck(lambda u, v: (u * v + v**3 - u) ** 2 / 2.0, [Engine(-4.0), Engine(2.0)])


@pytest.mark.parametrize("bug", ["right", "sign", "no out.grad"])
def test_fast_mode_and_check_grads_judge_closure_ops_as_the_exhaustive_check(bug: str) -> None:
    f = closure_exp_with(bug)
    right = bug == "right"
    assert mg.check(f, [Value(0.3)], fast_mode=True).ok is right
    if right:
        assert mg.check_grads(f, (Value(0.3),), order=1)
    else:
        with pytest.raises(GradcheckError, match="op 'myexp'"):
            mg.check_grads(f, (Value(0.3),), order=1)


def test_a_closure_rule_fills_every_slot_of_a_rule() -> None:
    # Closure sets Rule's slots by hand (it has no forward or partials to
    # validate): a slot added to Rule must be given a value there too.
    x = Value(1.0)
    rule = Value(2.0, (x,), "f").rule
    assert isinstance(rule, Closure)
    missing = [name for name in mg.Rule.__slots__ if not hasattr(rule, name)]
    assert missing == []


def test_a_closure_whose_backward_was_never_assigned_is_named_so() -> None:
    # micrograd's commonest slip after a forgotten out.grad: the _backward written and
    # `out._backward = _backward` left out. Its op is none of the lecture's, so its
    # value cannot tell the slope; that its step is still the default can.
    def cube(x: Value, assign: bool) -> Value:
        out = Value(x.data**3, (x,), "cube")

        def _backward() -> None:
            x.grad += 3.0 * x.data**2 * out.grad

        if assign:
            out._backward = _backward
        return out

    def softplus(x: Value) -> Value:  # a right closure beside it: named too, as it may be wrong
        out = Value(math.log1p(math.exp(x.data)), (x,), "softplus")

        def _backward() -> None:
            x.grad += 1 / (1 + math.exp(-x.data)) * out.grad

        out._backward = _backward
        return out

    inputs = [Value(0.5), Value(-1.2)]
    for outer in (Value.tanh, softplus):
        report = mg.check(lambda a, b, f=outer: f(cube(a * b, False)) + a, inputs)
        assert not report.ok and "op 'cube' has no _backward" in report.fault, report
        assert report.fault.startswith("op 'cube'") == (outer is Value.tanh), report.fault
        assert mg.check(lambda a, b, f=outer: f(cube(a * b, True)) + a, inputs)


def _product(a: Value, b: Value, both: bool, off: float = 1.0) -> Value:
    out = Value(a.data * b.data, (a, b) if both else (a,), "*")

    def _backward() -> None:
        a.grad += b.data * out.grad
        b.grad += a.data * out.grad * off

    out._backward = _backward
    return out


def _late_bound_neuron(ws: list[Value], b: Value, xs: list[float]) -> Value:
    out = b
    for wi, x in zip(ws, xs, strict=True):
        xi = Value(x)
        prod = Value(wi.data * xi.data, (wi, xi), "*")

        def _backward() -> None:  # sees the loop's last wi, xi and prod
            wi.grad += xi.data * prod.grad  # noqa: B023
            xi.grad += wi.data * prod.grad  # noqa: B023

        prod._backward = _backward
        out = out + prod
    return out


def _tanh_reading_child_grad(x: Value) -> Value:
    t = math.tanh(x.data)
    out = Value(t, (x,), "tanh")

    def _backward() -> None:
        x.grad += (1 - t**2) * x.grad  # x.grad where out.grad belongs

    out._backward = _backward
    return out


@pytest.mark.parametrize(
    ("slip", "func", "inputs", "named"),
    [
        (
            "a child left out of the tuple",
            lambda a, b: _product(a, b.tanh(), False),
            [0.5, -1.2],
            "op '*': its _backward adds to the .grad of b, not among its children",
        ),
        (
            "a closure made in a loop",
            lambda w0, w1, b: _late_bound_neuron([w0, w1], b, [0.5, -1.5]).tanh(),
            [0.3, -0.8, 0.1],
            "bind the loop's Values",
        ),
        (
            "the child's .grad for out.grad",
            lambda x: _tanh_reading_child_grad(x) * 3.0,
            [0.5],
            "what its _backward adds depends on the child's own .grad",
        ),
    ],
)
def test_a_closure_slip_is_named_for_what_it_is(
    slip: str, func: Callable[..., Value], inputs: list[float], named: str
) -> None:
    # A hostile round of students' slips: each was "adds the wrong local partial", or
    # "= for +=", or the slope of its op, where the step reads a Value it has no business with.
    report = mg.check(func, [Value(v) for v in inputs])
    assert not report.ok and named in report.fault, (slip, report.fault)
    assert mg.check(lambda a, b: _product(a, b.tanh(), True), [Value(0.5), Value(-1.2)])


def test_a_forward_that_writes_its_inputs_data_is_refused_and_the_input_kept() -> None:
    # An in-place relu moved the point checked to 0 and passed there, "a kink".
    def relu_in_place(x: Value) -> Value:
        x.data = max(x.data, 0.0)
        out = Value(x.data, (x,), "ReLU")

        def _backward() -> None:
            x.grad += (out.data > 0) * out.grad

        out._backward = _backward
        return out

    x = Value(-1.0)
    with pytest.raises(
        ValueError, match=r"func changed the .data of the input x\[0\] from -1.0 to 0.0"
    ):
        mg.check(lambda v: relu_in_place(v) + v, [x])
    assert (x.data, x.grad) == (-1.0, 0.0)
    assert mg.check(lambda v: relu_in_place(v) + v, [Value(2.0)])  # left as it is: fine


@pytest.mark.parametrize("how", ["closure", "rule"])
def test_a_wrong_op_beside_its_right_twin_is_caught_where_they_cancel_to_0(how: str) -> None:
    # my_tanh(x) - x.tanh() is 0 at every step, so its slope is 0 to within its terms'
    # rounding (the graph reads them, 0.46 each): the wrong op's -0.036 was "undecided",
    # as a 0 with no terms read (log1p(exp(x)) - x inside one rule at 700) still is.
    def tanh_of(x: Value, partial: Callable[[float, float], float]) -> Value:
        if how == "rule":
            return Rule("tanh_of", math.tanh, (lambda v, o: partial(v, o),))(x)
        t = math.tanh(x.data)
        out = Value(t, (x,), "tanh")

        def _backward() -> None:
            x.grad += partial(x.data, t) * out.grad

        out._backward = _backward
        return out

    wrong, right = (lambda v, o: 1.0 - v * v), (lambda v, o: 1.0 - o * o)
    for x in (0.5, -1.3, 3e5):
        report = mg.check(lambda v: tanh_of(v, wrong) - v.tanh(), [Value(x)])
        assert [e.verdict for e in report.entries] == ["wrong"], (x, report)
        report = mg.check(lambda v: tanh_of(v, right) - v.tanh(), [Value(x)])
        assert report.ok, (x, report)
    # A 0 made inside one forward is off by all its value (log1p(exp(x)) - x at 700 is
    # 1e-304), however the graph scales it after or adds terms that cancel beside it.
    sp = Rule("sp", lambda v: math.log1p(math.exp(v)) - v, (lambda v, o: -1 / (1 + mg.exp(v)),))
    for func in (lambda v: sp(v) * 10.0, lambda v: sp(v) - 1e-300 * v + 1e-300 * v):
        report = mg.check(func, [Value(700.0)])
        assert report.ok and report.entries[0].verdict == "undecided", report


def _relu_closure(x: Value, at_0: float) -> Value:
    out = Value(max(x.data, 0.0), (x,), "ReLU")

    def _backward() -> None:
        x.grad += (1.0 if x.data > 0 else at_0 if x.data == 0 else 0.0) * out.grad

    out._backward = _backward
    return out


@pytest.mark.parametrize(
    ("func", "named"),
    [
        # relu(x) - relu(-x) is x: each relu's subgradient at 0 composes to 0, not 1.
        (lambda x: _relu_closure(x, 0.0) - _relu_closure(-x, 0.0), "ops are at kinks of their own"),
        (lambda x: x.relu() - (-x).relu(), "ops are at kinks of their own"),
        # 2 is no subgradient of relu at 0: the op is wrong, alone or in the pair.
        (lambda x: _relu_closure(x, 2.0) * 3.0 + x, "where a subgradient lies between the slopes"),
        (lambda x: _relu_closure(x, 2.0) - _relu_closure(-x, 2.0), "but its _backward adds 2"),
    ],
)
def test_relus_at_their_kink_are_told_from_a_wrong_relu(
    func: Callable[[Value], Value], named: str
) -> None:
    report = mg.check(func, [Value(0.0)])
    assert not report.ok and named in report.fault, report.fault
    assert mg.check(lambda x: _relu_closure(x, 0.5) * 3.0 + x, [Value(0.0)])  # a subgradient


def test_a_backward_that_moves_its_inputs_data_is_named_not_taken_for_randomness() -> None:
    # An SGD step inside _backward moved the point between the check's looks, which
    # read as "not deterministic: fix the random mask or counter".
    def tanh_stepping(x: Value) -> Value:
        t = math.tanh(x.data)
        out = Value(t, (x,), "tanh")

        def _backward() -> None:
            x.grad += (1 - t**2) * out.grad
            x.data -= 0.01 * x.grad

        out._backward = _backward
        return out

    x = Value(0.5)
    with pytest.raises(
        ValueError, match=r"a backward pass .* changed the .data of the input x\[0\]"
    ):
        mg.check(lambda v: tanh_stepping(v) * 2.0, [x])
    assert (x.data, x.grad) == (0.5, 0.0)


def test_a_right_closure_that_reads_a_side_graphs_value_is_not_blamed() -> None:
    # tanh made of Values, wrapped as one node that reads t.data: t is no child, but the
    # step only reads it. The wrong op is the product beside it, and is the one named.
    def fused_tanh(x: Value) -> Value:
        e = (2 * x).exp()
        t = (e - 1) / (e + 1)
        out = Value(t.data, (x,), "fusedtanh")

        def _backward() -> None:
            x.grad += (1 - t.data**2) * out.grad

        out._backward = _backward
        return out

    report = mg.check(lambda x: _product(fused_tanh(x), x, True, 1.001) + x, [Value(0.3)])
    assert not report.ok and report.fault.startswith("op '*': its value is a * b"), report.fault
