"""``minigrad.compile``: trace a loss once, run generated Python afterwards.

Built on :mod:`minigrad.core` and :mod:`minigrad.checking` (a compiled step checks
itself with ``gradcheck``).
"""

from minigrad.compiler.trace import (
    TEMPLATES,
    CheckError,
    Compiled,
    CompiledValue,
    TracingError,
    compile,  # noqa: A004 (the public minigrad.compile)
)

__all__ = ["TEMPLATES", "CheckError", "Compiled", "CompiledValue", "TracingError", "compile"]

# Shown by their public names in tracebacks, wherever the modules inside live.
CheckError.__module__ = TracingError.__module__ = "minigrad.compiler"
