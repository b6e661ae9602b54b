"""``minigrad.compile``: trace a loss once, run generated Python afterwards.

Built on :mod:`minigrad.core` and :mod:`minigrad.checking` (a compiled step checks
itself with ``gradcheck``). Inside, each module imports only those listed after it:

* :mod:`~minigrad.compiler.trace`: :func:`compile`, the trace, :class:`Compiled`,
  :class:`CompiledValue` and the errors;
* :mod:`~minigrad.compiler.generate`: from the traced graph to statements
  (fusion, the reverse pass), handed to one of the two forms;
* :mod:`~minigrad.compiler.loop`: one loop over a batch's repeated examples;
* :mod:`~minigrad.compiler.straight`: the statements written out one after another;
* :mod:`~minigrad.compiler.templates`: the ops' inline forms bound, guarded, and the
  pieces both forms share.
"""

from minigrad.compiler.trace import (
    CheckError,
    Compiled,
    CompiledValue,
    TracingError,
    compile,  # noqa: A004 (the public minigrad.compile)
)

__all__ = ["CheckError", "Compiled", "CompiledValue", "TracingError", "compile"]

# Shown by their public names in tracebacks, wherever the modules inside live.
CheckError.__module__ = TracingError.__module__ = "minigrad.compiler"
