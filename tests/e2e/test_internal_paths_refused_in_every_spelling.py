"""Finding 12: the running all-in-one refuses `/internal` however the request target is
written, as the real server decodes it; sent as written (an HTTP client library would
normalise the path first), with the platform's internal token, so a variant let through would be
served."""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlsplit

import pytest

from .conftest import Platform

TARGET = "/internal/metadata/oauth-authorization-server"
VARIANTS = {
    "//internal/metadata/oauth-authorization-server": "ambiguous",
    "/./internal/metadata/oauth-authorization-server": "ambiguous",
    "/internal/../internal/metadata/oauth-authorization-server": "ambiguous",
    "/%2finternal/metadata/oauth-authorization-server": "ambiguous",
    "/oauth%2F..%2Finternal/metadata/oauth-authorization-server": "ambiguous",
    "/%2e%2e/internal/metadata/oauth-authorization-server": "ambiguous",
    "/oauth\\..\\internal/metadata/oauth-authorization-server": "ambiguous",
    "/%69nternal/metadata/oauth-authorization-server": "internal",
    "/INTERNAL/metadata/oauth-authorization-server": "internal",
    "/internal./metadata/oauth-authorization-server": "internal",
    TARGET: "internal",
}


def raw_get(platform: Platform, target: str, headers: dict[str, str]) -> tuple[int, bytes]:
    """GET with the request target exactly as given (http.client sends it unchanged)."""
    parts = urlsplit(platform.address)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        conn.putrequest("GET", target, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", parts.netloc)
        for name, value in headers.items():
            conn.putheader(name, value)
        conn.endheaders()
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


@pytest.mark.parametrize(("target", "refused_as"), VARIANTS.items())
def test_internal_is_refused_in_every_spelling(platform: Platform, target: str, refused_as: str) -> None:
    status, body = raw_get(platform, target, {"Authorization": f"Bearer {platform.internal_token}"})
    assert status == 404, (target, status, body[:200])
    description = json.loads(body)["error_description"]
    assert description.startswith("no such endpoint") and ("ambiguous" in description) == (refused_as == "ambiguous")


def test_a_server_refusal_of_a_target_without_a_slash_is_no_bypass(platform: Platform) -> None:
    token = {"Authorization": f"Bearer {platform.internal_token}"}
    status, _ = raw_get(platform, "%2finternal/metadata/oauth-authorization-server", token)
    assert status in (400, 404)  # the server's own refusal (granian: 400)
