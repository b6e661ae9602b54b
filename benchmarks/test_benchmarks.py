"""Tests of the benchmark harness (no timing is asserted): ``pytest benchmarks``.

The default test run (``pytest``) does not collect this folder; these tests
and the doctests of the harness run when it is named.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

import bounds
import engines
import harness
import publish
import run
import sections
import sensitivity
import suite
from engines import BARE, MICROGRAD, MINIGRAD, bare_engine, minigrad_engine
from harness import Measurements, Target
from workloads import flat, handwritten_step, make_data, make_layers, mlp_loss, to_engine


@pytest.fixture
def scripted_clock(monkeypatch: pytest.MonkeyPatch) -> Callable[[Sequence[float]], None]:
    """Make each timed run take the given durations, in order."""

    def script(durations: Sequence[float]) -> None:
        ticks: list[float] = []
        for d in durations:  # stopwatch reads the clock at the start and the end of a run
            start = ticks[-1] if ticks else 0.0
            ticks += [start, start + d]
        it: Iterator[float] = iter(ticks)
        monkeypatch.setattr(harness, "_clock", lambda: next(it))

    return script


def test_a_paired_ratio_is_the_median_of_the_ratios_within_a_round() -> None:
    # Ratios 2, 3, 1: median 2, where the ratio of the medians is 4 / 3.
    assert harness.paired_ratio([2.0, 9.0, 4.0], [1.0, 3.0, 4.0]) == 2.0
    with pytest.raises(ValueError):
        harness.paired_ratio([1.0, 2.0], [1.0])  # rounds that do not pair up


def test_the_chain_ratio_pairs_the_big_and_the_small_runs_round_by_round(
    scripted_clock: Callable[[Sequence[float]], None],
) -> None:
    # One engine, three rounds; each round runs floats, minigrad at depth 10,
    # then minigrad at depth 1 (one chain: 3 ops against 30).
    scripted_clock([1.0, 2.0, 3.0, 1.0, 9.0, 1.0, 1.0, 4.0, 4.0])
    bench = suite.Bench([minigrad_engine()], reps=3, found=Measurements())
    ratio = sections.scaling_table(
        bench, [10], lambda d: 3 * d, sections.chain_case, sections.float_chain, "depth", (10, 1)
    )
    # Per op, big / small is (t / 30) / (p / 3) = t / p / 10 in each round:
    # 2/3/10, 9/1/10, 4/4/10, of median 0.1; the ratio of the medians is 4/3/10.
    assert ratio == pytest.approx(0.1)


def test_the_floor_engine_computes_the_mlp_gradient_of_the_hand_written_pass() -> None:
    rng = random.Random(3)
    layers = make_layers(rng)
    xs, ys = make_data(rng, 20)
    want_loss, want_grads = handwritten_step(layers, xs, ys)
    for engine in (bare_engine(), minigrad_engine()):
        model = to_engine(engine.leaf, layers)
        loss = mlp_loss(model, xs, ys, engine.relu)
        engine.backward(loss)
        assert engine.data(loss) == pytest.approx(want_loss, rel=1e-12)
        got = [engine.grad(p) for p in flat(model)]
        assert got == pytest.approx(want_grads, rel=1e-9, abs=1e-12), engine.name


def test_a_target_row_says_met_not_met_or_why_it_was_not_measured() -> None:
    target = Target("ratio <= 1.5", "r", "<=", 1.5)
    assert target.row(Measurements({"r": 1.5})) == ["ratio <= 1.5", "1.50x", "met"]
    assert target.row(Measurements({"r": 1.51})) == ["ratio <= 1.5", "1.51x", "NOT met"]
    assert target.row(Measurements()) == ["ratio <= 1.5", "not measured", "not measured"]
    why = Measurements(missing={"r": "not installed"})
    assert target.row(why) == ["ratio <= 1.5", "not installed", "not measured"]
    shown = Target("x", "r", ">=", 10, lambda m: f"{m['r']:.0f} and {m['s']:.0f}")
    assert shown.row(Measurements({"r": 9.0, "s": 4.0})) == ["x", "9 and 4", "NOT met"]


def test_the_sections_and_targets_of_the_report_are_those_it_always_had() -> None:
    assert [s.letter for s in sections.SECTIONS] == list("abcdefghi")
    names = [t.name for s in sections.SECTIONS for t in s.targets]
    assert sorted(names) == sorted(
        [
            "MLP step >= 10x faster than micrograd",
            "MLP step >= 10x faster than torch 0-d",
            "MLP step <= 8x the plain-float forward",
            "compiled MLP step <= 0.5x the plain-float forward",
            "compiled MLP step, relu a custom Rule, <= 2x the plain-float forward",
            "bytes per node <= 130 (MLP graph, built / after backward)",
            "no cycles: gc.collect() finds 0 after a graph is dropped",
            "chain per-op time at depth 1e6 <= 1.5x that at 1e4",
            "`import minigrad` < 30 ms",
            "gradcheck <= 1.2x its 2N+1 evaluations + reverse passes (worst N)",
            "gradcheck fast_mode >= 10x faster than exhaustive at N=100",
            "gradgradcheck faster than torch's at N = 1, 2, 3, 5, 10 (slowest ratio)",
            *(t.name for t in bounds.COVERAGE_TARGETS),
            *(t.name for t in sensitivity.SENSITIVITY_TARGETS),
        ]
    )
    assert [s.letter for s in sections.SECTIONS if not s.timed] == ["h", "i"]


def test_replace_block_keeps_the_text_around_the_markers_and_names_a_file_without_them() -> None:
    text = f"intro\n{publish.BEGIN}\nold table\n{publish.END}\nafter\n"
    assert publish.replace_block(text, "new") == (
        f"intro\n{publish.BEGIN}\nnew\n{publish.END}\nafter\n"
    )
    with pytest.raises(ValueError, match=r"README\.md: no"):
        publish.replace_block("no markers here", "new", "README.md")


def test_each_readme_holds_one_block_for_the_summary() -> None:
    for path in publish.READMES:
        text = Path(path).read_text(encoding="utf-8")
        assert text.count(publish.BEGIN) == 1, path
        assert text.count(publish.END) == 1, path
        assert text.index(publish.BEGIN) < text.index(publish.END), path


def _fake_mlp(bench: suite.Bench, sizes: Sequence[int]) -> None:
    print("a table")
    for name, ratio in ((MINIGRAD, 1.0), (BARE, 0.8), (MICROGRAD, 8.0)):
        bench.found.numbers[f"mlp {name}"] = ratio
    bench.found.numbers["gradcheck torch 10"] = 0.2  # minigrad's time over torch's


def test_readme_writes_the_report_and_the_summary_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"# top\n{publish.BEGIN}\nstale\n{publish.END}\n# bottom\n", "utf-8")
    results = tmp_path / "results.md"
    monkeypatch.setattr(publish, "READMES", (str(readme),))
    monkeypatch.setattr(publish, "RESULTS", str(results))
    fake = suite.Section("a", "fake", _fake_mlp, (), (), (Target("t", "mlp floor", "<", 1),))
    monkeypatch.setattr(run, "SECTIONS", (fake,))
    monkeypatch.setattr(engines, "OPTIONAL", ())
    assert run.main(["--readme", "--reps", "1"]) == 0
    printed = capsys.readouterr().out
    assert results.read_text("utf-8") == printed
    assert "a table" in printed
    written = readme.read_text("utf-8")
    assert written.startswith(f"# top\n{publish.BEGIN}\nOne run of `python benchmarks/run.py")
    assert written.endswith(f"{publish.END}\n# bottom\n")
    assert "stale" not in written
    assert f"| {MICROGRAD} | 8.00x slower |  |  |" in written
    assert "| N = 10 | 5.00x slower |" in written  # torch's gradcheck, against minigrad's
    # The floor and the targets are the project's own: in results.md, not on the front page.
    assert BARE not in written and "| t |" not in written
    assert "| t | not measured | not measured |" in printed
    assert "targets with whether each is met, are in [benchmarks/results.md]" in written


def test_readme_refuses_a_partial_run(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        run.main(["--readme", "--only", "a"])
    assert "--readme publishes a whole run" in capsys.readouterr().err


def _fake_bound(bench: suite.Bench, sizes: Sequence[int]) -> None:
    print(f"bound table {sizes[0]}")
    bench.found.numbers["broken"] = sizes[0]


def test_readme_with_untimed_sections_alone_replaces_just_those_and_their_targets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    timed = suite.Section("a", "timed", _fake_mlp, (), (), (Target("t", "mlp floor", "<", 1),))
    target = Target("bound holds", "broken", "<=", 0, lambda m: f"{m['broken']:.0f} broken")
    untimed = suite.Section("h", "bound", _fake_bound, (0,), (3,), (target,), timed=False)
    results = tmp_path / "results.md"
    results.write_text(
        "# report\n\n## (a) timed\n\nold timings\n\n## (h) bound\n\nbound table 7\n\n"
        "Reference loop at the end: 1 ms.\n\n## Targets\n\n| target | measured | status |\n"
        "|---|---|---|\n| t | 0.50x | met |\n| bound holds | 7 broken | NOT met |\n",
        "utf-8",
    )
    readme = tmp_path / "README.md"
    summary = (
        "minigrad's targets:\n\n| target | measured | status |\n|---|---|---|\n| t | 0.50x | met |"
    )
    readme.write_text(f"{publish.BEGIN}\n{summary}\n{publish.END}\n", "utf-8")
    monkeypatch.setattr(publish, "READMES", (str(readme),))
    monkeypatch.setattr(publish, "RESULTS", str(results))
    monkeypatch.setattr(run, "SECTIONS", (timed, untimed))
    monkeypatch.setattr(engines, "OPTIONAL", ())
    assert run.main(["--only", "h", "--readme", "--reps", "1"]) == 0
    written = results.read_text("utf-8")
    assert "old timings" in written and "bound table 7" not in written
    assert "## (h) bound\n\nUpdated alone on " in written and "bound table 3\n" in written
    assert written.index("bound table 3") < written.index("Reference loop at the end: 1 ms.")
    assert "| bound holds | 3 broken | NOT met |" in written and "7 broken" not in written
    assert "| t | 0.50x | met |\n| bound holds | 3 broken | NOT met |" in readme.read_text("utf-8")
    with pytest.raises(SystemExit):  # a timed section is never published alone
        run.main(["--only", "a", "--readme"])
