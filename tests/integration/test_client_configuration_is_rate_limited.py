"""The client configuration endpoint (RFC 7592: GET, PUT, DELETE) counts every request
per address and per client id named, before the registration access token is checked
(RATE_CLIENT_CONFIGURATION_PER_IP and _PER_CLIENT): 429 with Retry-After in the JSON
error shape, and the refused request reads and writes nothing. (200 PUTs in a row used
to make 200 database writes and cache evictions.)"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import msgspec
import pytest

from courseschool.authz.app import create_app
from courseschool.authz.settings import AuthzSettings

from .conftest import serve
from .flow import BASE_URL, Flow


def _with(base: AuthzSettings, **changes: object) -> AuthzSettings:
    return AuthzSettings(**{**msgspec.structs.asdict(base), **changes})


def _auth(reg: dict[str, Any]) -> dict[str, str]:
    return {"Authorization": f"Bearer {reg['registration_access_token']}"}


def _path(reg: dict[str, Any]) -> str:
    return reg["registration_client_uri"].removeprefix(BASE_URL)


def _refused(answer: httpx.Response, window: int) -> None:
    assert answer.status_code == 429, answer.text
    assert answer.headers["content-type"].startswith("application/json")
    assert answer.json() == {"error": "too_many_requests", "error_description": "too many requests; slow down"}
    assert 0 < int(answer.headers["retry-after"]) <= window
    assert answer.headers["cache-control"] == "no-store"


@pytest.fixture
async def limited(authz_settings, clean_db, redis_client, clock) -> AsyncIterator[Flow]:
    settings = _with(
        authz_settings, rate_client_configuration_per_client="3/3600", rate_client_configuration_per_ip="6/3600"
    )
    async with serve(create_app(settings, clock=clock)) as client:
        yield Flow(client, clean_db, redis_client)


async def test_client_configuration_is_limited_per_client(limited: Flow) -> None:
    reg = await limited.register(client_name="Before")
    update = {"client_id": reg["client_id"], "client_name": "After", "redirect_uris": reg["redirect_uris"]}
    answers = [
        await limited.client.get(_path(reg), headers=_auth(reg)),
        await limited.client.put(_path(reg), headers=_auth(reg), json=update),
        await limited.client.get(_path(reg), headers={"Authorization": "Bearer wrong"}),  # a guess counts too
    ]
    assert [a.status_code for a in answers] == [200, 200, 401]
    renamed = {**update, "client_name": "Refused"}
    _refused(await limited.client.put(_path(reg), headers=_auth(reg), json=renamed), 3600)
    _refused(await limited.client.delete(_path(reg), headers=_auth(reg)), 3600)
    row = await limited.pool.fetchrow("SELECT client_name FROM authz_clients WHERE client_id = $1", reg["client_id"])
    assert row is not None and row["client_name"] == "After"  # neither written nor deleted
    other = await limited.register()
    assert (await limited.client.get(_path(other), headers=_auth(other))).status_code == 200  # its own allowance


async def test_client_configuration_is_limited_per_address(limited: Flow) -> None:
    clients = [await limited.register() for _ in range(3)]
    statuses = [
        (await limited.client.get(_path(reg), headers=_auth(reg))).status_code for reg in clients for _ in range(2)
    ]
    assert statuses == [200] * 6  # six from this address, across clients, two for each
    _refused(await limited.client.get(_path(clients[0]), headers=_auth(clients[0])), 3600)  # its client's third
    elsewhere_transport = httpx.ASGITransport(app=limited.client.app, client=("192.0.2.7", 4000))
    async with httpx.AsyncClient(transport=elsewhere_transport, base_url=BASE_URL) as elsewhere:
        reg = clients[0]
        assert (await elsewhere.get(_path(reg), headers=_auth(reg))).status_code == 200


@pytest.mark.parametrize("name", ["rate_client_configuration_per_ip", "rate_client_configuration_per_client"])
def test_a_malformed_client_configuration_rate_is_refused(authz_settings, name: str) -> None:
    with pytest.raises(ValueError, match=name.upper()):
        _with(authz_settings, **{name: "0/60"})
