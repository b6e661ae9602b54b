"""The demo: a 2-16-16-1 MLP learns two moons, as in micrograd's demo notebook.

100 points of two moons (noise 0.1), a ReLU MLP, micrograd's max-margin
(hinge) loss plus L2 regularisation, and plain SGD with the learning rate
falling linearly from 1.0 towards 0.1 over ``steps``. Training stops as soon
as every training point is classified correctly, or after ``steps`` updates.

Progress goes to stderr, and only when stderr is a terminal; the results go to
stdout as ``key: value`` lines. Everything is drawn from ``random.Random(seed)``,
so stdout is identical on every run with the same seed except the last line,
``seconds: ...``. No colour is used, so ``NO_COLOR`` holds trivially.
"""

from __future__ import annotations

import random
import time
from typing import TextIO

from minigrad._gc import gc_paused
from minigrad.data import make_moons
from minigrad.engine import Value
from minigrad.nn import MLP, SGD

__all__ = ["TARGET_ACCURACY", "run"]

#: The training accuracy the demo promises; below it :func:`run` returns 1.
TARGET_ACCURACY = 0.95

_POINTS = 100
_NOISE = 0.1
_ALPHA = 1e-4  # L2 weight, as in micrograd's demo
_LR_START = 1.0
_LR_END = 0.1
_REPORT_EVERY = 10


def run(stdout: TextIO, stderr: TextIO, *, seed: int = 0, steps: int = 100) -> int:
    """Train the demo model, print the results, return an exit status.

    Args:
        stdout: Where the results go (``key: value`` lines).
        stderr: Where progress goes, only if ``stderr.isatty()``; errors
            go there always.
        seed: Seeds the one ``random.Random`` that draws the data and the
            initial weights.
        steps: The most SGD updates to make (at least 1).

    Returns:
        0 when the final training accuracy reaches :data:`TARGET_ACCURACY`
        (95%), else 1 (with a line on stderr saying so).

    Raises:
        TypeError: ``seed`` or ``steps`` is not an int.
        ValueError: ``steps`` < 1.

    Example:
        >>> import io
        >>> out, err = io.StringIO(), io.StringIO()
        >>> run(out, err, seed=0, steps=1)  # too short to learn: exit status 1
        1
        >>> print(out.getvalue(), end="")  # doctest: +ELLIPSIS
        data: two moons, 100 points, noise 0.1, seed 0
        model: MLP(2, [16, 16, 1], nonlin='relu'), 337 parameters
        objective: max-margin hinge loss + 0.0001 * L2, SGD, lr 1.0 -> 0.1
        steps: 1 (stopped at the step limit)
        loss: ...
        accuracy: ...%
        seconds: ...
        >>> print(err.getvalue(), end="")
        demo: training accuracy ...% is below the 95% target after 1 step
    """
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"demo: seed must be an int, got {type(seed).__name__} {seed!r}")
    if isinstance(steps, bool) or not isinstance(steps, int):
        raise TypeError(f"demo: steps must be an int, got {type(steps).__name__} {steps!r}")
    if steps < 1:
        raise ValueError(f"demo: steps must be >= 1, got {steps!r}")

    rng = random.Random(seed)
    points, labels = make_moons(_POINTS, noise=_NOISE, rng=rng)
    model = MLP(2, [16, 16, 1], nonlin="relu", rng=rng)
    params = model.parameters()
    opt = SGD(params, lr=_LR_START)
    progress = stderr.isatty()

    print(f"data: two moons, {_POINTS} points, noise {_NOISE}, seed {seed}", file=stdout)
    print(f"model: {model!r}, {len(params)} parameters", file=stdout)
    print(
        f"objective: max-margin hinge loss + {_ALPHA} * L2, SGD, lr {_LR_START} -> {_LR_END}",
        file=stdout,
    )

    start = time.perf_counter()
    # A graph has no reference cycles (nodes hold no closures), so reference
    # counting frees each step's graph; the cyclic collector would only rescan
    # its ~70,000 live nodes again and again, which costs about a third of the run.
    with gc_paused():
        step = 0
        while True:
            loss, accuracy = _evaluate(model, params, points, labels)
            if progress and (step % _REPORT_EVERY == 0 or accuracy == 1.0 or step == steps):
                print(
                    f"step {step:4d}  loss {loss.data:.4f}  accuracy {accuracy:6.1%}",
                    file=stderr,
                    flush=True,
                )
            if accuracy == 1.0 or step == steps:
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
    if accuracy < TARGET_ACCURACY:
        print(
            f"demo: training accuracy {accuracy:.1%} is below the {TARGET_ACCURACY:.0%} target "
            f"after {step} step{'' if step == 1 else 's'}",
            file=stderr,
        )
        return 1
    return 0


def _evaluate(
    model: MLP, params: list[Value], points: list[tuple[float, float]], labels: list[int]
) -> tuple[Value, float]:
    """The regularised hinge loss over every point, and the training accuracy."""
    # Points enter as float constants: no Value (and no grad) is made for them.
    scores = [model.forward(p)[0] for p in points]
    margins = [(1.0 - y * s).relu() for y, s in zip(labels, scores, strict=True)]
    data_loss = sum(margins[1:], margins[0]) * (1.0 / len(margins))
    reg_loss = _ALPHA * sum((p * p for p in params[1:]), params[0] * params[0])
    correct = sum((s.data > 0.0) == (y > 0) for y, s in zip(labels, scores, strict=True))
    return data_loss + reg_loss, correct / len(labels)
