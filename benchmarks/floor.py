"""The floor engine: the least an engine that makes one Python object per op can do.

Not a library: a measuring stick for the targets, run in every section as the
row ``floor: bare node per op``. What minigrad costs beyond this row is the
price of its features; what this row costs beyond plain floats is the price of
a graph of Python objects in this interpreter.
"""

from __future__ import annotations

from typing import Any

_bare_new = object.__new__


class Bare:
    """A node with six slots, five ops, and minigrad's iterative backward.

    A node holds its data, its grad, two arguments, an op code and a traversal
    mark. There is no argument checking, no finiteness check, no rule table,
    no labels and no create_graph, and it knows only the five ops the
    workloads use. Its backward is minigrad's iterative sort (a depth-first
    search that marks nodes through a slot) and a loop with the partials
    written inline.
    """

    __slots__ = ("a", "b", "data", "grad", "mark", "op")

    data: float
    grad: float
    a: Any  # a Bare, or None for a leaf
    b: Any  # a Bare, a number, or None
    mark: object
    op: int

    def __init__(self, data: float) -> None:
        self.data = data
        self.grad = 0.0
        self.a = self.b = self.mark = None
        self.op = 0

    # Each op repeats the same six node-building lines on purpose: a floor must
    # not pay for a call (a shared helper would add one function call per op,
    # a cost no fast engine has), so do not factor them out. These copies live
    # in this file only.

    def __add__(self, other: Any) -> Bare:
        y = other.data if type(other) is Bare else other
        node = _bare_new(Bare)
        node.data = self.data + y
        node.grad = 0.0
        node.a = self
        node.b = other
        node.op = 1
        node.mark = None
        return node

    __radd__ = __add__

    def __mul__(self, other: Any) -> Bare:
        y = other.data if type(other) is Bare else other
        node = _bare_new(Bare)
        node.data = self.data * y
        node.grad = 0.0
        node.a = self
        node.b = other
        node.op = 2
        node.mark = None
        return node

    __rmul__ = __mul__

    def __sub__(self, other: float) -> Bare:
        node = _bare_new(Bare)
        node.data = self.data - other
        node.grad = 0.0
        node.a = self
        node.b = None
        node.op = 3
        node.mark = None
        return node

    def __pow__(self, other: float) -> Bare:
        if other != 2.0:
            raise NotImplementedError("Bare knows squares only")
        node = _bare_new(Bare)
        node.data = self.data * self.data
        node.grad = 0.0
        node.a = self
        node.b = None
        node.op = 4
        node.mark = None
        return node

    def relu(self) -> Bare:
        x = self.data
        node = _bare_new(Bare)
        node.data = x if x > 0.0 else 0.0
        node.grad = 0.0
        node.a = self
        node.b = None
        node.op = 5
        node.mark = None
        return node

    def backward(self) -> None:
        seen, done = object(), object()
        order: list[Bare] = []
        stack = [self]
        while stack:
            node = stack.pop()
            mark = node.mark
            if mark is done:
                continue
            if mark is not seen:
                a, b = node.a, node.b
                wait_a = type(a) is Bare and a.mark is not done
                wait_b = type(b) is Bare and b.mark is not done
                if wait_a or wait_b:
                    node.mark = seen
                    stack.append(node)
                    if wait_a:
                        stack.append(a)
                    if wait_b:
                        stack.append(b)
                    continue
            node.mark = done
            order.append(node)
        self.grad = 1.0
        for node in reversed(order):
            g = node.grad
            if not g:
                continue
            op, a, b = node.op, node.a, node.b
            if op == 1:
                a.grad += g
                if type(b) is Bare:
                    b.grad += g
            elif op == 2:
                if type(b) is Bare:
                    a.grad += g * b.data
                    b.grad += g * a.data
                else:
                    a.grad += g * b
            elif op == 3:
                a.grad += g
            elif op == 4:
                a.grad += g * 2.0 * a.data
            elif op == 5 and a.data > 0.0:
                a.grad += g

    def parents(self) -> tuple[Bare, ...]:
        """The nodes this one was made from (for counting a graph's nodes)."""
        return tuple(p for p in (self.a, self.b) if type(p) is Bare)
