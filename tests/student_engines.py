"""Students' engines for the tests: a micrograd-style ``Value`` and five classic bugs.

``ENGINE`` is a student's lab-01 engine, written as micrograd writes it (a
closure ``_backward`` per node, ``_prev`` and ``_op``), with an iterative
topological sort. Each of ``BROKEN`` changes it in one place, the way
students get it wrong:

* ``sign_sub``: ``__sub__``'s right operand gets ``+out.grad`` (lab 03's
  break-it-on-purpose experiment);
* ``assign``: every ``_backward`` assigns ``.grad =`` instead of adding;
* ``pow_derivative``: ``x ** n`` gets ``n * x ** n`` (the ``- 1`` forgotten);
* ``preorder``: the topological order lists a node when it is first reached
  from the output (before all of its users);
* ``recursive``: micrograd's recursive ``build_topo``.

The engines are source text, because ``minigrad check --engine`` reads files;
:func:`load` makes the class from the text for the tests that call the
checkers directly.
"""

from __future__ import annotations

import types

#: The end of ENGINE's backward(): its topological sort, which two of BROKEN replace.
_ITERATIVE_SORT = """        topo, seen, stack = [], set(), [(self, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                topo.append(node)
            elif node not in seen:
                seen.add(node)
                stack.append((node, True))
                stack.extend((child, False) for child in node._prev)
        self.grad = 1.0
        for node in reversed(topo):
            node._backward()
"""

ENGINE = (
    '''
import math


class Value:
    """A student's scalar autograd node (lab 01)."""

    def __init__(self, data, _children=(), _op=""):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = tuple(_children)
        self._op = _op

    def __repr__(self):
        return f"Value(data={self.data}, grad={self.grad})"

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other), "+")

        def _backward():
            self.grad += out.grad
            other.grad += out.grad

        out._backward = _backward
        return out

    def __sub__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data - other.data, (self, other), "-")

        def _backward():
            self.grad += out.grad
            other.grad += -out.grad

        out._backward = _backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other), "*")

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad

        out._backward = _backward
        return out

    def __pow__(self, other):
        assert isinstance(other, (int, float)), "only int/float powers"
        out = Value(self.data**other, (self,), f"**{other}")

        def _backward():
            self.grad += other * self.data ** (other - 1) * out.grad

        out._backward = _backward
        return out

    def exp(self):
        out = Value(math.exp(self.data), (self,), "exp")

        def _backward():
            self.grad += out.data * out.grad

        out._backward = _backward
        return out

    def tanh(self):
        t = math.tanh(self.data)
        out = Value(t, (self,), "tanh")

        def _backward():
            self.grad += (1 - t**2) * out.grad

        out._backward = _backward
        return out

    def relu(self):
        out = Value(self.data if self.data > 0 else 0.0, (self,), "ReLU")

        def _backward():
            self.grad += (out.data > 0) * out.grad

        out._backward = _backward
        return out

    def log(self):
        out = Value(math.log(self.data), (self,), "log")

        def _backward():
            self.grad += out.grad / self.data

        out._backward = _backward
        return out

    def __abs__(self):
        out = Value(abs(self.data), (self,), "abs")

        def _backward():
            self.grad += (1.0 if self.data > 0 else -1.0) * out.grad

        out._backward = _backward
        return out

    def __neg__(self):
        return self * -1

    def __radd__(self, other):
        return self + other

    def __rsub__(self, other):
        return other + (-self)

    def __rmul__(self, other):
        return self * other

    def __truediv__(self, other):
        return self * other**-1

    def __rtruediv__(self, other):
        return other * self**-1

    def backward(self):
        # Post-order depth-first search with an explicit stack: a node is
        # listed after every node it was made from.
'''
    + _ITERATIVE_SORT
)

_PREORDER_SORT = """        topo, seen, stack = [], set(), [self]
        while stack:
            node = stack.pop()
            if node not in seen:
                seen.add(node)
                topo.append(node)  # listed on first sight: maybe before another user
                stack.extend(reversed(node._prev))
        self.grad = 1.0
        for node in topo:
            node._backward()
"""

_RECURSIVE_SORT = """        topo, visited = [], set()

        def build_topo(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build_topo(child)
                topo.append(v)

        build_topo(self)
        self.grad = 1.0
        for node in reversed(topo):
            node._backward()
"""


def _changed(old: str, new: str) -> str:
    assert old in ENGINE, old
    return ENGINE.replace(old, new)


#: The five broken engines, by the name a teacher's table shows.
BROKEN: dict[str, str] = {
    "sign_sub": _changed("other.grad += -out.grad", "other.grad += out.grad"),
    "assign": ENGINE.replace(".grad += ", ".grad = "),
    "pow_derivative": _changed("self.data ** (other - 1)", "self.data**other"),
    "preorder": _changed(_ITERATIVE_SORT, _PREORDER_SORT),
    "recursive": _changed(_ITERATIVE_SORT, _RECURSIVE_SORT),
}


_MUL = ENGINE[ENGINE.index("    def __mul__") : ENGINE.index("    def __pow__")]
_ADD = ENGINE[ENGINE.index("    def __add__") : ENGINE.index("    def __sub__")]
_SUB = ENGINE[ENGINE.index("    def __sub__") : ENGINE.index("    def __mul__")]

#: The micrograd way to subtract: a graph of `+` and `*` (no node of its own).
_MICROGRAD_SUB = """    def __sub__(self, other):
        return self + (-other)

"""

#: ENGINE's sort with the set it marks nodes in taken from outside, where the
#: buggy ``backward(self, visited=set())`` keeps one set for every call.
_VISITED_DEFAULT = _ITERATIVE_SORT.replace("topo, seen, stack = [], set(), ", "topo, stack = [], ")
_VISITED_DEFAULT = _VISITED_DEFAULT.replace("seen", "visited")

_BY_VALUE = """    def __eq__(self, other):
        return isinstance(other, Value) and self.data == other.data

    def __hash__(self):
        return hash(self.data)

"""


def _in(part: str, old: str, new: str) -> str:
    """ENGINE with ``old`` replaced by ``new`` inside ``part`` (one method) only."""
    assert part in ENGINE and old in part, old
    return ENGINE.replace(part, part.replace(old, new))


#: The bugs of issue 26 (items 11-13), and a correct engine whose sort is
#: the lecture's recursive ``build_topo``; by the name a teacher's table shows.
LAB_BUGS: dict[str, str] = {
    # 11: right on one side of a kink only
    "relu_mask": _changed("self.grad += (out.data > 0) * out.grad", "self.grad += out.grad"),
    "abs_sign": _changed(
        "self.grad += (1.0 if self.data > 0 else -1.0) * out.grad", "self.grad += out.grad"
    ),
    # 12: correct, with a sort that stops at Python's recursion limit
    "recursive": _changed(_ITERATIVE_SORT, _RECURSIVE_SORT),
    # 13: bugs whose diagnosis named the wrong thing, or nothing
    "mul_assign": _in(_MUL, ".grad += ", ".grad = "),
    "by_value": _changed("    def __repr__(self):", _BY_VALUE + "    def __repr__(self):"),
    "no_op_mul_left": _changed("        self._op = _op\n", "")
    .replace(_SUB, _MICROGRAD_SUB)
    .replace("self.grad += other.data * out.grad", "self.grad += 2 * other.data * out.grad"),
    "mul_and_add_assign": _in(_MUL, "self.grad += other.data", "self.grad += -other.data").replace(
        _ADD, _ADD.replace(".grad += ", ".grad = ")
    ),
    "mul_1e-6": _in(
        _MUL,
        "self.grad += other.data * out.grad",
        "self.grad += other.data * out.grad * (1 + 1e-6)",
    ),
    "visited_default": _changed(
        "    def backward(self):", "    def backward(self, visited=set()):"
    ).replace(_ITERATIVE_SORT, _VISITED_DEFAULT),
}


def load(source: str, name: str = "student") -> type:
    """The ``Value`` class the engine's source defines."""
    module = types.ModuleType(name)
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)
    cls = module.__dict__["Value"]
    assert isinstance(cls, type)
    return cls


_TANH = ENGINE[ENGINE.index("    def tanh") : ENGINE.index("    def relu")]
_CLASS_T = _TANH.replace("t = math.tanh", "Value._t = t = math.tanh").replace(
    "(1 - t**2)", "(1 - Value._t**2)"
)
#: ``*`` whose closure reads the raw ``other`` (a number has no ``.data``).
_RAW_OTHER = (
    _MUL.replace("other = other if", "wrapped = other if")
    .replace("other.data, (self, other)", "wrapped.data, (self, wrapped)")
    .replace("other.grad +=", "wrapped.grad +=")
)
_ZEROES = _ITERATIVE_SORT.replace(
    "        self.grad = 1.0\n",
    "        for node in topo:\n            node.grad = 0.0\n        self.grad = 1.0\n",
)

#: The bugs of issue 34 that the round-4 battery passed or named wrong; by
#: the name a teacher's table shows.
ISSUE_34: dict[str, str] = {
    # an op right at the output only, where out.grad is 1
    "tanh_out_grad": _changed("(1 - t**2) * out.grad", "(1 - t**2)"),
    "exp_out_grad": _changed("self.grad += out.data * out.grad", "self.grad += out.data"),
    "relu_out_grad": _changed("(out.data > 0) * out.grad", "(out.data > 0)"),
    "pow_out_grad": _changed("self.data ** (other - 1) * out.grad", "self.data ** (other - 1)"),
    # state shared across nodes: the last t computed, in the class
    "tanh_class_t": _changed(_TANH, _CLASS_T),
    # backward() that zeroes every .grad before its pass
    "backward_zeroes": _changed(_ITERATIVE_SORT, _ZEROES),
    "no_radd": _changed("    def __radd__(self, other):\n        return self + other\n\n", ""),
    "unseeded": _changed("        self.grad = 1.0\n", ""),
    "raw_other": _changed(_MUL, _RAW_OTHER),
    "mul_skips_self": _in(
        _MUL,
        "            other.grad +=",
        "            if other is not self:\n                other.grad +=",
    ),
}
