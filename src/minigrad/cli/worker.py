"""The worker process of :mod:`minigrad.cli.sandbox`: load a user's code, check item after item.

Started as ``python -c "from minigrad.cli.worker import main; main()"`` with the
job as one line of JSON on stdin. It answers on a copy of its stdout, one
JSON message a line: ``{"type": "ready"}`` once it runs (so that starting
Python is not counted against the user's code), ``{"type": "items", "names":
[...], ...}`` once the
code is loaded (or ``{"type": "load-error", "line": ..., "trace": ...}``),
then ``{"type": "result", "index": i, "result": {...}}`` for each item from
``job["start"]`` on, then ``{"type": "done"}``.

Two jobs: ``"rules"`` (``minigrad check FILE``: :mod:`minigrad.cli.rulefile`)
and ``"engine"`` (``minigrad check --engine``: :mod:`minigrad.cli.lab`). Whatever
an item raises is that item's error, ``SystemExit`` and ``KeyboardInterrupt``
included: the worker ignores SIGINT, so a KeyboardInterrupt here comes from
the code under check, not from the user.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
from collections.abc import Callable
from pathlib import Path

from minigrad.checking.lab.battery import one_line
from minigrad.checking.lab.trials import Outcome, Row
from minigrad.cli import lab, rulefile

__all__ = ["main"]


def main() -> None:
    """Run the job on stdin; answer on stdout (see the module docstring)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    job = json.loads(sys.stdin.readline())
    # The protocol keeps its own copy of stdout; what the user's code prints,
    # to either stream, goes to stderr (the parent's log file).
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)

    def send(message: dict[str, object]) -> None:
        channel.write(json.dumps(message) + "\n")
        channel.flush()

    send({"type": "ready"})  # Python and minigrad are up: the user's time starts now
    loaded = _load(job)
    if isinstance(loaded, dict):
        send(loaded)
        return
    names, extra, check = loaded
    send({"type": "items", "names": names, **extra})
    start = job.get("start", 0)
    for i in range(start, len(names)):
        try:
            result = check(i)
        except BaseException as exc:  # the code under check, SystemExit included
            result = _crashed(job, names[i], exc)
        send({"type": "result", "index": i, "result": result})
    send({"type": "done"})
    channel.close()
    # Threads the user's code started must not keep the process alive.
    os._exit(0)


Loaded = tuple[list[str], dict[str, object], Callable[[int], dict[str, object]]]


def _load(job: dict[str, object]) -> dict[str, object] | Loaded:
    """The items, what the load message adds, and the check of item i; or a load error."""
    try:
        if job["kind"] == "rules":
            return _load_rules(job)
        loaded, checks, cls = lab.serve(job)
        names = [c.name for c in checks]
        extra = {k: v for k, v in loaded.items() if k != "names"}
        return names, extra, lambda i: lab.run_one(checks[i], cls, job)
    except lab.LoadError as exc:
        return {"type": "load-error", "line": str(exc), "trace": exc.trace}
    except rulefile.FileError as exc:
        trace = ""
        if exc.cause is not None:
            import traceback

            trace = "".join(traceback.format_exception(exc.cause)).rstrip()
        return {"type": "load-error", "line": str(exc), "trace": trace}
    except BaseException as exc:  # KeyboardInterrupt raised at import, say
        what = f"minigrad check: cannot import {job.get('path')}" if job["kind"] == "rules" else ""
        line = f"{what or 'cannot be loaded'}: {one_line(exc)}"
        return {"type": "load-error", "line": line, "trace": ""}


def _load_rules(job: dict[str, object]) -> Loaded:
    path = str(job["path"])
    # The file's folder is on sys.path, so its helper modules import (and a
    # forward may import lazily).
    sys.path.insert(0, str(Path(path).resolve().parent))
    items, skipped = rulefile.rules_of(path)
    points, order, seed = job["points"], job["order"], job["seed"]
    assert isinstance(points, int) and isinstance(order, int) and isinstance(seed, int)
    verbose = bool(job.get("verbose"))

    def check(i: int) -> dict[str, object]:
        item = items[i]
        # Each item draws its own points: a restart after a time-out draws
        # the same points for the items after it.
        rng = random.Random(f"{seed}:{i}:{item.name}")
        found = rulefile.check_item(item, points, order, rng)
        return dict(rulefile.outcome(item, found, verbose=verbose))

    extra: dict[str, object] = {"skipped": [rule.name for rule in skipped]}
    return [item.name for item in items], extra, check


def _crashed(job: dict[str, object], name: str, exc: BaseException) -> dict[str, object]:
    """The result of an item that raised what the checks themselves do not catch."""
    why = f"{one_line(exc)} raised by the code under check"
    if job["kind"] == "rules":
        return {"word": Outcome.ERROR, "reason": why, "text": "", "trace": ""}
    return Row(name, "", Outcome.ERROR, note=why).as_dict()
