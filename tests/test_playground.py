"""``minigrad playground``: its server (real sockets on 127.0.0.1) and the session the page runs."""

from __future__ import annotations

import io
import json
import re
import socket
import ssl
import struct
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import fake_cdn
from minigrad.cli import _parser, main
from minigrad.cli.playground import server
from minigrad.cli.playground.server import CDN, PYODIDE_VERSION, Playground
from minigrad.cli.playground.session import run

REPO = Path(__file__).resolve().parent.parent
LESSON = (server.STATIC / "lesson.txt").read_text(encoding="utf-8")
TIMEOUT = 5.0


def _get(
    url: str, path: str, method: str = "GET", tls: tuple[ssl.SSLContext, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    """Send ``path`` exactly as written (no client-side cleaning) and read the answer.

    ``tls`` is a context and the host name to ask for, for an ``https://`` URL.
    """
    host, port = url.split("://", 1)[1].rstrip("/").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=TIMEOUT) as raw:
        conn = raw if tls is None else tls[0].wrap_socket(raw, server_hostname=tls[1])
        name = host if tls is None else tls[1]
        conn.sendall(f"{method} {path} HTTP/1.0\r\nHost: {name}\r\n\r\n".encode("latin-1"))
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers, body


@pytest.fixture
def pyodide_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "pyodide"
    folder.mkdir()
    (folder / "pyodide.mjs").write_text("// pyodide stand-in\n")
    (folder / "pyodide.asm.wasm").write_bytes(b"\0asm")
    (folder / "sub").mkdir()
    (folder / "sub" / "inner.js").write_text("inner")
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET")
    (folder / "link.js").symlink_to(secret)
    return folder


@pytest.fixture
def local(pyodide_dir: Path) -> Iterator[Playground]:
    playground = Playground(port=0, pyodide=pyodide_dir)
    playground.start()
    yield playground
    playground.stop()


@pytest.fixture
def cdn() -> Iterator[Playground]:
    playground = Playground(port=0)
    playground.start()
    yield playground
    playground.stop()


def test_it_binds_the_loopback_address_by_default(cdn: Playground) -> None:
    assert cdn.httpd.server_address[0] == "127.0.0.1"
    assert cdn.url.startswith("http://127.0.0.1:")
    args = _parser().parse_args(["playground"])
    assert (args.host, args.port, args.pyodide, args.no_browser) == ("127.0.0.1", 8000, None, False)
    banner = cdn.banner()
    assert banner.splitlines()[0] == f"minigrad playground: {cdn.url}"
    assert "serves only its own files" in banner and CDN in banner


def test_it_serves_the_page_with_pyodide_from_the_cdn(cdn: Playground) -> None:
    status, headers, body = _get(cdn.url, "/")
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    page = body.decode()
    assert f'data-pyodide="{CDN}"' in page  # the worker loads pyodide.mjs from there
    assert 'id="limit" type="number" min="1" max="3600" step="1"\n        value="30"' in page
    status, headers, body = _get(cdn.url, "/playground-worker.js")
    assert status == 200 and headers["Content-Type"] == "text/javascript; charset=utf-8"
    assert b"await import(`${indexURL}pyodide.mjs`)" in body
    assert f"https://cdn.jsdelivr.net/pyodide/v{PYODIDE_VERSION}/full/" == CDN
    assert _get(cdn.url, "/index.html?from=a-bookmark#run")[2] == page.encode()
    status, headers, body = _get(cdn.url, "/lesson.py")
    assert status == 200 and body.decode() == LESSON


def test_the_cdn_version_is_the_one_ci_pins_and_the_docs_give() -> None:
    pinned = json.loads((REPO / ".ci" / "pyodide" / "package.json").read_text())
    assert pinned["dependencies"]["pyodide"] == PYODIDE_VERSION
    lock = json.loads((REPO / ".ci" / "pyodide" / "package-lock.json").read_text())
    assert lock["packages"]["node_modules/pyodide"]["version"] == PYODIDE_VERSION
    docs = (REPO / "docs" / "playground.md").read_text(encoding="utf-8")
    named = re.findall(
        r"pyodide@([\d.]+)|pyodide/v([\d.]+)/|(?:Pyodide|Python) (\d+\.\d+\.\d+)", docs
    )
    assert len(named) >= 4 and {"".join(versions) for versions in named} == {PYODIDE_VERSION}


def test_it_serves_the_package_it_runs_from(cdn: Playground) -> None:
    status, headers, body = _get(cdn.url, "/minigrad.zip")
    assert status == 200 and headers["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(body))
    names = archive.namelist()
    source = Path(server.__file__).resolve().parents[2]
    assert archive.read("minigrad/core/value.py") == (source / "core" / "value.py").read_bytes()
    assert "minigrad/cli/playground/session.py" in names
    assert "minigrad/cli/playground/static/playground.js" in names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


def test_it_serves_pyodide_from_a_local_folder(local: Playground) -> None:
    page = _get(local.url, "/")[2].decode()
    assert 'data-pyodide="/pyodide/"' in page and "jsdelivr" not in page
    status, _, body = _get(local.url, "/pyodide/pyodide.mjs")
    assert status == 200 and body == b"// pyodide stand-in\n"
    status, headers, body = _get(local.url, "/pyodide/pyodide.asm.wasm")
    assert (status, headers["Content-Type"], body) == (200, "application/wasm", b"\0asm")
    assert _get(local.url, "/pyodide/pyodide.mjs", method="HEAD")[:2][0] == 200


def test_the_cdn_stand_in_answers_over_tls_as_the_cdn_does(pyodide_dir: Path) -> None:
    # The browser test of the CDN mode leans on tests/fake_cdn.py: its
    # certificate, its URL path and the headers a cross-origin load needs.
    (pyodide_dir / "pyodide.asm.mjs").write_text("export default 1;\n")
    assert fake_cdn.spki_sha256(fake_cdn.CERT.read_text(encoding="ascii")) == (
        "Tq9d9YnBRWha2LdJumeYBr6xn+YcNQIQzRkmMMn/xPY="  # openssl's answer, data/README.md
    )
    context = ssl.create_default_context(cafile=fake_cdn.CERT)
    context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN  # a self-signed leaf, no CA
    with fake_cdn.serve(pyodide_dir) as cdn:
        answers = {}
        for name in ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "link.js", "sub"):
            url = f"https://127.0.0.1:{cdn.port}/"
            status, headers, _ = _get(url, fake_cdn.PREFIX + name, tls=(context, fake_cdn.HOST))
            kind = headers["Content-Type"].split(";")[0]
            answers[name] = (status, kind, headers["Access-Control-Allow-Origin"])
        assert cdn.served_names() == {"pyodide.mjs": 1, "pyodide.asm.mjs": 1, "pyodide.asm.wasm": 1}
    assert f"{fake_cdn.HOST}{fake_cdn.PREFIX}" == CDN.removeprefix("https://")
    assert answers == {
        "pyodide.mjs": (200, "text/javascript", "*"),
        "pyodide.asm.mjs": (200, "text/javascript", "*"),
        "pyodide.asm.wasm": (200, "application/wasm", "*"),
        "link.js": (404, "text/plain", "*"),  # a symlink, as the playground's server
        "sub": (404, "text/plain", "*"),
    }


@pytest.mark.parametrize(
    "path",
    [
        "/../pyproject.toml",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/..%2f..%2fetc%2fpasswd",
        "/%2E%2E%2Fsecret.txt",
        "/pyodide/../../etc/passwd",
        "/pyodide/..%2fsecret.txt",
        "/pyodide/%2e%2e/secret.txt",
        "/pyodide/link.js",
        "/pyodide/sub/inner.js",
        "/pyodide/sub%2finner.js",
        "/pyodide%2fpyodide.mjs",
        "//etc/passwd",
        "/etc/passwd",
        "http://127.0.0.1/../secret.txt",
        "/static/index.html",
        "/server.py",
        "/minigrad/__init__.py",
        "/index.html/..",
        "/./index.html",
        "/lesson.py%00",
        "/%6cesson.py",
        "\\..\\secret.txt",
    ],
)
def test_it_refuses_every_other_path(local: Playground, path: str) -> None:
    status, _, body = _get(local.url, path)
    assert status == 404
    assert b"SECRET" not in body and b"root:" not in body and b"inner" not in body


def test_it_answers_only_get_and_head(local: Playground) -> None:
    assert _get(local.url, "/", method="POST")[0] == 501
    assert _get(local.url, "/", method="DELETE")[0] == 501


def test_a_folder_without_pyodide_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["playground", "--no-browser", "--port", "0", "--pyodide", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"minigrad playground: --pyodide: {str(tmp_path)!r} holds no pyodide.mjs (give the "
        "folder of the npm package 'pyodide' or of a Pyodide release's full/ folder)\n"
    )
    missing = tmp_path / "missing"
    assert main(["playground", "--no-browser", "--pyodide", str(missing)]) == 2
    assert f"not a folder: {str(missing)!r}" in capsys.readouterr().err


def test_a_taken_port_or_a_bad_one_is_exit_2(
    cdn: Playground, capsys: pytest.CaptureFixture[str]
) -> None:
    port = cdn.httpd.server_address[1]
    assert main(["playground", "--no-browser", "--port", str(port)]) == 2
    assert f"cannot serve on 127.0.0.1:{port}" in capsys.readouterr().err
    assert main(["playground", "--no-browser", "--port", "70000"]) == 2
    assert "--port must be 0-65535, got 70000" in capsys.readouterr().err


def test_the_command_prints_its_address_and_serves_until_stopped() -> None:
    command = [sys.executable, "-m", "minigrad", "playground", "--port", "0", "--no-browser"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as p:
        try:
            assert p.stdout is not None
            first = p.stdout.readline().strip()
            url = first.removeprefix("minigrad playground: ")
            assert url.startswith("http://127.0.0.1:") and url.endswith("/")
            assert "serves only its own files" in p.stdout.readline()
            assert _get(url, "/")[0] == 200 and _get(url, "/../README.md")[0] == 404
        finally:
            p.terminate()
            p.wait(timeout=TIMEOUT)


def test_the_lesson_shows_the_neuron_its_graph_and_the_wrong_op() -> None:
    result = run(LESSON)
    assert result["error"] == ""
    printed = str(result["stdout"]).splitlines()
    assert printed == [
        "o = 0.7071, do/dn = 1 - o**2 = 0.5000",
        "by hand:    x1.grad = -1.5000, w1.grad = 1.0000",
        "backward(): x1.grad = -1.5000, w1.grad = 1.0000",
        "check failed: fix the sign and press Run again",
    ]
    shown = result["shown"]
    assert isinstance(shown, list) and [item["kind"] for item in shown] == ["svg", "html", "html"]
    graph, stepper, report = (item["content"] for item in shown)
    assert graph.startswith("<svg") and ">tanh<" in graph and "grad -1.5" in graph
    assert stepper.startswith('<div class="mg-stepper"') and "<script>" in stepper
    assert "<b>gradcheck failed</b>" in report
    assert "cause: op &#x27;my_tanh&#x27; at (0.6)" in report


def test_the_lesson_with_its_sign_fixed_passes() -> None:
    fixed = LESSON.replace("lambda x, out: out**2 - 1", "lambda x, out: 1 - out**2")
    assert fixed != LESSON
    result = run(fixed)
    shown = result["shown"]
    assert isinstance(shown, list)
    assert "<b>gradcheck passed</b>" in shown[2]["content"]
    assert str(result["stdout"]).endswith("check passed\n")


def test_a_users_error_is_their_traceback_not_the_sessions() -> None:
    result = run("x = 1\nraise ValueError('bad input: x')\n")
    assert result["error"] == (
        "Traceback (most recent call last):\n"
        '  File "<editor>", line 2, in <module>\n'
        "    raise ValueError('bad input: x')\n"
        "ValueError: bad input: x\n"
    )
    with pytest.raises(TypeError, match="run: code must be a str, got bytes"):
        run(b"print(1)")  # type: ignore[arg-type]


def _reset_mid_download(url: str, path: str) -> None:
    """Ask for ``path``, read a little, then drop the connection with a reset (RST)."""
    host, port = url.split("://", 1)[1].rstrip("/").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=TIMEOUT) as conn:
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        conn.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode("latin-1"))
        assert conn.recv(64).startswith(b"HTTP/1.0 200")
        # Linger 0: close() sends a reset, as a browser tab closed mid-download does.
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def test_the_server_stays_quiet_when_a_client_goes_away(tmp_path: Path) -> None:
    folder = tmp_path / "pyodide"
    folder.mkdir()
    (folder / "pyodide.mjs").write_text("// pyodide stand-in\n")
    # Larger than any socket buffer, so the server is still writing when the reset comes.
    (folder / "pyodide.asm.wasm").write_bytes(bytes(64 << 20))
    command = [sys.executable, "-m", "minigrad", "playground", "--port", "0", "--no-browser"]
    command += ["--pyodide", str(folder)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as p:
        try:
            assert p.stdout is not None
            url = p.stdout.readline().strip().removeprefix("minigrad playground: ")
            for _ in range(3):
                _reset_mid_download(url, "/pyodide/pyodide.asm.wasm")
            # Still serving, and a whole answer after the resets.
            status, _, body = _get(url, "/pyodide/pyodide.mjs")
            assert (status, body) == (200, b"// pyodide stand-in\n")
        finally:
            p.terminate()
            _, err = p.communicate(timeout=TIMEOUT)
    assert err == ""


def test_the_time_limit_is_the_pages_default_and_checked(
    pyodide_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    playground = Playground(port=0, pyodide=pyodide_dir, time_limit=5)
    playground.start()
    try:
        page = _get(playground.url, "/")[2].decode()
        _, headers, _ = _get(playground.url, "/pyodide/pyodide.mjs")
        _, page_headers, _ = _get(playground.url, "/minigrad.zip")
    finally:
        playground.stop()
    assert 'max="3600" step="1"\n        value="5">' in page
    # Each run's worker loads Pyodide again: from the browser's cache, not the network.
    assert headers["Cache-Control"] == "max-age=86400"
    assert page_headers["Cache-Control"] == "no-store"  # a teacher's edit shows at once
    assert main(["playground", "--no-browser", "--port", "0", "--time-limit", "0"]) == 2
    assert capsys.readouterr().err == (
        "minigrad playground: --time-limit: must be 1-3600 seconds, got 0\n"
    )
    assert _parser().parse_args(["playground"]).time_limit == 30
