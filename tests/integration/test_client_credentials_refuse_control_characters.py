"""A client_id or client_secret is printable ASCII (RFC 6749 Appendix A.1, A.2): one with
a NUL or any other control character, in an HTTP Basic header or in the form, names no
client, so it is 401 `invalid_client` (with the Basic challenge when it came in the
header), never a 500 (a NUL in the Basic header used to reach PostgreSQL and crash the
request at /api/oauth/token, /token and /api/oauth/revoke). An id in the configuration
endpoint's path with a NUL is an unknown client there too."""

from __future__ import annotations

import base64
from urllib.parse import quote

import pytest

from .flow import Flow

ENDPOINTS = ("/api/oauth/token", "/token", "/api/oauth/revoke", "/api/oauth/introspect")
CONTROLS = ["\x00", "\x01", "\t", "\n", "\x1b", "\x7f", "\x85", "\u202e"]


def _basic(client_id: str, secret: str) -> dict[str, str]:
    pair = f"{quote(client_id, safe='')}:{quote(secret, safe='')}".encode()
    return {"Authorization": "Basic " + base64.b64encode(pair).decode()}


def _raw_basic(raw: bytes) -> dict[str, str]:
    """Bytes as they are inside the base64 (not form-encoded first)."""
    return {"Authorization": "Basic " + base64.b64encode(raw).decode()}


@pytest.mark.parametrize("endpoint", ENDPOINTS)
@pytest.mark.parametrize("control", CONTROLS)
async def test_a_control_character_in_basic_credentials_is_invalid_client(
    flow: Flow, endpoint: str, control: str
) -> None:
    reg = await flow.register(token_endpoint_auth_method="client_secret_basic")
    form = {"grant_type": "refresh_token", "refresh_token": "r", "token": "t"}
    for headers in (
        _basic(reg["client_id"] + control, reg["client_secret"]),
        _basic(reg["client_id"], reg["client_secret"] + control),
        _basic(control, "secret"),
        _raw_basic(f"{reg['client_id']}{control}:{reg['client_secret']}".encode()),
        _raw_basic(f"{reg['client_id']}:{control}".encode()),
    ):
        answer = await flow.client.post(endpoint, data=form, headers=headers)
        assert answer.status_code == 401, (endpoint, headers, answer.text)
        assert answer.json()["error"] == "invalid_client"
        assert set(answer.json()) == {"error", "error_description"}
        assert answer.headers["www-authenticate"].startswith("Basic realm=")


@pytest.mark.parametrize("endpoint", ENDPOINTS)
async def test_a_control_character_in_form_credentials_is_refused_as_a_client_error(flow: Flow, endpoint: str) -> None:
    reg = await flow.register(token_endpoint_auth_method="client_secret_post")
    for client_id, secret in ((reg["client_id"] + "\x1b", reg["client_secret"]), (reg["client_id"], "s\x7f")):
        form = {"client_id": client_id, "client_secret": secret, "grant_type": "refresh_token", "token": "t"}
        answer = await flow.client.post(endpoint, data=form)
        assert answer.status_code == 401 and answer.json()["error"] == "invalid_client", answer.text
        assert "www-authenticate" not in answer.headers  # the form was used, not the header
    nul = await flow.client.post(endpoint, data={"client_id": "a\x00b", "grant_type": "refresh_token"})
    assert nul.status_code == 400 and nul.json()["error"] == "invalid_request"  # no form value holds a NUL


async def test_a_nul_in_the_configuration_endpoints_path_is_an_unknown_client(flow: Flow) -> None:
    reg = await flow.register()
    headers = {"Authorization": f"Bearer {reg['registration_access_token']}"}
    for method in ("GET", "DELETE"):
        answer = await flow.client.request(method, f"/api/oauth/register/{reg['client_id']}%00", headers=headers)
        assert answer.status_code == 401 and answer.json()["error"] == "invalid_token", answer.text
