"""Rules right at the point alone, side by side: minigrad, PyTorch and JAX at order 2.

A derivative rule of two inputs that leaves a parameter out of a slope where
the parameter is 1 (swish's ``b``) has the right value at the checked point:
every order-1 check agrees there. The order-2 check of each tool differentiates
those same partials, so each entry agrees with its own difference too. Four
rules of two inputs ``(x, b)``, each right and with ``b`` left out of its slope
by ``x``, checked at ``b = 1`` and ``x`` uniform in (-2, 2):

- minigrad: ``minigrad.check(f, [x, b], order=2)`` (the mixed derivatives in
  both orders, then order 1 beside the point where they differ);
- torch: ``gradcheck`` and ``gradgradcheck`` at their defaults on a
  ``torch.autograd.Function`` whose backward is written in torch ops;
- jax: ``check_grads(f, (x, b), order=2, modes=("rev",))`` on a
  ``jax.custom_vjp`` whose backward is written in jax ops.

A tool that is not installed is named and skipped. Run::

    python benchmarks/beside.py            # 200 cases per tool
    python benchmarks/beside.py --cases 40
"""

from __future__ import annotations

import argparse
import importlib
import math
import random
import types
from collections.abc import Callable
from typing import Any

import minigrad

#: Each rule: its forward, then its slopes by x (right, and with b left out) and by
#: b, each written once against a namespace of operations (``ns.exp``, ...): floats,
#: minigrad's Values, torch tensors or JAX arrays.
Slope = Callable[[Any, Any, Any], Any]
RULES: dict[str, tuple[Slope, Slope, Slope, Slope]] = {
    "x exp(b x)": (
        lambda ns, x, b: x * ns.exp(b * x),
        lambda ns, x, b: ns.exp(b * x) * (1 + b * x),
        lambda ns, x, b: ns.exp(b * x) * (1 + x),
        lambda ns, x, b: x * x * ns.exp(b * x),
    ),
    "sin(x b)": (
        lambda ns, x, b: ns.sin(x * b),
        lambda ns, x, b: b * ns.cos(x * b),
        lambda ns, x, b: ns.cos(x * b),
        lambda ns, x, b: x * ns.cos(x * b),
    ),
    "x**2 b**3": (
        lambda ns, x, b: x * x * b * b * b,
        lambda ns, x, b: 2 * x * b * b * b,
        lambda ns, x, b: 2 * x * b * b,
        lambda ns, x, b: 3 * x * x * b * b,
    ),
    "swish x sigmoid(b x)": (
        lambda ns, x, b: x * ns.sigmoid(b * x),
        lambda ns, x, b: ns.sigmoid(b * x) * (1 + b * x * (1 - ns.sigmoid(b * x))),
        lambda ns, x, b: ns.sigmoid(b * x) * (1 + x * (1 - ns.sigmoid(b * x))),
        lambda ns, x, b: x * x * ns.sigmoid(b * x) * (1 - ns.sigmoid(b * x)),
    ),
}

#: A case: the rule's name, whether its slope by x leaves b out, and x.
Case = tuple[str, bool, float]
#: A tool: runs a case, True when the check passes.
Tool = Callable[[str, bool, float], bool]


def cases(n: int, seed: int = 0) -> list[Case]:
    rng = random.Random(seed)
    names = sorted(RULES)
    return [(names[k % len(names)], k % 2 == 1, rng.uniform(-2.0, 2.0)) for k in range(n)]


def minigrad_tool() -> Tool:
    floats = types.SimpleNamespace(
        exp=math.exp, sin=math.sin, cos=math.cos, sigmoid=lambda z: 1.0 / (1.0 + math.exp(-z))
    )
    ns = types.SimpleNamespace(
        exp=minigrad.exp, sin=minigrad.sin, cos=minigrad.cos, sigmoid=minigrad.sigmoid
    )

    def run(name: str, wrong: bool, x: float) -> bool:
        forward, right, left_out, by_b = RULES[name]
        by_x = left_out if wrong else right
        rule = minigrad.Rule(
            name,
            lambda a, b: forward(floats, a, b),
            (lambda a, b, out: by_x(ns, a, b), lambda a, b, out: by_b(ns, a, b)),
        )
        inputs = [minigrad.Value(x), minigrad.Value(1.0)]
        return minigrad.check(lambda a, b: rule(a, b) + a * b, inputs, order=2).ok

    return run


def torch_tool() -> Tool:
    torch: Any = importlib.import_module("torch")
    ns = types.SimpleNamespace(exp=torch.exp, sin=torch.sin, cos=torch.cos, sigmoid=torch.sigmoid)

    def run(name: str, wrong: bool, x: float) -> bool:
        forward_of, right, left_out, by_b = RULES[name]
        by_x = left_out if wrong else right

        def forward(ctx: Any, a: Any, b: Any) -> Any:
            ctx.save_for_backward(a, b)
            return forward_of(ns, a, b)

        def backward(ctx: Any, g: Any) -> Any:
            a, b = ctx.saved_tensors
            return g * by_x(ns, a, b), g * by_b(ns, a, b)

        cls: Any = type(
            "Rule",
            (torch.autograd.Function,),
            {"forward": staticmethod(forward), "backward": staticmethod(backward)},
        )
        f = lambda a, b: cls.apply(a, b) + a * b  # noqa: E731
        args = (
            torch.tensor(x, dtype=torch.float64, requires_grad=True),
            torch.tensor(1.0, dtype=torch.float64, requires_grad=True),
        )
        first = torch.autograd.gradcheck(f, args, raise_exception=False)
        return bool(first and torch.autograd.gradgradcheck(f, args, raise_exception=False))

    return run


def jax_tool() -> Tool:
    jax: Any = importlib.import_module("jax")
    jax.config.update("jax_enable_x64", True)
    jnp: Any = importlib.import_module("jax.numpy")
    check_grads: Any = importlib.import_module("jax.test_util").check_grads
    ns = types.SimpleNamespace(exp=jnp.exp, sin=jnp.sin, cos=jnp.cos, sigmoid=jax.nn.sigmoid)

    def run(name: str, wrong: bool, x: float) -> bool:
        forward_of, right, left_out, by_b = RULES[name]
        by_x = left_out if wrong else right

        def forward(a: Any, b: Any) -> Any:
            return forward_of(ns, a, b)

        f = jax.custom_vjp(forward)
        f.defvjp(
            lambda a, b: (forward(a, b), (a, b)),
            lambda res, g: (g * by_x(ns, *res), g * by_b(ns, *res)),
        )
        try:
            check_grads(lambda a, b: f(a, b) + a * b, (x, 1.0), order=2, modes=("rev",))
        except AssertionError:
            return False
        return True

    return run


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200)
    args = parser.parse_args(argv)
    checked = cases(args.cases)
    print("| tool | version | right rules passed | rules with b left out caught |")
    print("|---|---|---|---|")
    for name, make in (("minigrad", minigrad_tool), ("torch", torch_tool), ("jax", jax_tool)):
        try:
            tool = make()
        except ImportError as exc:
            print(f"| {name} | not installed ({exc}) | | |")
            continue
        passed = caught = rights = wrongs = 0
        for rule, wrong, x in checked:
            ok = tool(rule, wrong, x)
            wrongs += wrong
            rights += not wrong
            caught += wrong and not ok
            passed += (not wrong) and ok
        version = getattr(importlib.import_module(name), "__version__", "")
        print(f"| {name} | {version} | {passed} of {rights} | {caught} of {wrongs} |")


if __name__ == "__main__":
    main()
