"""Backward, one step at a time: the graph with each node's ``_backward()`` in turn.

The lecture runs ``backward()`` by hand: ``o.grad = 1.0``, then each node's
``_backward()`` from the output down, looking at the grads each step wrote.
:class:`BackwardStepper` shows that walk. It runs the steps once, in the
order ``backward()`` runs them, records every ``.grad`` after each, and puts
every ``.grad`` back as it found it. What it shows is one self-contained
piece of HTML (the graph as SVG, drawn by :mod:`minigrad.teach.viz`, and a
few lines of JavaScript for Prev/Next buttons and a slider): Jupyter shows
it as a cell's output, :meth:`BackwardStepper.save` writes it as a page, and
the playground shows it as it shows any ``_repr_html_``. No ipywidgets and
no files beside it.

Example:
    >>> from minigrad import Value
    >>> x = Value(0.5, label="x")
    >>> y = x.exp() * 2.0
    >>> y.label = "y"
    >>> stepper = BackwardStepper(y)
    >>> for step in stepper.steps:
    ...     print(step.number, step.caption)
    0 backward() starts at the output: y.grad = 1.0
    1 y._backward(): the exp node's grad += 2.0
    2 _backward() of the exp node: x.grad += 3.2974425414002564
    >>> x.grad  # the graph is as it was
    0.0
"""

from __future__ import annotations

import itertools
import json
import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from minigrad.core._validate import as_int, finite_float
from minigrad.core.value import Value, _lock, _postorder
from minigrad.teach.svg import escape
from minigrad.teach.viz.drawing import _svg
from minigrad.teach.viz.graph import _scene
from minigrad.teach.viz.layout import _FONT, _text_width
from minigrad.teach.viz.scene import _Node, _number, _value_node

__all__ = ["BackwardStepper", "Step", "step_backward"]

# A number per stepper shown in this process, and a random part: two steppers in
# one page (two outputs of one notebook, even from two kernel sessions) never share an id.
_shown = itertools.count(1)


class Step(NamedTuple):
    """One step of ``backward()``: whose ``_backward()`` ran and what it wrote.

    Attributes:
        number: 0 for the seed (``root.grad = grad``), then 1, 2, ... in the
            order ``backward()`` runs the nodes' steps.
        node: The node whose ``_backward()`` ran (the root at step 0).
        written: Each child the step added into, with its ``.grad`` after the step.
        grads: Every node's ``.grad`` after the step (this pass's alone:
            what ``backward()`` adds, not what an earlier call left).
        caption: The step in words, as the page shows it.
    """

    number: int
    node: Value
    written: tuple[tuple[Value, float], ...]
    grads: Mapping[Value, float]
    caption: str


class BackwardStepper:
    """``backward()`` of ``root``, one node's ``_backward()`` at a time, to step through.

    Made by running the steps: ``root.grad = grad``, then ``_backward()`` of
    every node made by an op, in the order ``backward()`` takes them (each
    node after every node that uses it). As in ``backward()``, a node that no
    gradient reaches is passed over (its partials are not evaluated). Built-in
    nodes and nodes whose ``_backward`` is the user's closure (micrograd's
    way) alike. The grads start at 0 for the walk, so they are what one
    ``backward()`` adds; afterwards every ``.grad`` is put back as it was.
    O(steps * nodes) time and memory.

    Args:
        root: The output to run backward from.
        grad: Its upstream weight, d loss / d root (``backward(grad)``'s).
        max_nodes: The most Values the graph may hold: a stepper is for a
            graph a person steps through, and draws every node.

    Raises:
        TypeError: ``root`` is not a Value, or ``max_nodes`` not an int.
        ValueError: ``grad`` is not finite, or the graph holds more than
            ``max_nodes`` Values.

    Attributes:
        steps: The :class:`Step` list, the seed first.

    Example:
        >>> from minigrad import Value
        >>> a, b = Value(2.0, label="a"), Value(-3.0, label="b")
        >>> stepper = BackwardStepper(a * b + a)
        >>> stepper
        BackwardStepper(values=4, steps=3)
        >>> print(stepper.steps[2].caption)  # a had 1.0 from +
        _backward() of the * node: a.grad += -3.0 (now -2.0), b.grad += 2.0
        >>> [(v.label, g) for v, g in stepper.steps[2].written]
        [('a', -2.0), ('b', 2.0)]
        >>> [stepper.steps[-1].grads[v] for v in (a, b)]
        [-2.0, 2.0]
        >>> "Next" in stepper._repr_html_()
        True
    """

    def __init__(self, root: Value, grad: float = 1.0, *, max_nodes: int = 100) -> None:
        if not isinstance(root, Value):
            raise TypeError(
                f"BackwardStepper: root must be a Value, got {type(root).__name__} {root!r}"
            )
        seed = finite_float(grad, "BackwardStepper: grad")
        as_int(max_nodes, "BackwardStepper: max_nodes", least=1)
        self.root = root
        with _lock:  # no other thread's backward between the steps and their undoing
            order = _postorder([root])
            order.reverse()  # backward()'s order: each node after those that use it
            if len(order) > max_nodes:
                raise ValueError(
                    f"BackwardStepper: the graph holds {len(order):,} Values, more than "
                    f"max_nodes={max_nodes}; a stepper draws every node (pass a larger "
                    "max_nodes, or step through a smaller graph)"
                )
            self.steps = _walk(root, order, seed)
        self._order = order

    def __repr__(self) -> str:
        return f"BackwardStepper(values={len(self._order)}, steps={len(self.steps)})"

    def _repr_html_(self) -> str:
        """The stepper as Jupyter shows it: HTML, SVG and a script, with ids of its own."""
        return _html(self, f"mg-stepper-{next(_shown)}-{secrets.token_hex(4)}")

    def to_html(self) -> str:
        """A whole HTML page of the stepper, as :meth:`save` writes it.

        Example:
            >>> from minigrad import Value
            >>> page = BackwardStepper(Value(1.0).exp()).to_html()
            >>> page.startswith("<!DOCTYPE html>"), "<svg" in page, "<script>" in page
            (True, True, True)
        """
        return (
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            "<title>backward(), one step at a time</title>\n</head>\n<body>\n"
            f"{self._repr_html_()}\n</body>\n</html>\n"
        )

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write :meth:`to_html` to ``path`` (say ``steps.html``), a page any browser opens.

        Returns:
            The path written.

        Example:
            >>> import pathlib, tempfile
            >>> from minigrad import Value
            >>> with tempfile.TemporaryDirectory() as tmp:
            ...     page = BackwardStepper(Value(1.0).exp()).save(pathlib.Path(tmp, "s.html"))
            ...     print(page.name, "Prev" in page.read_text(encoding="utf-8"))
            s.html True
        """
        target = Path(path)
        target.write_text(self.to_html(), encoding="utf-8")
        return target


def step_backward(root: Value, grad: float = 1.0, *, max_nodes: int = 100) -> BackwardStepper:
    """``backward()`` of ``root`` one step at a time: a :class:`BackwardStepper`.

    Shown in a notebook, it is the graph with Prev/Next buttons and a slider;
    ``.save("steps.html")`` writes it as a page. Every ``.grad`` is left as it was.

    Example:
        >>> from minigrad import Value
        >>> x = Value(0.5, label="x")
        >>> stepper = step_backward(x.exp() * 2.0)
        >>> stepper.steps[-1].caption
        '_backward() of the exp node: x.grad += 3.2974425414002564'
        >>> stepper.save("steps.html")  # doctest: +SKIP
        PosixPath('steps.html')
    """
    return BackwardStepper(root, grad, max_nodes=max_nodes)


def _walk(root: Value, order: list[Value], seed: float) -> tuple[Step, ...]:
    """Run the steps of ``backward()`` on ``order`` and record them; every ``.grad`` put back.

    The caller holds the engine's lock.
    """
    saved = [n._grad for n in order]
    try:
        for n in order:
            n._grad = 0.0
        root._grad = seed
        steps = [Step(0, root, (), _grads(order), _seed_caption(root, seed))]
        for node in order:
            if node.rule is None:
                continue  # a leaf: backward() has no step to run
            children = list(dict.fromkeys(node.parents))  # a + a adds into a once per use
            before = [c._grad for c in children]
            written: tuple[tuple[Value, float], ...] = ()
            if node._grad:
                # The public step, as the lecture calls it: a built-in node's rule,
                # or the user's closure. backward() skips a node no gradient reaches.
                node._backward()
                written = tuple((c, c._grad) for c in children)
            caption = _caption(node, written, before)
            steps.append(Step(len(steps), node, written, _grads(order), caption))
        return tuple(steps)
    finally:
        for n, g in zip(order, saved, strict=True):
            n._grad = g


def _grads(order: list[Value]) -> dict[Value, float]:
    return {n: n._grad for n in order}


def _name(node: Value) -> str:
    """How a caption names a node: its label, or the op that made it."""
    if node.label:
        return str(node.label)
    if node.rule is not None:
        return f"the {node.op or 'unnamed'} node"
    return "an input"


def _grad_of(node: Value) -> str:
    return f"{node.label}.grad" if node.label else f"{_name(node)}'s grad"


def _seed_caption(root: Value, seed: float) -> str:
    return f"backward() starts at the output: {_grad_of(root)} = {seed!r}"


def _caption(node: Value, written: tuple[tuple[Value, float], ...], before: list[float]) -> str:
    who = f"{node.label}._backward()" if node.label else f"_backward() of {_name(node)}"
    if not node._grad:
        return f"{who} is skipped: no gradient reaches it, so nothing flows back"
    if not written:
        return f"{who} ran: its node has no Value to add into"
    # The amount added, and the total where the grad held something already.
    parts = [
        f"{_grad_of(child)} += {after - old!r}" + (f" (now {after!r})" if old else "")
        for (child, after), old in zip(written, before, strict=True)
    ]
    return f"{who}: " + ", ".join(parts)


def _width(text: str) -> float:
    return _text_width(text, _FONT)


def _html(stepper: BackwardStepper, uid: str) -> str:
    """The stepper's HTML: controls, caption, the graph as SVG and the script, under ``uid``."""
    order = stepper._order
    steps = stepper.steps
    # Every grad a box will show, so each box is drawn wide enough for all of them.
    shown = {n: [f"grad {_number(s.grads[n])}" for s in steps] for n in order}

    def box(name: str, node: Value) -> _Node:
        texts = shown[node]
        drawn = _value_node(name, node, grad_room=max(texts, key=_width))
        # The picture starts at step 0, as the seed leaves the grads.
        drawn.texts = (*drawn.texts[:-1], texts[0])
        return drawn

    scene, drawn = _scene([stepper.root], len(order), box)
    ids = {v: f"v{i}" for i, v in enumerate(drawn)}
    data = {
        "ids": [ids[v] for v in drawn],
        "steps": [
            {
                "node": ids[s.node],
                "op": s.number > 0,
                "written": [ids[c] for c, _ in s.written],
                "grads": [f"grad {_number(s.grads[v])}" for v in drawn],
                "caption": f"step {s.number} of {len(steps) - 1}: {s.caption}",
            }
            for s in steps
        ],
    }
    # JSON inside <script>: no "</" or "<!--" may appear in it.
    payload = json.dumps(data).replace("<", "\\u003c")
    last = len(steps) - 1
    caption = escape(f"step 0 of {last}: {steps[0].caption}")
    return f"""<div class="mg-stepper" id="{uid}">
<style>
#{uid} {{ font-family: Helvetica, Arial, sans-serif; font-size: 13px; }}
#{uid} .mg-controls {{ display: flex; align-items: center; gap: 8px; margin: 4px 0; }}
#{uid} input[type=range] {{ flex: 0 1 320px; }}
#{uid} .mg-caption {{ margin: 4px 0; min-height: 2.6em; }}
#{uid} .mg-picture {{ overflow: auto; max-width: 100%; }}
#{uid} g.mg-current rect, #{uid} g.mg-current ellipse {{
  fill: #ffd08a; stroke: #c45f00; stroke-width: 2; }}
#{uid} g.mg-written rect {{ fill: #b9ecb9; stroke: #1e7b1e; stroke-width: 2; }}
#{uid} g.mg-written text:last-of-type {{ font-weight: bold; }}
</style>
<div class="mg-controls">
<button type="button" id="{uid}-prev">&#9664; Prev</button>
<input type="range" id="{uid}-slider" min="0" max="{last}" value="0" step="1" aria-label="step">
<button type="button" id="{uid}-next">Next &#9654;</button>
<span id="{uid}-count">step 0 of {last}</span>
</div>
<p class="mg-caption" id="{uid}-caption">{caption}</p>
<div class="mg-picture" id="{uid}-picture">
{_svg(scene)}</div>
<script>
(function () {{
  var data = {payload};
  var root = document.getElementById("{uid}");
  var slider = document.getElementById("{uid}-slider");
  var prev = document.getElementById("{uid}-prev");
  var next = document.getElementById("{uid}-next");
  var picture = document.getElementById("{uid}-picture");
  var boxes = {{}};
  root.querySelectorAll("g.node").forEach(function (g) {{
    var title = g.querySelector("title");
    if (title) {{ boxes[title.textContent] = g; }}
  }});
  function mark(id, name) {{
    if (boxes[id]) {{ boxes[id].classList.add(name); }}
  }}
  // A graph wider than its panel scrolls: keep the step's nodes in view (the
  // current one first), moving the panel alone (scrollIntoView would move the
  // notebook's page too).
  function reveal(ids) {{
    var panel = picture.getBoundingClientRect();
    var left = Infinity, right = -Infinity;
    ids.forEach(function (id) {{
      if (!boxes[id]) {{ return; }}
      var box = boxes[id].getBoundingClientRect();
      left = Math.min(left, box.left);
      right = Math.max(right, box.right);
    }});
    if (left === Infinity) {{ return; }}
    if (right > panel.right) {{ picture.scrollLeft += right - panel.right + 16; }}
    if (left < panel.left) {{ picture.scrollLeft -= panel.left - left + 16; }}
  }}
  function show(k) {{
    k = Math.max(0, Math.min(data.steps.length - 1, k));
    var step = data.steps[k];
    Object.keys(boxes).forEach(function (id) {{
      boxes[id].classList.remove("mg-current", "mg-written");
    }});
    data.ids.forEach(function (id, i) {{
      var texts = boxes[id].querySelectorAll("text");
      texts[texts.length - 1].textContent = step.grads[i];
    }});
    mark(step.node, "mg-current");
    if (step.op) {{ mark(step.node + "op", "mg-current"); }}
    step.written.forEach(function (id) {{ mark(id, "mg-written"); }});
    reveal(step.written.concat([step.node]));
    slider.value = String(k);
    document.getElementById("{uid}-count").textContent =
      "step " + k + " of " + (data.steps.length - 1);
    document.getElementById("{uid}-caption").textContent = step.caption;
    prev.disabled = k === 0;
    next.disabled = k === data.steps.length - 1;
  }}
  prev.addEventListener("click", function () {{ show(Number(slider.value) - 1); }});
  next.addEventListener("click", function () {{ show(Number(slider.value) + 1); }});
  slider.addEventListener("input", function () {{ show(Number(slider.value)); }});
  show(0);
}})();
</script>
</div>"""
