"""The playground's web server: the page, minigrad's package and, if asked, Pyodide.

It serves a fixed list of files, made when it starts, and nothing else:
the page (``static/``), ``minigrad.zip`` (the files of the minigrad package
this process imported, zipped in memory, which the page unpacks into
Pyodide's ``site-packages``) and, with ``--pyodide DIR``, the regular files
directly inside ``DIR`` under ``/pyodide/``. A request's path is looked up
in that list as it arrives, before any decoding, and is never joined to a
folder: ``..``, ``%2e%2e``, encoded slashes, absolute paths and symlinks
cannot name another file, they are simply not in the list (404).

User code never runs here: the page runs it in the browser, in Pyodide.

Example:
    >>> files = page_files(None)
    >>> sorted(files)[:3]
    ['/', '/index.html', '/lesson.py']
    >>> files["/"].content_type
    'text/html; charset=utf-8'
"""

from __future__ import annotations

import html
import http.server
import io
import sys
import threading
import webbrowser
import zipfile
from pathlib import Path
from typing import ClassVar, NamedTuple

from minigrad.cli.playground import TIME_LIMIT

__all__ = [
    "CDN",
    "PYODIDE_VERSION",
    "TIME_LIMIT",
    "File",
    "Playground",
    "package_zip",
    "page_files",
    "pyodide_files",
]

#: The Pyodide release the page loads: the same as the npm pin the tests use
#: (``.ci/pyodide/package.json``).
PYODIDE_VERSION = "314.0.7"
#: Where the page loads Pyodide from without ``--pyodide``: its public CDN.
CDN = f"https://cdn.jsdelivr.net/pyodide/v{PYODIDE_VERSION}/full/"

#: The folder of the minigrad package this module belongs to (src/minigrad, or site-packages).
PACKAGE = Path(__file__).resolve().parents[2]
STATIC = Path(__file__).resolve().parent / "static"

_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".py": "text/x-python; charset=utf-8",
    ".json": "application/json",
    ".map": "application/json",
    ".wasm": "application/wasm",
    ".zip": "application/zip",
    ".ts": "text/plain; charset=utf-8",
    ".md": "text/plain; charset=utf-8",
}


class File(NamedTuple):
    """One file the server may send: its bytes in memory, or a path read when asked."""

    content_type: str
    body: bytes = b""
    path: Path | None = None

    def read(self) -> bytes:
        """The file's bytes (read from disk each time for a path: Pyodide's are large)."""
        return self.path.read_bytes() if self.path is not None else self.body


def package_zip() -> bytes:
    """This minigrad package's files, as a zip whose names start ``minigrad/``.

    Compiled files and ``__pycache__`` folders are left out; the rest (the
    modules, ``py.typed``, the playground's own page) is what a wheel holds.

    Example:
        >>> import zipfile, io
        >>> names = zipfile.ZipFile(io.BytesIO(package_zip())).namelist()
        >>> "minigrad/__init__.py" in names, "minigrad/core/value.py" in names
        (True, True)
    """
    root = PACKAGE
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(root.rglob("*")):
            relative = path.relative_to(root)
            if (
                not path.is_file()
                or path.is_symlink()
                or "__pycache__" in relative.parts
                or path.suffix in (".pyc", ".pyo")
            ):
                continue
            archive.write(path, "minigrad/" + relative.as_posix())
    return buffer.getvalue()


def page_files(pyodide_url: str | None, time_limit: int = TIME_LIMIT) -> dict[str, File]:
    """The page's files by URL path; ``pyodide_url`` is where it loads Pyodide from.

    Args:
        pyodide_url: The folder URL of Pyodide (ending ``/``), or None for the CDN.
        time_limit: The page's time limit for one run, in seconds, until changed there.

    Raises:
        ValueError: ``time_limit`` is not a whole number of seconds from 1 to 3600.
    """
    if isinstance(time_limit, bool) or not isinstance(time_limit, int):
        raise ValueError(f"--time-limit: expected whole seconds, got {time_limit!r}")
    if not 1 <= time_limit <= 3600:
        raise ValueError(f"--time-limit: must be 1-3600 seconds, got {time_limit}")
    url = CDN if pyodide_url is None else pyodide_url
    page = (STATIC / "index.html").read_text(encoding="utf-8")
    page = page.replace("__PYODIDE_URL__", html.escape(url, quote=True))
    page = page.replace("__TIME_LIMIT__", str(time_limit))
    index = File(_TYPES[".html"], page.encode("utf-8"))
    return {
        "/": index,
        "/index.html": index,
        "/playground.js": File(_TYPES[".js"], (STATIC / "playground.js").read_bytes()),
        "/playground-worker.js": File(
            _TYPES[".js"], (STATIC / "playground-worker.js").read_bytes()
        ),
        "/playground.css": File(_TYPES[".css"], (STATIC / "playground.css").read_bytes()),
        "/lesson.py": File(_TYPES[".py"], (STATIC / "lesson.txt").read_bytes()),
        "/minigrad.zip": File(_TYPES[".zip"], package_zip()),
    }


def pyodide_files(folder: str | Path) -> dict[str, File]:
    """The regular files directly inside ``folder``, under ``/pyodide/NAME``.

    Symlinks and subfolders are left out, so nothing outside ``folder`` can
    be reached through it.

    Raises:
        ValueError: ``folder`` is not a folder, or holds no ``pyodide.mjs``.

    Example:
        >>> pyodide_files("/no/such/folder")
        Traceback (most recent call last):
            ...
        ValueError: --pyodide: not a folder: '/no/such/folder'
    """
    path = Path(folder)
    if not path.is_dir():
        raise ValueError(f"--pyodide: not a folder: {str(folder)!r}")
    files = {
        f"/pyodide/{entry.name}": File(
            _TYPES.get(entry.suffix, "application/octet-stream"), path=entry.resolve()
        )
        for entry in sorted(path.iterdir())
        if entry.is_file() and not entry.is_symlink()
    }
    if "/pyodide/pyodide.mjs" not in files:
        raise ValueError(
            f"--pyodide: {str(folder)!r} holds no pyodide.mjs (give the folder of the npm "
            "package 'pyodide' or of a Pyodide release's full/ folder)"
        )
    return files


class _Handler(http.server.BaseHTTPRequestHandler):
    files: ClassVar[dict[str, File]] = {}
    server_version = "minigrad-playground"

    def do_GET(self) -> None:
        self._answer(body=True)

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def _answer(self, *, body: bool) -> None:
        # The raw path, query and fragment cut off, is the key: no decoding,
        # no normalising, so no spelling of another path can match.
        key = self.path.split("?", 1)[0].split("#", 1)[0]
        found = self.files.get(key)
        if found is None:
            self.send_error(404, "not one of the playground's files")
            return
        content = found.read()
        self.send_response(200)
        self.send_header("Content-Type", found.content_type)
        self.send_header("Content-Length", str(len(content)))
        # The page and the package may change between two runs (a teacher edits minigrad);
        # Pyodide's files do not, and each run's fresh worker loads them again.
        self.send_header("Cache-Control", "max-age=86400" if found.path else "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        if body:
            self.wfile.write(content)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass  # a classroom's terminal stays quiet; errors reach the page


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        # A browser that closes a tab or reloads mid-download resets the connection:
        # an everyday event, not an error for the teacher's terminal.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)  # type: ignore[arg-type]


class Playground:
    """The server, bound but not yet serving; :meth:`serve_forever` or a thread runs it.

    Args:
        host: The address to bind (``127.0.0.1`` unless asked otherwise).
        port: The port; 0 picks a free one.
        pyodide: A folder holding Pyodide to serve, or None for the CDN.
        time_limit: The page's time limit for one run, in seconds (the page can change it).

    Raises:
        ValueError: ``pyodide`` is not a Pyodide folder, or ``time_limit`` is out of range.
        OSError: the address cannot be bound (e.g. the port is taken).

    Example:
        >>> import urllib.request
        >>> pg = Playground(port=0)
        >>> pg.start()
        >>> with urllib.request.urlopen(pg.url + "lesson.py", timeout=5) as answer:
        ...     answer.read().startswith(b"# The lecture's neuron")
        True
        >>> pg.stop()
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 8000,
        pyodide: str | Path | None = None,
        time_limit: int = TIME_LIMIT,
    ) -> None:
        files = page_files(None if pyodide is None else "/pyodide/", time_limit)
        if pyodide is not None:
            files.update(pyodide_files(pyodide))
        handler = type("Handler", (_Handler,), {"files": files})
        self.pyodide = pyodide
        self.httpd = _Server((host, port), handler)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The page's address, e.g. ``http://127.0.0.1:8000/``."""
        host, port = self.httpd.server_address[:2]
        name = host.decode() if isinstance(host, bytes) else str(host)
        shown = f"[{name}]" if ":" in name else name
        return f"http://{shown}:{port}/"

    def banner(self) -> str:
        """What the command prints when it starts: the address and what is served."""
        source = f"from {self.pyodide}" if self.pyodide is not None else f"from its CDN, {CDN}"
        return (
            f"minigrad playground: {self.url}\n"
            f"serves only its own files: the page, the minigrad package in {PACKAGE}, "
            f"and Pyodide {source}.\n"
            "Code typed in the page runs in the browser (Pyodide), not here. Ctrl-C stops it."
        )

    def start(self) -> None:
        """Serve in a background thread (tests, and the command's own use)."""
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def serve_forever(self) -> None:
        """Serve in this thread until interrupted."""
        self.httpd.serve_forever()

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._thread is not None:
            self.httpd.shutdown()
            self._thread.join(timeout=5)
        self.httpd.server_close()


def open_browser(url: str) -> bool:
    """Open ``url`` in the user's browser; False when there is none to open."""
    try:
        return webbrowser.open(url)
    except webbrowser.Error:
        return False
