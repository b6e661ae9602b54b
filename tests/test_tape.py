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


def _levels(e: Expression, xs: list[Value], k: int) -> list[list[Value]]:
    """Levels 1 to k of ``e`` at ``xs``, as a check builds them."""
    levels = [[e(*xs)]]
    for _ in range(k - 1):
        levels.append([g for f in levels[-1] for g in grad(f, xs, create_graph=True)])
    return levels


def _eager(e: Expression, point: list[float], k: int) -> list[float] | None:
    try:
        fs = _levels(e, [Value(x) for x in point], k)[-1]
    except (ArithmeticError, ValueError):
        return None
    return [f.data for f in fs]


@settings(max_examples=300, deadline=None, database=None)
@given(expressions(max_inputs=3, max_ops=6), st.integers(1, 3), st.data())
def test_a_replay_gives_the_bits_of_the_function_or_declines(
    e: Expression, k: int, data: st.DataObject
) -> None:
    xs = [Value(x) for x in e.inputs]
    with recording() as seen:
        levels = _levels(e, xs, k)
    fs = levels[-1]
    if not seen.replayable(fs):
        return  # a rule read a value (relu's slope, say): the check calls func instead
    below = [f for level in levels[:-1] for f in level]
    tape = Tape(fs, xs, below)  # the ops of the levels below run too
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
    assert calls <= 5  # the inputs, three looks for determinism, one to hold the replay to


def test_a_value_made_outside_the_graph_declines_the_replay() -> None:
    # grad without create_graph gives a leaf: nothing read .data where the recording
    # sees it, and the replay held the inner gradient fixed. It agreed with the rule's
    # 1 (a missed create_graph, which calling func again shows: 36 x**3 + 1 = 13.3).
    import copy

    def penalty(x: Value) -> Value:
        return grad(x**3, [x])[0] ** 2 + x

    for func, slope in ((penalty, 36 * 0.7**3 + 1), (lambda x: x * copy.deepcopy(x), 1.4)):
        report = check(func, [Value(0.7)])
        (entry,) = report.entries
        assert not report and entry.verdict == "wrong", report
        assert abs(entry.numerical - slope) <= entry.error, entry
    assert check(lambda x: x * x + x, [Value(0.7)])  # replayed, and right


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
    # A derivative need not use the function's own ops (atanh' is 1 / (1 - x * x),
    # defined at -7): they are replayed with it, and refuse the point as eager does.
    z = Value(0.0)
    y = z.atanh() + z
    (slope,) = grad(y, [z], create_graph=True)
    assert Tape([slope], [z]).along(0)(-7.0) is not None
    assert Tape([slope], [z], [y]).along(0)(-7.0) is None
    assert Tape([slope], [z], [y]).along(0)(0.5) == [1.0 / (1.0 - 0.25) + 1.0]


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
