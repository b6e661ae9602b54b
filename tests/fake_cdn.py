"""A stand-in for Pyodide's CDN on the loopback address, for the browser tests.

The playground's page loads Pyodide from ``server.CDN`` (jsdelivr) unless
started with ``--pyodide DIR``; CI has no internet. :func:`serve` serves a
local Pyodide folder over HTTPS on 127.0.0.1, under the CDN's own URL path
(``/pyodide/v<version>/full/NAME``), with the headers a cross-origin load
needs: ``Access-Control-Allow-Origin: *`` (the page's origin is the
playground's, so the module ``pyodide.asm.mjs`` and the fetches of the
``.wasm``, the lock file and the standard library are CORS requests) and
the types a browser checks (JavaScript for a module script, and
``application/wasm`` for streaming compilation).

Chromium is pointed at it by :func:`chromium_flags`: the CDN's host name
resolves to this server, and the self-signed certificate in
``data/fake_cdn.pem`` (see ``data/README.md``) is trusted by its SPKI hash
and nothing else is, so the page loads the very URL it names, over TLS.
"""

from __future__ import annotations

import base64
import collections
import hashlib
import http.server
import ssl
import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from minigrad.cli.playground.server import CDN

#: A certificate for the CDN's host and its key, one PEM file (test data, public).
CERT = Path(__file__).resolve().parent / "data" / "fake_cdn.pem"
#: The host and the folder the page loads Pyodide from, as the page names them.
HOST = urllib.parse.urlsplit(CDN).hostname or ""
PREFIX = urllib.parse.urlsplit(CDN).path

#: The Content-Type of each kind of Pyodide file, as browsers expect them.
TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".wasm": "application/wasm",
    ".json": "application/json; charset=utf-8",
    ".zip": "application/zip",
    ".map": "application/json; charset=utf-8",
}


def _der_item(der: bytes, at: int) -> tuple[int, int, int]:
    """The DER item at ``at``: where its contents start, where they end, its tag."""
    tag, size = der[at], der[at + 1]
    start = at + 2
    if size & 0x80:  # long form: the next (size & 0x7F) bytes give the length
        count = size & 0x7F
        size = int.from_bytes(der[start : start + count])
        start += count
    return start, start + size, tag


def spki_sha256(pem: str) -> str:
    """The base64 SHA-256 of the certificate's SubjectPublicKeyInfo (Chromium's SPKI hash).

    The certificate is ``SEQUENCE { tbsCertificate, ... }`` and the SPKI is
    the seventh item of ``tbsCertificate`` (after version, serial number,
    signature algorithm, issuer, validity and subject; RFC 5280, 4.1).
    """
    der = ssl.PEM_cert_to_DER_cert(pem[: pem.index("-----END CERTIFICATE-----") + 25])
    at = _der_item(der, _der_item(der, 0)[0])[0]  # the first item of tbsCertificate
    if der[at] != 0xA0:
        raise ValueError("not an X.509 v3 certificate: no explicit version")
    for _ in range(6):  # version, serial, signature, issuer, validity, subject
        at = _der_item(der, at)[1]
    _, end, tag = _der_item(der, at)
    if tag != 0x30:
        raise ValueError(f"expected the SubjectPublicKeyInfo SEQUENCE, got tag {tag:#x}")
    return base64.b64encode(hashlib.sha256(der[at:end]).digest()).decode("ascii")


class FakeCDN:
    """The running server: its port, and what it was asked for.

    Args:
        folder: The Pyodide files to serve (the npm package's folder).
        only: If given, the only names served; every other one is a 404,
            as from a CDN that answers for some files and not the rest.
    """

    def __init__(self, folder: Path, only: frozenset[str] | None = None) -> None:
        self.files = {
            PREFIX + entry.name: entry
            for entry in folder.iterdir()
            if entry.is_file() and not entry.is_symlink() and (only is None or entry.name in only)
        }
        #: Requests answered with a file, and refused (404), by path: counts.
        self.served: collections.Counter[str] = collections.Counter()
        self.refused: collections.Counter[str] = collections.Counter()
        self._lock = threading.Lock()
        handler = type("Handler", (_Handler,), {"cdn": self})
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(CERT)
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.port: int = self.httpd.server_address[1]

    def count(self, path: str, *, found: bool) -> None:
        with self._lock:
            (self.served if found else self.refused)[path] += 1

    def served_names(self) -> dict[str, int]:
        """How often each file was served, by its name in the Pyodide folder."""
        with self._lock:
            return {path.removeprefix(PREFIX): n for path, n in self.served.items()}


class _Handler(http.server.BaseHTTPRequestHandler):
    cdn: FakeCDN

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        found = self.cdn.files.get(path)
        self.cdn.count(path, found=found is not None)
        if found is None:  # a 404 the page may read, as from the CDN
            self._send(404, "text/plain; charset=utf-8", b"not found\n")
        else:
            kind = TYPES.get(found.suffix, "application/octet-stream")
            self._send(200, kind, found.read_bytes())

    def _send(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Access-Control-Allow-Origin", "*")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


@contextmanager
def serve(folder: Path, only: frozenset[str] | None = None) -> Iterator[FakeCDN]:
    """Serve ``folder`` as the CDN's Pyodide on 127.0.0.1 until the block ends."""
    cdn = FakeCDN(folder, only)
    thread = threading.Thread(
        target=cdn.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield cdn
    finally:
        cdn.httpd.shutdown()
        thread.join(timeout=5)
        cdn.httpd.server_close()


def chromium_flags(target: str) -> tuple[str, ...]:
    """Chromium's flags that send the CDN's host to ``target`` and trust only our certificate.

    Chromium honours the SPKI list only together with ``--user-data-dir``
    (its ``MaybeWrapCertVerifier``); chromedriver always passes one.

    Args:
        target: ``127.0.0.1:PORT``, or ``~NOTFOUND`` for a name that does not resolve.
    """
    spki = spki_sha256(CERT.read_text(encoding="ascii"))
    return (
        f"--host-resolver-rules=MAP {HOST} {target}",
        f"--ignore-certificate-errors-spki-list={spki}",
    )
