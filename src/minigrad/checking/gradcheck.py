"""Derivative checks: gradcheck, gradgradcheck and check_grads of any order.

The public entry points, thin: each bundles its settings into one
:class:`~minigrad.checking.run.settings.Settings`, runs one check
(:func:`~minigrad.checking.run.runner.run_check`) and concludes: a
:class:`Report`, True, or :class:`GradcheckError`.

One machinery serves every order (:mod:`minigrad.checking.run.levels`): level 1 is
``func``'s outputs, level k + 1 every analytic derivative of level k. A check
of order n compares, for levels 1 to n, the analytic derivatives of the
level's values with numerical ones, so a second-order check also checks the
first derivative and sees the whole Hessian of each output.

The analytic side comes in the modes the check asks for (``modes``): reverse
mode (``"rev"``, one reverse pass per function of the level) and forward mode
(``"fwd"``, one jvp per input with the unit tangent; above level 1, the jvp of
the level's reverse-mode gradients: forward over reverse). Each mode is
compared with the same numerical derivatives, and every failing entry says
which mode it came from.

How an entry is judged, and how a failure is explained, is in
:mod:`minigrad.checking.run.compare`.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence

from minigrad.checking.run.determinism import NondeterministicError
from minigrad.checking.run.levels import Func
from minigrad.checking.run.report import Entry, Report
from minigrad.checking.run.runner import run_check
from minigrad.checking.run.settings import MODES as MODES  # importable here, as before the split
from minigrad.checking.run.settings import Settings, modes_from_flags
from minigrad.core._validate import as_bool
from minigrad.core.value import Value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from minigrad.checking.run.engines import Inputs

__all__ = [
    "Entry",
    "GradcheckError",
    "GradcheckWarning",
    "NondeterministicError",
    "Report",
    "Settings",
    "check",
    "check_grads",
    "gradcheck",
    "gradgradcheck",
]


class GradcheckWarning(UserWarning):
    """A check passed, but something deserves a look: a kink, a pass by atol only."""


class GradcheckError(AssertionError, RuntimeError):
    """A derivative check failed; ``.report`` holds every failing entry.

    The message is the report: short in a terminal, complete under pytest.
    An ``AssertionError`` (the lab's spec: a failed check reads as a failed
    test) and a ``RuntimeError`` (PyTorch's ``GradcheckError`` is one, so a
    test ported from PyTorch that catches ``RuntimeError`` still catches it).

    Raised with a plain message instead (as a user's own helper may, like
    any exception), it has that message, and ``.report`` is a failed report
    without entries whose ``fault`` is the message.

    Args:
        report: The failed check's :class:`Report`, or a message.

    Example:
        >>> err = GradcheckError("my message")
        >>> str(err), err.report.ok, err.report.failures, err.report.fault
        ('my message', False, [], 'my message')
    """

    def __init__(self, report: Report | str) -> None:
        self._message_only = isinstance(report, str)
        if isinstance(report, str):
            super().__init__(report)
            report = Report(ok=False, order=0, checked=0, fault=report)
        elif isinstance(report, Report):
            super().__init__(report.text(full="PYTEST_CURRENT_TEST" in os.environ))
        else:
            raise TypeError(
                f"GradcheckError: report must be a Report or a str (the message), "
                f"got {type(report).__name__} {report!r}"
            )
        self.report = report

    def _repr_html_(self) -> str | None:
        # None: a notebook shows a plain message as text.
        return None if self._message_only else self.report._repr_html_()


# Shown by its public name in tracebacks and doctests, not by the module it lives in.
GradcheckError.__module__ = "minigrad"


def _conclude(report: Report, raise_exception: bool) -> bool:
    """True, or GradcheckError/False; warns of what a passing check noticed.

    Called straight from each public checker, so stacklevel 3 is its caller.
    """
    __tracebackhide__ = True
    if report.ok:
        for text in report.warnings:
            warnings.warn(f"gradcheck passed, but {text}", GradcheckWarning, stacklevel=3)
        return True
    if raise_exception:
        raise GradcheckError(report)
    return False


def check(
    func: Func,
    inputs: Inputs,
    *,
    order: int = 1,
    grad_outputs: Sequence[float | Value] | None = None,
    eps: float | None = None,
    atol: float | None = None,
    rtol: float | None = None,
    nondet_tol: float = 0.0,
    fast_mode: bool = False,
    method: str = "central",
    seed: int = 0,
    modes: Sequence[str] = ("rev",),
) -> Report:
    """Check every derivative of ``func`` up to ``order``; return the report.

    The engine behind :func:`gradcheck`, :func:`gradgradcheck` and
    :func:`check_grads`: it never raises on a mismatch, and the report shows
    itself as a table (HTML in a notebook). Inputs are restored bit for bit.

    Args:
        func: Takes the inputs, returns a Value or a tuple of Values.
        inputs: The Values to perturb (each exactly once). A number becomes
            a fresh Value (reported by its position, as any input). The
            nodes of a micrograd-style engine are checked too, by their own
            ``backward()``: first derivatives, reverse mode (see
            :mod:`minigrad.checking.run.engines`).
        order: Check derivatives of orders 1 to ``order``.
        grad_outputs: Weights v: above order 1, the derivatives of
            sum_j v_j * out_j are checked; Value weights are checked as inputs.
        eps: The nominal step, scaled for |x| > 1: ``eps * max(1, sqrt(|x|))``;
            None is 1e-6 (PyTorch's), and the checker takes other steps
            where that one does not settle an entry.
        atol: Absolute tolerance of the classic test. With ``atol`` and
            ``rtol`` both None (the default), each entry is decided by the
            numerical derivative's error bound: *wrong*, *agrees* (to k
            digits) or *undecided* (which passes, with a
            :class:`GradcheckWarning` that says why). Given either, the
            classic test ``|a - n| <= atol + rtol * |n|`` decides (the other
            at PyTorch's default), and cautions name the differences the
            numbers prove but the tolerance forgave.
        rtol: Relative tolerance of the classic test (to the numerical value).
        nondet_tol: How far two passes (of each mode) over one graph may differ
            (the second runs only when the graph holds a rule that is not
            one of ``ops.TABLE`` as built: those are pure).
        fast_mode: Compare one random directional derivative per order first
            (3 evaluations of ``func``: at the point and two moved points,
            instead of 2N + 1); only if it fails, compare every entry.
        method: ``"central"`` or ``"richardson"`` (the nominal difference
            extrapolated from eps and eps/2: twice the evaluations).
        seed: Seed of fast mode's random directions.
        modes: How the analytic derivatives are computed, JAX's names:
            ``"rev"`` (reverse mode), ``"fwd"`` (forward mode: the jvp with
            each unit tangent; above order 1, forward over reverse), or both
            (each compared with the same numerical derivatives). A failing
            entry names its mode.

    Returns:
        The :class:`Report`.

    Example:
        >>> from minigrad import Value
        >>> x, y = Value(0.5), Value(2.0)
        >>> check(lambda a, b: (a * b).sin(), [x, y], order=2).ok
        True
        >>> print(check(lambda a, b: (a * b).sin(), [x, y], order=2, modes=("fwd", "rev")))
        gradcheck passed: orders 1-2, 12 comparisons (exhaustive; forward and reverse mode)
        verdicts: 12 agree (9 to 11 digits)
        >>> entry = check(lambda a: a.exp(), [Value(0.5)]).entries[0]
        >>> entry.verdict, entry.digits >= 9
        ('agrees', True)
    """
    settings = Settings.of("check", locals())
    return run_check(func, inputs, order, grad_outputs, settings)


def check_grads(
    func: Func,
    inputs: Inputs,
    order: int = 1,
    modes: Sequence[str] = ("rev",),
    atol: float | None = None,
    rtol: float | None = None,
    eps: float | None = None,
    *,
    grad_outputs: Sequence[float | Value] | None = None,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    fast_mode: bool = False,
    method: str = "central",
    seed: int = 0,
) -> bool:
    """Check every derivative of ``func`` up to ``order`` against numerical ones.

    Raises :class:`GradcheckError` on a mismatch (or returns False when
    ``raise_exception`` is False). Arguments as in :func:`check`, in JAX's
    order: ``check_grads(f, args, order, modes, atol, rtol, eps)``, so a
    test written for ``jax.test_util.check_grads`` runs as it is (floats as
    ``args`` included). ``modes`` is JAX's: ``("fwd", "rev")`` checks forward
    and reverse mode. ``atol``, ``rtol`` and ``eps`` of None take the
    defaults of :func:`check`.

    Example:
        >>> from minigrad import Value
        >>> check_grads(lambda x: x.tanh() * x, [Value(0.3)], order=3)
        True
        >>> check_grads(lambda x: x.tanh() * x, (0.3,), 3, ("fwd", "rev"))
        True
    """
    __tracebackhide__ = True
    as_bool(raise_exception, "check_grads: raise_exception")
    # JAX's None is check's default too: the verdict from the error bound,
    # the step chosen per input.
    settings = Settings.of("check_grads", locals())
    return _conclude(run_check(func, inputs, order, grad_outputs, settings), raise_exception)


def gradcheck(
    func: Func,
    inputs: Inputs,
    *,
    eps: float | None = None,
    atol: float | None = None,
    rtol: float | None = None,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    fast_mode: bool = False,
    method: str = "central",
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
) -> bool:
    """Check first derivatives: every output against every input.

    Each derivative is compared with a numerical one, a central difference
    ``(f(x + h) - f(x - h)) / 2h`` (extrapolated over several steps where
    one does not decide), as PyTorch's ``gradcheck`` and lab 03's do.

    Args:
        func: Takes the inputs, returns a Value or a tuple of Values; every
            output is checked against every input (the full Jacobian).
        inputs: The Values to perturb, each exactly once; a number becomes a
            fresh Value. A micrograd-style engine's nodes are checked by
            their own ``backward()``. Every ``.data`` and ``.grad`` is put
            back as it was, also when the check fails or ``func`` raises.
        eps: The nominal step h of the central difference (for |x| > 1 it
            grows as ``eps * sqrt(|x|)``). None: the checker chooses the
            step for each input.
        atol: Absolute tolerance. With ``atol`` and ``rtol`` both None each
            derivative is judged by the numerical one's error bound (wrong,
            agrees to k digits, or undecided, which passes with a
            :class:`GradcheckWarning`). Given either, an entry passes when
            ``|analytic - numerical| <= atol + rtol * |numerical|``.
        rtol: Relative tolerance of that test (the other takes PyTorch's
            default: atol 1e-5, rtol 1e-3).
        raise_exception: On a mismatch, raise :class:`GradcheckError` (True)
            or return False.
        nondet_tol: How far two backward passes over one graph may differ
            (0: a second pass runs only for rules minigrad does not know).
        fast_mode: First compare one random directional derivative (3
            evaluations of ``func``); compare every entry only if it fails.
        method: ``"central"``, or ``"richardson"`` (the difference at eps
            and eps/2, extrapolated).
        check_forward_ad: Also check forward mode (the jvp with each unit
            tangent), PyTorch's name.
        check_backward_ad: Check reverse mode (``backward``); at least one
            of the two must be True.

    Returns:
        True when every derivative agrees.

    Raises:
        GradcheckError: A derivative differs (unless ``raise_exception`` is
            False). Its message names the output and input, the expected
            (numerical) and got (analytic) values, abs diff and rel diff.
        TypeError: ``func`` or ``inputs`` are not what they must be.
        ValueError: Empty inputs, a non-positive eps, negative tolerances.

    Example:
        >>> from minigrad import Value
        >>> gradcheck(lambda a, b: a * b.exp(), [Value(1.5), Value(-0.5)])
        True
        >>> gradcheck(lambda a: a.sin(), [Value(0.5)], check_forward_ad=True)
        True
    """
    __tracebackhide__ = True
    as_bool(raise_exception, "gradcheck: raise_exception")
    modes = modes_from_flags(
        "gradcheck", check_backward_ad=check_backward_ad, check_forward_ad=check_forward_ad
    )
    settings = Settings.of("gradcheck", locals(), modes=modes)
    return _conclude(run_check(func, inputs, 1, None, settings), raise_exception)


def gradgradcheck(
    func: Func,
    inputs: Inputs,
    grad_outputs: Sequence[float | Value] | None = None,
    *,
    eps: float | None = None,
    atol: float | None = None,
    rtol: float | None = None,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    fast_mode: bool = False,
    method: str = "central",
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
) -> bool:
    """Check first and second derivatives (the whole Hessian of each output).

    With ``grad_outputs`` v, the second order checked is that of
    sum_j v_j * out_j, and Value weights are checked as inputs too.

    ``check_rev_over_rev`` checks the second derivatives by reverse mode
    over the reverse-mode gradient, ``check_fwd_over_rev`` by forward mode
    over it (the jvp of the gradient); the first derivatives are checked in
    the same modes (reverse, forward). PyTorch's names; at least one must
    be True.

    Example:
        >>> from minigrad import Value
        >>> gradgradcheck(lambda x, y: (x - y).exp(), [Value(0.2), Value(0.7)])
        True
        >>> gradgradcheck(lambda x: x.exp() * x, [Value(0.2)], check_fwd_over_rev=True)
        True
    """
    __tracebackhide__ = True
    as_bool(raise_exception, "gradgradcheck: raise_exception")
    modes = modes_from_flags(
        "gradgradcheck",
        check_rev_over_rev=check_rev_over_rev,
        check_fwd_over_rev=check_fwd_over_rev,
    )
    settings = Settings.of("gradgradcheck", locals(), modes=modes)
    return _conclude(run_check(func, inputs, 2, grad_outputs, settings), raise_exception)
