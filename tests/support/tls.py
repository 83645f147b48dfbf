"""A test certificate authority and an HTTPS server on loopback, for the tests of
Client ID Metadata Documents (and of the events webhook), and the document web that
reaches it (`site_web`)."""

from __future__ import annotations

import datetime as dt
import http.server
import ipaddress
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from courseschool.authz.storage.client_metadata import DocumentWeb


def make_ca_and_server_cert(folder: Path) -> tuple[Path, Path, Path]:
    """(ca.pem, server.pem, server.key): a CA, and a certificate for localhost and 127.0.0.1."""
    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Course School test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [
                    x509.DNSName("localhost"),
                    x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                ]
            ),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    ca_path, cert_path, key_path = folder / "ca.pem", folder / "server.pem", folder / "server.key"
    ca_path.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return ca_path, cert_path, key_path


@dataclass
class Reply:
    body: bytes
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "application/json"})
    delay: float = 0.0
    hold: threading.Event | None = None  # answer only once the test sets it


@dataclass
class Received:
    """A POST the server took: its path, headers and body."""

    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class HttpsServer:
    port: int
    replies: dict[str, Reply]
    hits: dict[str, int]
    posts: list[Received] = field(default_factory=list)
    # Replies to POSTs of a path, used up in order (then `replies`, then 200 with {}).
    post_replies: dict[str, list[Reply]] = field(default_factory=dict)

    def url(self, path: str) -> str:
        return f"https://localhost:{self.port}{path}"


@contextmanager
def https_server(folder: Path, certs: tuple[Path, Path, Path] | None = None) -> Iterator[tuple[HttpsServer, Path]]:
    """A local HTTPS server and its CA: a new CA and certificate in `folder`, or `certs`
    made earlier (make_ca_and_server_cert) when several servers share one CA."""
    ca, cert, key = certs or make_ca_and_server_cert(folder)
    replies: dict[str, Reply] = {}
    hits: dict[str, int] = {}
    served = HttpsServer(0, replies, hits)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits[self.path] = hits.get(self.path, 0) + 1
            self._answer(replies.get(self.path, Reply(b"{}", 404)))

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            served.posts.append(Received(self.path, dict(self.headers.items()), body))
            queued = served.post_replies.get(self.path)
            self._answer(queued.pop(0) if queued else replies.get(self.path, Reply(b"{}")))

        def _answer(self, reply: Reply) -> None:
            if reply.hold is not None:
                reply.hold.wait(timeout=30)
            if reply.delay:
                time.sleep(reply.delay)
            try:
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        served.port = server.server_address[1]
        yield served, ca
    finally:
        server.shutdown()
        server.server_close()


def site_web(ca: Path) -> DocumentWeb:
    """Where an authorization server made with this (`create_app(document_web=...)`)
    fetches metadata documents: the test site's CA trusted, and any address reachable
    (the site listens on loopback). The platform itself fetches from the public web only."""
    return DocumentWeb(allows=lambda _address: True, verify=ssl.create_default_context(cafile=str(ca)))
