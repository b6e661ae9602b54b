"""The engine layer: nodes, the reverse pass, the rule table, forward mode.

Nothing here imports from :mod:`minigrad.checking`, :mod:`minigrad.compiler`
or :mod:`minigrad.teach`; those layers build on this one. Inside, each module
imports only those below it:

- :mod:`~minigrad.core.value`: the node, its layout, its topological order;
- :mod:`~minigrad.core.failures`: errors in words, naming the op and the point;
- :mod:`~minigrad.core.rule`: ``Rule`` and ``apply``, the door of every op;
- :mod:`~minigrad.core.closure`: micrograd's door, a node whose step is the
  user's ``_backward`` closure (first order only, refused by name above);
- :mod:`~minigrad.core.backward`: the reverse pass on floats (``Value.backward``);
- :mod:`~minigrad.core.grad`: ``grad``, with and without ``create_graph``;
- :mod:`~minigrad.core.rules`: the table of derivative rules, by family;
- :mod:`~minigrad.core.protocol`: Value's operators and methods, from the rules;
- :mod:`~minigrad.core.functional`: forward mode and the functional API.

Importing this package finishes the Value class (``backward``, the operators
and methods), so a Value from anywhere in minigrad has them all.
"""

from minigrad.core import backward as backward
from minigrad.core import closure as closure
from minigrad.core import protocol as protocol
from minigrad.core.grad import grad
from minigrad.core.rule import Rule, apply
from minigrad.core.value import Value, toposort

__all__ = ["Rule", "Value", "apply", "grad", "toposort"]
