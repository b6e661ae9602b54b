"""The classroom layer: neural networks, toy data sets, the demo, pictures.

Built on the engine, the checker and the compiler; nothing below imports it,
so ``import minigrad`` does not load it. ``minigrad.teach.BackwardStepper``
(``backward()`` one step at a time, :mod:`minigrad.teach.stepper`) loads its
module on first use.
"""

from __future__ import annotations

# typing costs ~15 ms to import and is needed only by mypy.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from minigrad.teach.stepper import BackwardStepper as BackwardStepper
    from minigrad.teach.stepper import step_backward as step_backward

__all__ = ["BackwardStepper", "step_backward"]


def __getattr__(name: str) -> object:
    """``BackwardStepper`` and ``step_backward``, loaded on first use.

    The pictures (:mod:`minigrad.teach.viz`) come with them; a session that
    imports ``minigrad.teach.plot`` or ``minigrad.nn`` alone does not pay for them.
    """
    if name in ("BackwardStepper", "step_backward"):
        from minigrad.teach import stepper

        value: object = getattr(stepper, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'minigrad.teach' has no attribute {name!r}")
