"""The recorded graph replayed at moved inputs: the same bits as calling the function again.

A check evaluates the function of each level at moved inputs by replaying
the graph recorded at the inputs (``checking/run/tape.py``), where nothing
read a value while the graph was built. These tests hold the replay to the
function itself, bit for bit, at first and second order, and show when the
check must call the function again instead.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from minigrad import Value, check, grad
from minigrad.checking.run.tape import Tape, recording
from minigrad.checking.strategies import Expression, expressions


def _eager(e: Expression, point: list[float], k: int) -> list[float] | None:
    xs = [Value(x) for x in point]
    try:
        y = e(*xs)
        fs = [y] if k == 1 else list(grad(y, xs, create_graph=True))
    except (ArithmeticError, ValueError):
        return None
    return [f.data for f in fs]


@settings(max_examples=300, deadline=None, database=None)
@given(expressions(max_inputs=3, max_ops=6), st.integers(1, 2), st.data())
def test_a_replay_gives_the_bits_of_the_function_or_declines(
    e: Expression, k: int, data: st.DataObject
) -> None:
    xs = [Value(x) for x in e.inputs]
    with recording() as seen:
        y = e(*xs)
        fs = [y] if k == 1 else list(grad(y, xs, create_graph=True))
    if not seen.replayable(fs):
        return  # a rule read a value (relu's slope, say): the check calls func instead
    tape = Tape(fs, xs)
    i = data.draw(st.integers(0, len(xs) - 1))
    step = data.draw(st.sampled_from([1e-9, -1e-6, 1e-3, -0.1, 1.0, -7.0]))
    point = list(e.inputs)
    point[i] += step
    replayed = tape.along(i)(point[i])
    if replayed is not None:  # None sends the point to eager evaluation
        assert replayed == _eager(e, point, k)
    every = [data.draw(st.sampled_from([0.0, 1e-7, -1e-4])) for _ in xs]
    moved = tape.moved(every)
    if moved is not None:
        assert moved == _eager(e, [x + s for x, s in zip(e.inputs, every, strict=True)], k)


def test_reading_a_value_declines_the_replay_and_the_check_calls_func_at_moved_points() -> None:
    calls = 0

    def branching(a: Value, b: Value) -> Value:
        nonlocal calls
        calls += 1
        return (a * b).sin() if a > 0 else a * b

    def smooth(a: Value, b: Value) -> Value:
        nonlocal calls
        calls += 1
        return (a * b).sin()

    xs = [Value(0.5), Value(1.5)]
    assert check(branching, xs).ok
    assert calls >= 4 * len(xs)  # a pair of steps on each side of each input, at least
    calls = 0
    assert check(smooth, xs).ok
    assert calls <= 4  # the inputs, and three looks for determinism


def test_a_closure_op_declines_the_replay() -> None:
    x = Value(0.3)
    with recording() as seen:
        out = Value(math.exp(x._data), (x,), "exp")  # a closure, made without a .data read
        y = out * 2.0
    assert not seen.read
    assert not seen.replayable([y])
    with recording() as seen:
        y = x.exp() * 2.0
    assert seen.replayable([y])
    assert Tape([y], [x]).along(0)(0.5) == [math.exp(0.5) * 2.0]


def test_a_replay_refuses_what_eager_evaluation_refuses() -> None:
    x = Value(2.0)
    tape = Tape([x.log() + x.sqrt()], [x])
    assert tape.along(0)(-1.0) is None  # log raises there: eager names it
    assert tape.along(0)(0.0) is None
    assert tape.along(0)(4.0) == [math.log(4.0) + 2.0]
    big = Tape([x.exp()], [x])
    assert big.along(0)(1000.0) is None  # overflow: eager says so


def test_an_input_computed_from_another_is_held_fixed_as_the_check_holds_it() -> None:
    x = Value(0.7)
    inputs = [x, x * 2.0, (x * 2.0).sin()]

    def f(a: Value, b: Value, c: Value) -> Value:
        return (a * b).exp() * c

    tape = Tape([f(*inputs)], inputs)
    for i, t in [(0, 0.8), (1, 1.5), (2, -0.25)]:
        saved = inputs[i]._data
        inputs[i]._data = t  # moved alone, the other inputs as they are
        try:
            eager = [f(*inputs).data]
        finally:
            inputs[i]._data = saved
        assert tape.along(i)(t) == eager
