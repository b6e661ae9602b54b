"""Running a user's code in a process of its own, with a time limit per check.

``minigrad check FILE`` and ``minigrad check --engine`` run code they did not
write: a rule file, a student's engine. Such code may loop forever at import
or in one op, call ``sys.exit()``, raise ``KeyboardInterrupt``, or crash the
interpreter. :func:`run_job` runs it in a worker process
(:mod:`minigrad.cli.worker`) that loads it and checks one item after the other,
reporting each result as a line of JSON; this side waits for each line at
most ``timeout`` seconds. An item that times out, or during which the worker
dies, becomes that item's error, and a new worker goes on from the next item.
So every item gets a verdict, and one item's hang or crash is never the end
of the run.

The worker gets the job on its stdin and answers on a copy of its stdout;
what the user's code prints (to stdout or stderr) goes to a log file, whose
last line explains a worker that died. It ignores SIGINT: Ctrl-C is this
side's to handle (:class:`Job` then says ``interrupted``), and a
``KeyboardInterrupt`` the user's code raises itself is that item's error.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

__all__ = ["MAX_TIMEOUTS", "Job", "run_job"]

#: After this many items of one job time out, the rest are not run: a worker
#: whose every op hangs would otherwise cost a time limit per item.
MAX_TIMEOUTS = 3

#: Seconds a worker may take to start (Python and minigrad, before any user
#: code): generous, since a loaded machine can be slow to start a process.
_STARTUP = 60.0

#: The worker's entry point: ``minigrad.cli.worker.main``.
_WORKER = "from minigrad.cli.worker import main; main()"

#: The folder minigrad is imported from, put first on the worker's path so
#: that it imports this very minigrad.
_ROOT = str(Path(__file__).resolve().parent.parent)

#: A result of an item the worker could not give: the item's name and why.
Placeholder = Callable[[str, str], dict[str, object]]


class Job:
    """What a job's workers reported.

    Attributes:
        names: The items the job loaded, in order (empty when loading failed).
        loaded: The worker's load message (``names`` and what the job adds).
        results: One result per item (a placeholder for an item that timed
            out or whose worker died).
        load_error: One line saying why the job's code could not be loaded.
        load_trace: Its traceback, when the worker sent one.
        interrupted: The user pressed Ctrl-C; ``results`` is shorter.
    """

    def __init__(self) -> None:
        self.names: list[str] = []
        self.loaded: dict[str, object] = {}
        self.results: list[dict[str, object]] = []
        self.load_error = ""
        self.load_trace = ""
        self.interrupted = False


class _Worker:
    """One worker process: its messages arrive on a queue (None at the end)."""

    def __init__(self, job: dict[str, object], start: int) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_ROOT, env.get("PYTHONPATH")) if p)
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 (closed by stop())
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _WORKER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            env=env,
        )
        self.messages: queue.Queue[dict[str, object] | None] = queue.Queue()
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(json.dumps({**job, "start": start}).encode() + b"\n")
            self.proc.stdin.close()
        except OSError:
            pass  # it died at once; the reader sees the end
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        # The pipe is this thread's: it reads it to the end and closes it.
        stdout = self.proc.stdout
        assert stdout is not None
        try:
            for line in stdout:
                try:
                    self.messages.put(json.loads(line))
                except ValueError:
                    continue  # not the protocol's: ignored
        finally:
            stdout.close()
            self.messages.put(None)

    def next(self, timeout: float) -> dict[str, object] | str | None:
        """The next message, None when the worker has ended, ``"timeout"`` after ``timeout`` s."""
        try:
            return self.messages.get(timeout=timeout)
        except queue.Empty:
            return "timeout"

    def why_ended(self) -> str:
        """Why the worker ended, in words: its exit status and the last line it printed."""
        try:
            status = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "the worker stopped answering"
        if status < 0:
            try:
                how = f"killed by {signal.Signals(-status).name}"
            except ValueError:
                how = f"killed by signal {-status}"
        else:
            how = f"exit status {status}"
        self.log.seek(0)
        lines = [ln for ln in self.log.read().decode(errors="replace").splitlines() if ln.strip()]
        return f"{how}: {lines[-1].strip()}" if lines else how

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        # The pipe ends with the process (unless a process the user's code
        # started holds it: then the daemon reader is left to it).
        self.reader.join(timeout=1)
        self.log.close()


def run_job(
    job: dict[str, object],
    *,
    timeout: float,
    placeholder: Placeholder,
    on_result: Callable[[int, int, str], None] | None = None,
) -> Job:
    """Run ``job`` in worker processes, waiting at most ``timeout`` seconds per item.

    Args:
        job: What the worker does (see :mod:`minigrad.cli.worker`): plain data.
        timeout: Seconds to wait for the load, and then for each item.
        placeholder: ``placeholder(name, why)`` is the result of an item
            the worker could not give (it timed out or the worker died).
        on_result: Called as ``on_result(index, count, name)`` as each
            result arrives (for progress).

    Returns:
        The :class:`Job`.
    """
    found = Job()
    start, timeouts = 0, 0
    try:
        while True:
            worker = _Worker(job, start)
            try:
                start, timed_out = _serve(worker, found, start, timeout, placeholder, on_result)
            finally:
                worker.stop()
            if start < 0 or start >= len(found.names):
                break
            timeouts += timed_out
            if timeouts >= MAX_TIMEOUTS:
                why = f"not run: {timeouts} checks before it timed out, so the rest would too"
                if on_result is not None:
                    on_result(len(found.names) - 1, len(found.names), found.names[-1])
                for name in found.names[start:]:
                    found.results.append(placeholder(name, why))
                break
    except KeyboardInterrupt:
        found.interrupted = True
    return found


def _serve(
    worker: _Worker,
    found: Job,
    start: int,
    timeout: float,
    placeholder: Placeholder,
    on_result: Callable[[int, int, str], None] | None,
) -> tuple[int, bool]:
    """Take one worker's messages: the item to go on from (-1: nothing more to do),
    and whether the worker was stopped because an item timed out."""
    message = worker.next(max(timeout, _STARTUP))
    if isinstance(message, dict) and message.get("type") == "ready":
        message = worker.next(timeout)
    if not isinstance(message, dict) or message.get("type") != "items":
        if found.names:  # a restart that could not load what loaded before
            why = _why(message, worker, timeout, "loading again")
            for name in found.names[start:]:
                found.results.append(placeholder(name, why))
            return -1, False
        if isinstance(message, dict) and message.get("type") == "load-error":
            found.load_error = str(message.get("line", ""))
            found.load_trace = str(message.get("trace", ""))
        else:
            found.load_error = _why(message, worker, timeout, "loading")
        return -1, False
    if not found.names:
        found.loaded = message
        found.names = [str(n) for n in message.get("names", [])]  # type: ignore[attr-defined]
    for i in range(start, len(found.names)):
        message = worker.next(timeout)
        if isinstance(message, dict) and message.get("type") == "result":
            result = message.get("result")
            found.results.append(result if isinstance(result, dict) else {})
            if on_result is not None:
                on_result(i, len(found.names), found.names[i])
            continue
        why = _why(message, worker, timeout, "this check")
        found.results.append(placeholder(found.names[i], why))
        if on_result is not None:
            on_result(i, len(found.names), found.names[i])
        return i + 1, message == "timeout"
    return len(found.names), False


def _why(message: object, worker: _Worker, timeout: float, during: str) -> str:
    if message == "timeout":
        return f"timed out after {timeout:g} s during {during} (an endless loop?)"
    if isinstance(message, dict):
        return f"the worker answered {message.get('type')!r} during {during}"
    return f"the process ended during {during} ({worker.why_ended()})"
