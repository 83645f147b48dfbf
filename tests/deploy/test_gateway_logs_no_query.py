"""Review finding 3, at the production gateway (deploy/nginx/nginx.conf): its access log
recorded `$request_uri`, query included, so an e-mailed link's token
(/oauth/password/choose?token=...) was written to the log. It records the raw path
alone now: checked in the config, and in the log of a live gateway."""

from __future__ import annotations

import http.client
import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from ..support.deployment import NGINX_CONF, SERVICES, nginx_or_skip, run_gateway

SECRET = "s3cr3t-link-token-do-not-log"


class _Stub(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self.send_response(303)
        self.send_header("location", "/oauth/password/choose")
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def _log_formats() -> dict[str, str]:
    text = NGINX_CONF.read_text()
    formats = {}
    for name, body in re.findall(r"log_format\s+(\w+)\s+(?:escape=\w+\s+)?((?:'[^']*'\s*)+);", text):
        formats[name] = "".join(re.findall(r"'([^']*)'", body))
    return formats


def test_no_log_format_of_the_gateway_records_a_query() -> None:
    formats = _log_formats()
    assert formats, "nginx.conf defines its access log's format"
    for name, fmt in formats.items():
        # Each of these holds the query (or a part of it); $uri and $logged_path do not.
        assert not re.findall(r"\$(request_uri|request|args|query_string|is_args|arg_\w+)\b", fmt), name
    assert '"uri":"$logged_path"' in formats["json"]
    assert re.search(r"access_log\s+\S+\s+json;", NGINX_CONF.read_text())


@pytest.fixture(scope="module")
def gateway() -> Iterator[tuple[int, Path]]:
    nginx = nginx_or_skip()
    stubs = {name: _Stub() for name in SERVICES}
    for stub in stubs.values():
        threading.Thread(target=stub.serve_forever, daemon=True).start()
    try:
        with run_gateway(nginx, {name: stub.server_port for name, stub in stubs.items()}) as running:
            yield int(running["port"]), Path(str(running["access_log"]))  # type: ignore[call-overload]
    finally:
        for stub in stubs.values():
            stub.shutdown()
            stub.server_close()


def _logged(access_log: Path, request_id: str) -> dict[str, Any]:
    """The access log's line of the request `request_id`, once nginx wrote it."""
    while True:  # nginx writes the line as the request ends; the test's timeout bounds the wait
        for line in access_log.read_text().splitlines():
            entry = json.loads(line)
            if entry["request_id"] == request_id:
                return entry


def test_a_link_token_never_reaches_the_access_log(gateway: tuple[int, Path]) -> None:
    port, access_log = gateway
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", f"/oauth/password/choose?token={SECRET}", headers={"X-Request-ID": "link-open-1"})
        response = conn.getresponse()
        response.read()
        assert response.status == 303
    finally:
        conn.close()
    entry = _logged(access_log, "link-open-1")
    assert entry["uri"] == "/oauth/password/choose"
    assert SECRET not in access_log.read_text()
