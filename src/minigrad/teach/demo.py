"""The demo: a 2-16-16-1 MLP learns two moons, as in micrograd's demo notebook.

100 points of two moons (noise 0.1), a ReLU MLP, micrograd's max-margin
(hinge) loss plus L2 regularisation, and plain SGD with the learning rate
falling linearly from 1.0 towards 0.1 over ``steps``. Training stops as soon
as every training point is classified correctly, or after ``steps`` updates.
The loss runs through :func:`minigrad.compile` (traced on the first step),
or eagerly with ``compiled=False``: the two give the same numbers.

Progress goes to stderr as a plain line every ``every`` steps, whether or not
it is a terminal, so ``!python -m minigrad demo`` in a notebook shows it too;
the results go to stdout as ``key: value`` lines. :func:`run` returns the
trained model and its history. Everything is drawn from ``random.Random(seed)``,
so the output is identical on every run with the same seed except the last
line of stdout, ``seconds: ...``. No colour is used, so ``NO_COLOR`` holds
trivially.
"""

from __future__ import annotations

import random
import time
from typing import NamedTuple, TextIO

from minigrad.compiler.trace import compile as compile_loss
from minigrad.core._gc import gc_paused
from minigrad.core._validate import as_int
from minigrad.core.value import Value
from minigrad.teach.data import make_moons
from minigrad.teach.nn import MLP, SGD

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

__all__ = ["TARGET_ACCURACY", "History", "Result", "run"]

#: The training accuracy the demo promises; below it ``python -m minigrad demo`` exits 1.
TARGET_ACCURACY = 0.95

_POINTS = 100
_NOISE = 0.1
_ALPHA = 1e-4  # L2 weight, as in micrograd's demo
_LR_START = 1.0
_LR_END = 0.1


class History(NamedTuple):
    """The loss and the training accuracy at every step, before its update.

    Entry ``i`` is the state after ``i`` updates, so the last entry is the
    trained model's and there is one entry more than there were updates.

    Example:
        >>> h = History(losses=[0.9, 0.4], accuracies=[0.5, 0.75])
        >>> h.losses[-1], h.accuracies[-1]
        (0.4, 0.75)
    """

    #: The regularised hinge loss, one per step.
    losses: list[float]
    #: The fraction of training points classified correctly, one per step.
    accuracies: list[float]


class Result(NamedTuple):
    """What :func:`run` returns; unpacks as ``model, history = run(...)``.

    Example:
        >>> import random
        >>> r = Result(MLP(2, [1], rng=random.Random(0)), History([0.5], [0.96]))
        >>> r.reached_target
        True
    """

    #: The trained model.
    model: MLP
    #: The loss and accuracy at every step.
    history: History

    @property
    def reached_target(self) -> bool:
        """Whether the final training accuracy reaches :data:`TARGET_ACCURACY`."""
        return self.history.accuracies[-1] >= TARGET_ACCURACY


def run(
    stdout: TextIO,
    stderr: TextIO,
    *,
    seed: int = 0,
    steps: int = 100,
    every: int = 10,
    compiled: bool = True,
) -> Result:
    """Train the demo model, print progress and results, return the model and its history.

    Args:
        stdout: Where the results go (``key: value`` lines).
        stderr: Where progress goes (a line every ``every`` steps and one for
            the final state), terminal or not, and the line that says the
            target was missed.
        seed: Seeds the one ``random.Random`` that draws the data and the
            initial weights.
        steps: The most SGD updates to make (at least 1).
        every: Steps between progress lines; 0 for no progress.
        compiled: Run the loss through :func:`minigrad.compile` (the default)
            or eagerly; the numbers are the same.

    Returns:
        The trained model and its :class:`History`. When the final training
        accuracy is below :data:`TARGET_ACCURACY` (95%) a line on stderr says
        so and ``result.reached_target`` is False.

    Raises:
        TypeError: ``seed``, ``steps`` or ``every`` is not an int, or
            ``compiled`` is not a bool.
        ValueError: ``steps`` < 1 or ``every`` < 0.

    Example:
        >>> import io
        >>> out, err = io.StringIO(), io.StringIO()
        >>> model, history = run(out, err, seed=0, steps=1)  # too short to learn
        >>> model, len(history.losses)
        (MLP(2, [16, 16, 1], nonlin='relu'), 2)
        >>> print(out.getvalue(), end="")  # doctest: +ELLIPSIS
        data: two moons, 100 points, noise 0.1, seed 0
        model: MLP(2, [16, 16, 1], nonlin='relu'), 337 parameters
        objective: max-margin hinge loss + 0.0001 * L2, SGD, lr 1.0 -> 0.1
        engine: minigrad.compile
        steps: 1 (stopped at the step limit)
        loss: ...
        accuracy: ...%
        seconds: ...
        >>> print(err.getvalue(), end="")  # doctest: +ELLIPSIS
        step    0  loss ...  accuracy ...%
        step    1  loss ...  accuracy ...%
        demo: training accuracy ...% is below the 95% target after 1 step
    """
    as_int(seed, "demo: seed")
    as_int(steps, "demo: steps", least=1)
    as_int(every, "demo: every")
    if every < 0:
        raise ValueError(f"demo: every must be >= 0 (0 for no progress), got {every!r}")
    if not isinstance(compiled, bool):
        raise TypeError(
            f"demo: compiled must be a bool, got {type(compiled).__name__} {compiled!r}"
        )

    rng = random.Random(seed)
    points, labels = make_moons(_POINTS, noise=_NOISE, rng=rng)
    model = MLP(2, [16, 16, 1], nonlin="relu", rng=rng)
    params = model.parameters()
    opt = SGD(params, lr=_LR_START)
    history = History([], [])

    print(f"data: two moons, {_POINTS} points, noise {_NOISE}, seed {seed}", file=stdout)
    print(f"model: {model!r}, {len(params)} parameters", file=stdout)
    print(
        f"objective: max-margin hinge loss + {_ALPHA} * L2, SGD, lr {_LR_START} -> {_LR_END}",
        file=stdout,
    )
    print(f"engine: {'minigrad.compile' if compiled else 'eager'}", file=stdout)
    loss_of = _loss_function(model, params)
    step_loss = compile_loss(loss_of) if compiled else loss_of
    xs = [list(p) for p in points]
    ys = [float(y) for y in labels]

    start = time.perf_counter()
    # A graph has no reference cycles (nodes hold no closures), so reference
    # counting frees each step's graph; the cyclic collector would only rescan
    # its ~70,000 live nodes again and again, which costs about a third of the run.
    with gc_paused():
        step = 0
        while True:
            loss = step_loss(xs, ys)
            accuracy = _accuracy(model, points, labels)
            history.losses.append(loss.data)
            history.accuracies.append(accuracy)
            done = accuracy == 1.0 or step == steps
            # Plain lines, flushed, terminal or not: a notebook's `!python -m
            # minigrad demo` and a log file show progress as a terminal does.
            if every and (step % every == 0 or done):
                print(
                    f"step {step:4d}  loss {loss.data:.4f}  accuracy {accuracy:6.1%}",
                    file=stderr,
                    flush=True,
                )
            if done:
                break
            opt.zero_grad()
            loss.backward()
            opt.lr = _LR_START - (_LR_START - _LR_END) * step / steps
            opt.step()
            step += 1
    seconds = time.perf_counter() - start

    why = "100% training accuracy" if accuracy == 1.0 else "the step limit"
    print(f"steps: {step} (stopped at {why})", file=stdout)
    print(f"loss: {loss.data:.4f}", file=stdout)
    print(f"accuracy: {accuracy:.1%}", file=stdout)
    # Last and on its own line: the one line that differs between runs.
    print(f"seconds: {seconds:.1f}", file=stdout, flush=True)
    result = Result(model, history)
    if not result.reached_target:
        print(
            f"demo: training accuracy {accuracy:.1%} is below the {TARGET_ACCURACY:.0%} target "
            f"after {step} step{'' if step == 1 else 's'}",
            file=stderr,
        )
    return result


def _loss_function(model: MLP, params: list[Value]) -> Callable[..., Value]:
    """The regularised hinge loss of ``model`` over points and labels given as floats."""

    def loss(xs: Sequence[Sequence[float]], ys: Sequence[float]) -> Value:
        scores = [model.forward(x)[0] for x in xs]
        margins = [(1.0 - y * s).relu() for y, s in zip(ys, scores, strict=True)]
        data_loss = sum(margins[1:], margins[0]) * (1.0 / len(margins))
        reg_loss = _ALPHA * sum((p * p for p in params[1:]), params[0] * params[0])
        return data_loss + reg_loss

    return loss


def _accuracy(model: MLP, points: list[tuple[float, float]], labels: list[int]) -> float:
    """The fraction of points on their label's side, scored on floats (no graph)."""
    right = sum((model.predict(p)[0] > 0.0) == (y > 0) for p, y in zip(points, labels, strict=True))
    return right / len(labels)
