"""An op's compiled form: the Python expressions ``minigrad.compile`` writes in its place.

A :class:`~minigrad.core.rule.Rule` may carry one (``Rule(..., inline=Inline(...))``),
beside its forward and partials, so the rule's whole contract stays in one
place: the compiler reads the expressions from the rule and writes them into
the code it generates, instead of calling ``forward`` and the partials by
reference. An inline form must compute what they compute, operation for
operation, so that compiled results equal eager ones bit for bit;
``tests/test_compile.py`` proves that of every rule of ``minigrad.ops.TABLE``
that has one, at random points and on both sides of every kink, and compares
its partials with SymPy's derivatives.

Example:
    >>> import math
    >>> form = Inline("_exp({0})", ("{out}",), names={"_exp": math.exp}, absorbing=(0,))
    >>> form.forward.format("x"), form.partials[0].format("x", out="y")
    ('_exp(x)', 'y')
    >>> form.guards((None,))  # a variable argument: guarded (exp(-inf) is 0.0)
    (0,)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

__all__ = ["Inline"]


class Inline:
    """An op written as Python expressions, for the code ``minigrad.compile`` generates.

    Args:
        forward: The forward as an expression in ``{0}``, ``{1}``, ... (the
            arguments, each already a name, a number or a parenthesised
            expression).
        partials: Per argument, d out / d arg: a constant float, or an
            expression in the arguments and ``{out}`` (the op's result).
        names: The functions and constants the expressions call, by the
            names they use there; each name starts with ``_``. The generated
            code binds them as globals.
        absorbing: The arguments through which the forward can turn a number
            that is not finite into a finite one (``tanh(inf)`` is 1.0,
            ``1.0 / inf`` is 0.0). Eager evaluation raises where such a number
            is made; compiled code guards these arguments so that it reaches
            the loss instead (see ``docs/compile.md``). Either the indices, or a
            function of the constant arguments (``None`` for a variable one)
            that returns them, for an op where a constant decides.

    Raises:
        TypeError: An argument of the wrong type, or a name that is not an
            identifier starting with ``_``.

    Example:
        >>> Inline("({0} * {1})", ("{1}", "{0}")).arity
        2
    """

    __slots__ = ("absorbing", "forward", "names", "partials")

    def __init__(
        self,
        forward: str,
        partials: tuple[float | str, ...],
        *,
        names: Mapping[str, object] | None = None,
        absorbing: tuple[int, ...] | Callable[..., tuple[int, ...]] = (),
    ) -> None:
        if not isinstance(forward, str) or not forward:
            raise TypeError(f"Inline: forward must be a non-empty str, got {forward!r}")
        if not isinstance(partials, tuple) or not partials:
            raise TypeError(f"Inline: partials must be a non-empty tuple, got {partials!r}")
        for i, d in enumerate(partials):
            if isinstance(d, bool) or not isinstance(d, str | float):
                raise TypeError(f"Inline: partials[{i}] must be a str or a float, got {d!r}")
        bound = dict(names or {})
        for name in bound:
            if not (isinstance(name, str) and name.startswith("_") and name.isidentifier()):
                raise TypeError(
                    f"Inline: a name must be an identifier starting with _, got {name!r}"
                )
        if not callable(absorbing):
            absorbing = tuple(absorbing)
            if not all(type(i) is int and 0 <= i < len(partials) for i in absorbing):
                raise TypeError(
                    f"Inline: absorbing must hold argument indices below {len(partials)}, "
                    f"got {absorbing!r}"
                )
        self.forward = forward
        self.partials = partials
        self.names = bound
        self.absorbing = absorbing

    @property
    def arity(self) -> int:
        """How many arguments the op takes: one partial each."""
        return len(self.partials)

    def guards(self, constants: tuple[float | None, ...]) -> tuple[int, ...]:
        """The arguments to guard at one use: the absorbing ones that are variables.

        Args:
            constants: Per argument, its value where it is a constant of the
                generated code, ``None`` where it is a variable.

        Example:
            >>> Inline("({0} / {1})", ("(1.0 / {1})", "(-{out} / {1})"), absorbing=(1,)).guards(
            ...     (None, 2.0)
            ... )
            ()
        """
        absorbing = self.absorbing
        found = absorbing(*constants) if callable(absorbing) else absorbing
        return tuple(i for i in found if constants[i] is None)

    def __repr__(self) -> str:
        return f"Inline({self.forward!r}, {self.partials!r})"
