"""backward() one step at a time: the steps are backward()'s, and the user's graph is untouched.

The oracle is the lecture's walk by hand: zero every grad, ``root.grad = 1``,
then ``node._backward()`` on every node in reverse topological order, reading
every ``.grad`` after each call. The stepper must show exactly those numbers,
end where ``backward()`` ends, work for micrograd's closure nodes, and leave
every ``.data`` and ``.grad`` as it found them. Its page is read back from
its HTML here; ``test_stepper_browser.py`` clicks through it in Chromium.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

import minigrad
from lecture import closure_exp, neuron
from minigrad import Value, toposort
from minigrad.teach import BackwardStepper, step_backward
from minigrad.teach.stepper import Step
from minigrad.teach.viz.scene import _number

SVG = "{http://www.w3.org/2000/svg}"


def lecture_neuron() -> tuple[Value, list[Value]]:
    """The lecture's neuron (tests/lecture.py), its sums labelled by their names; (o, leaves)."""
    named = neuron()
    for name in ("x1w1", "x2w2", "x1w1x2w2"):
        named[name].label = name
    return named["o"], [named[k] for k in ("x1", "w1", "x2", "w2", "b")]


def by_hand(root: Value, seed: float = 1.0) -> list[dict[Value, float]]:
    """The lecture's walk: every node's grads after the seed and after each op node's step."""
    order = toposort([root])
    for node in order:
        node.grad = 0.0
    root.grad = seed
    seen = [{n: n.grad for n in order}]
    for node in order:
        if node.op or node.parents:
            node._backward()
            seen.append({n: n.grad for n in order})
    return seen


def graphs() -> list[Value]:
    o, _ = lecture_neuron()
    a, b = Value(0.3, label="a"), Value(-1.2, label="b")
    mixed = closure_exp(a * b) + (a * a).sin() * 3.0  # a closure node among built-in ones
    c = Value(1.5, label="c")
    shared = (c * c + c).log() / (c - 0.5)  # c used four times, a constant divisor
    return [o, mixed, shared]


@pytest.mark.parametrize("root", graphs(), ids=["neuron", "closure", "shared"])
def test_every_step_shows_the_grads_of_the_walk_by_hand(root: Value) -> None:
    stepper = BackwardStepper(root)
    expected = by_hand(root)
    assert len(stepper.steps) == len(expected)
    for step, grads in zip(stepper.steps, expected, strict=True):
        assert dict(step.grads) == grads, step.caption
    # ...and the last step is where backward() ends.
    root.zero_grad()
    root.backward()
    assert dict(stepper.steps[-1].grads) == {n: n.grad for n in toposort([root])}


def test_the_steps_are_the_op_nodes_in_backwards_order_each_naming_what_it_wrote() -> None:
    o, (x1, w1, x2, w2, b) = lecture_neuron()
    steps = BackwardStepper(o).steps
    assert [s.number for s in steps] == list(range(6))
    assert [s.node.label for s in steps] == ["o", "o", "n", "x1w1x2w2", "x1w1", "x2w2"]
    assert steps[0].written == ()
    assert steps[0].caption == "backward() starts at the output: o.grad = 1.0"
    n = steps[2].node
    assert [(c.label, g) for c, g in steps[2].written] == [
        ("x1w1x2w2", steps[1].grads[n]),
        ("b", steps[1].grads[n]),
    ]
    x1w1 = steps[4].node
    assert [c for c, _ in steps[4].written] == [x1, w1]
    assert steps[4].written[0][1] == w1.data * steps[3].grads[x1w1]
    assert steps[4].caption == (
        f"x1w1._backward(): x1.grad += {steps[4].grads[x1]!r}, w1.grad += {steps[4].grads[w1]!r}"
    )
    # Step by step, the lecture's numbers, to the digits the lecture prints.
    assert f"{steps[1].grads[n]:.4f}" == "0.5000"
    assert [f"{steps[-1].grads[v]:.4f}" for v in (x1, w1, x2, w2, b)] == [
        "-1.5000",
        "1.0000",
        "0.5000",
        "0.0000",
        "0.5000",
    ]
    assert all(isinstance(s, Step) for s in steps)


def test_a_grad_that_accumulates_shows_the_amount_added_and_the_total() -> None:
    a = Value(3.0, label="a")
    b = a * 2.0
    b.label = "b"
    c = b + a  # a gets 1 from +, then 2 from *
    steps = BackwardStepper(c).steps
    assert steps[1].caption == "_backward() of the + node: b.grad += 1.0, a.grad += 1.0"
    assert steps[2].caption == "b._backward(): a.grad += 2.0 (now 3.0)"
    # a * a adds into a once, with both uses: 2a.
    (only,) = BackwardStepper(a * a).steps[1].written
    assert only == (a, 6.0)


def test_a_node_no_gradient_reaches_is_passed_over_as_backward_does() -> None:
    x = Value(-2.0, label="x")
    dead = (x * 3.0).relu()  # relu' = 0 here: nothing reaches x * 3
    dead.label = "dead"
    steps = BackwardStepper(dead + x).steps
    skipped = [s for s in steps if "skipped" in s.caption]
    assert [s.node.op for s in skipped] == ["*"]
    assert skipped[0].written == ()
    assert skipped[0].caption == (
        "_backward() of the * node is skipped: no gradient reaches it, so nothing flows back"
    )
    assert steps[-1].grads[x] == 1.0


def test_the_seed_is_backwards_grad_argument() -> None:
    x = Value(0.5, label="x")
    y = x.exp() * x
    half = BackwardStepper(y, 0.5)
    assert dict(half.steps[-1].grads) == by_hand(y, 0.5)[-1]
    assert half.steps[0].caption == "backward() starts at the output: the * node's grad = 0.5"


def test_the_users_graph_is_left_exactly_as_it_was() -> None:
    for root in graphs():
        nodes = toposort([root])
        root.backward()  # grads from an earlier pass: the stepper must neither see nor keep them
        for i, node in enumerate(nodes):
            node.grad += 0.25 * i
        before = [(n.data, n.grad) for n in nodes]
        stepper = BackwardStepper(root)
        assert [(n.data, n.grad) for n in nodes] == before
        # Its steps are one backward() from zero, whatever the grads held.
        root.zero_grad()
        root.backward()
        assert dict(stepper.steps[-1].grads) == {n: n.grad for n in nodes}


def test_a_closure_that_raises_leaves_every_grad_as_it_was() -> None:
    x = Value(2.0, label="x")
    out = Value(4.0, (x,), "broken")

    def _backward() -> None:
        x.grad += 1.0
        raise ZeroDivisionError("the user's step")

    out._backward = _backward
    y = out * 3.0
    x.grad, out.grad = 0.5, -1.0
    with pytest.raises(ZeroDivisionError, match="the user's step"):
        BackwardStepper(y)
    assert (x.grad, out.grad, y.grad) == (0.5, -1.0, 0.0)


@pytest.mark.parametrize(
    ("root", "pattern"),
    [
        (3.0, r"BackwardStepper: root must be a Value, got float 3\.0"),
        ("o", r"BackwardStepper: root must be a Value, got str 'o'"),
        (None, r"BackwardStepper: root must be a Value, got NoneType None"),
    ],
)
def test_a_root_that_is_not_a_value_is_named(root: object, pattern: str) -> None:
    with pytest.raises(TypeError, match=pattern):
        BackwardStepper(root)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=pattern):
        step_backward(root)  # type: ignore[arg-type]


def test_a_list_of_values_is_refused_with_its_type() -> None:
    with pytest.raises(TypeError, match=r"root must be a Value, got list \[Value\(data=1\.0"):
        BackwardStepper([Value(1.0)])  # type: ignore[arg-type]


def test_bad_grad_and_max_nodes_are_named() -> None:
    x = Value(1.0)
    with pytest.raises(ValueError, match=r"BackwardStepper: grad.*nan"):
        BackwardStepper(x.exp(), float("nan"))
    with pytest.raises(TypeError, match=r"BackwardStepper: max_nodes"):
        BackwardStepper(x.exp(), max_nodes=2.5)  # type: ignore[arg-type]
    chain = x
    for _ in range(30):
        chain = chain.sin()
    with pytest.raises(ValueError, match=r"the graph holds 31 Values, more than max_nodes=20"):
        BackwardStepper(chain, max_nodes=20)
    assert len(BackwardStepper(chain, max_nodes=31).steps) == 31


def test_minigrad_step_backward_is_the_teaching_layers() -> None:
    assert minigrad.step_backward is step_backward
    assert "step_backward" in minigrad.__all__
    o, _ = lecture_neuron()
    assert repr(minigrad.step_backward(o)) == "BackwardStepper(values=10, steps=6)"


# The page.


def _payload(html: str) -> dict[str, object]:
    found = re.search(r"var data = (\{.*?\});\n", html)
    assert found is not None
    data = json.loads(found[1])
    assert isinstance(data, dict)
    return data


def test_the_page_holds_every_steps_grads_as_the_graph_shows_them() -> None:
    o, _ = lecture_neuron()
    stepper = BackwardStepper(o)
    html = stepper._repr_html_()
    data = _payload(html)
    steps = data["steps"]
    assert isinstance(steps, list)
    assert len(steps) == len(stepper.steps)
    ids = data["ids"]
    assert isinstance(ids, list)
    svg = ET.fromstring(html[html.index("<svg") : html.index("</svg>") + 6])
    boxes = {
        g.findtext(f"{SVG}title", ""): [t.text or "" for t in g.iter(f"{SVG}text")]
        for g in svg.iter(f"{SVG}g")
        if g.get("class") == "node"
    }
    by_label = {n.label: n for n in toposort([o])}
    for shown, step in zip(steps, stepper.steps, strict=True):
        assert shown["caption"].endswith(step.caption)
        for node_id, text in zip(ids, shown["grads"], strict=True):
            value = by_label[boxes[node_id][0]]  # a box's first text is its label
            assert text == f"grad {_number(step.grads[value])}"
        assert [by_label[boxes[i][0]] for i in shown["written"]] == [c for c, _ in step.written]
        assert by_label[boxes[shown["node"]][0]] is step.node
    # Without its script (a page that does not run it), the picture is step 0.
    assert [boxes[i][-1] for i in ids] == steps[0]["grads"]


def test_two_steppers_in_one_page_have_ids_of_their_own() -> None:
    stepper = BackwardStepper(Value(1.0, label="x").exp())
    first, second = stepper._repr_html_(), stepper._repr_html_()
    ids = [re.findall(r'id="([^"]+)"', html) for html in (first, second)]
    assert ids[0] and ids[1]
    assert not set(ids[0]) & set(ids[1])
    uid = ids[0][0]
    assert all(i == uid or i.startswith(f"{uid}-") for i in ids[0])
    # Every lookup of the script and every style rule is under the stepper's own id.
    assert set(re.findall(r'getElementById\("([^"]+)"\)', first)) <= set(ids[0])
    assert {rule.split()[0] for rule in re.findall(r"^#\S+ [^{]*\{", first, re.M)} == {f"#{uid}"}


def test_labels_cannot_break_out_of_the_page() -> None:
    x = Value(1.0, label="</script><b>x</b>")
    html = BackwardStepper(x * 2.0).to_html()
    assert html.count("</script>") == 1
    assert "<b>x</b>" not in html
    assert _payload(html)["steps"]


def test_the_saved_page_is_the_html_of_the_stepper(tmp_path: object) -> None:
    import pathlib

    assert isinstance(tmp_path, pathlib.Path)
    o, _ = lecture_neuron()
    written = step_backward(o).save(tmp_path / "steps.html")
    page = written.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert page.count("<svg") == 1
    assert "step 0 of 5: backward() starts at the output: o.grad = 1.0" in page
