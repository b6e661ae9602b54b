"""Pictures of a graph, with the standard library alone: Graphviz DOT text and SVG.

:func:`graph` draws every Value as a box (its label, data and grad) and every
op as an ellipse between its arguments and its result, as micrograd's
``draw_dot`` does; float constants get small dashed boxes of their own, so
``x * 3`` shows the 3. Both the DOT text and the SVG need nothing installed:
:meth:`Graph.svg` lays the graph out itself, in layers from the inputs on the
left to the result on the right, as Graphviz's ``dot`` would. Jupyter shows
that SVG. Graphviz is used only when asked for, by :meth:`Graph.render`, and
by :meth:`Graph.save` for PNG and PDF (and for SVG when ``dot`` is on PATH).
:func:`draw_dot` is micrograd's helper by its name and signature, returning
a :class:`Diagram` that renders itself to files as a ``graphviz.Digraph`` does.

Example:
    >>> from minigrad import Value
    >>> x = Value(2.0, label="x")
    >>> g = graph(x * 3 + 1)
    >>> g
    Graph(values=3, ops=2, constants=2, omitted=0)
    >>> print(g.dot.splitlines()[0])
    digraph minigrad {
    >>> g.svg().startswith("<svg")
    True
"""

from minigrad.teach.viz.drawdot import Diagram, draw_dot
from minigrad.teach.viz.graph import RENDERED as RENDERED
from minigrad.teach.viz.graph import DotNotFoundError, Graph, graph

__all__ = ["Diagram", "DotNotFoundError", "Graph", "draw_dot", "graph"]
