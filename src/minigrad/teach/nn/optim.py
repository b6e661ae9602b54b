"""Training: :class:`SGD`, plain stochastic gradient descent over a list of Values."""

from __future__ import annotations

from collections.abc import Iterable

from minigrad.core._validate import positive
from minigrad.core.value import Value
from minigrad.teach.nn.modules import _zero_grads

__all__ = ["SGD"]


class SGD:
    """Plain stochastic gradient descent: ``p.data -= lr * p.grad``.

    Args:
        params: The Values to train, e.g. ``model.parameters()``.
        lr: The learning rate (> 0). It is a read/write attribute, so a
            schedule can change it between steps.

    Raises:
        TypeError: A parameter is not a Value, or ``lr`` is not a number.
        ValueError: ``params`` is empty or repeats a Value, or ``lr`` is not
            a finite number > 0.

    Example:
        >>> w = Value(1.0)
        >>> opt = SGD([w], lr=0.5)
        >>> (w * w).backward()  # d/dw w**2 = 2
        >>> opt.step()
        >>> w.data
        0.0
        >>> opt.zero_grad()
        >>> w.grad
        0.0
    """

    def __init__(self, params: Iterable[Value], lr: float) -> None:
        if isinstance(params, Value) or not isinstance(params, Iterable):
            raise TypeError(
                f"SGD: params must be an iterable of Values such as model.parameters(), "
                f"got {type(params).__name__}"
            )
        kept = list(params)
        if not kept:
            raise ValueError("SGD: params is empty; there is nothing to train")
        seen: set[Value] = set()
        for i, p in enumerate(kept):
            if not isinstance(p, Value):
                raise TypeError(f"SGD: params[{i}] must be a Value, got {type(p).__name__} {p!r}")
            if p in seen:
                # It would be stepped twice per step(), silently doubling its rate.
                raise ValueError(f"SGD: params[{i}] appears more than once: {p!r}")
            seen.add(p)
        self.params = kept
        self.lr = lr

    @property
    def lr(self) -> float:
        """The learning rate (read/write; a finite number > 0).

        Example:
            >>> opt = SGD([Value(1.0)], lr=1.0)
            >>> for step in range(3):
            ...     opt.lr = 1.0 / (1 + step)  # a schedule
            >>> opt.lr
            0.3333333333333333
        """
        return self._lr

    @lr.setter
    def lr(self, lr: float) -> None:
        lr = positive(lr, "SGD: lr")
        self._lr = float(lr)

    def step(self) -> None:
        """Move every parameter against its gradient: ``p.data -= lr * p.grad``.

        Example:
            >>> w = Value(2.0)
            >>> w.grad = 4.0
            >>> SGD([w], lr=0.25).step()
            >>> w.data
            1.0
        """
        lr = self._lr
        for p in self.params:
            p.data = p.data - lr * p.grad

    def zero_grad(self) -> None:
        """Set ``.grad = 0.0`` on every parameter (backward accumulates).

        Example:
            >>> w = Value(2.0)
            >>> opt = SGD([w], lr=0.1)
            >>> (w * 3.0).backward()
            >>> opt.zero_grad()
            >>> w.grad
            0.0
        """
        _zero_grads(self.params)

    def __repr__(self) -> str:
        return f"SGD({len(self.params)} parameters, lr={self._lr!r})"
