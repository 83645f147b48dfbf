"""An app closes the HTTP clients it made when it stops, never the ones it was given
(docs/design.md): the all-in-one, and a test that starts an app again, keep using theirs."""

from __future__ import annotations

import httpx

from courseschool.authz.app import create_app as create_authz
from courseschool.authz.settings import AuthzSettings
from courseschool.common.asgi import AppLifespan
from courseschool.common.clock import FrozenClock
from courseschool.common.settings import load_settings
from courseschool.discovery.app import create_app as create_discovery
from courseschool.discovery.settings import DiscoverySettings
from courseschool.resource_api.app import create_app as create_resource
from courseschool.resource_api.settings import ResourceSettings

from .flow import BASE_URL


def _client() -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url="http://elsewhere.invalid")


async def test_the_authorization_server_leaves_the_resource_client_it_was_given_open(
    authz_settings: AuthzSettings, clean_db
) -> None:
    given = _client()
    app = create_authz(authz_settings, clock=FrozenClock(1_700_000_000), resource=given)
    for _ in range(2):  # started again with the same client
        async with AppLifespan(app):
            assert not given.is_closed
    assert not given.is_closed
    await given.aclose()


async def test_the_authorization_server_closes_the_resource_client_it_made(
    authz_settings: AuthzSettings, clean_db
) -> None:
    app = create_authz(authz_settings, clock=FrozenClock(1_700_000_000))
    async with AppLifespan(app):
        made = app.state.authz.activity._http
        assert isinstance(made, httpx.AsyncClient) and not made.is_closed
    assert made.is_closed


async def test_the_resource_api_and_discovery_leave_their_given_clients_open(
    database_url: str, redis_url: str, clean_db
) -> None:
    to_authz = _client()
    settings = load_settings(
        ResourceSettings,
        environ={},
        base_url=BASE_URL,
        database_url=database_url,
        redis_url=redis_url,
        token_validation="introspection",
        rs_client_id="rs",
        rs_client_secret="rs-secret",
        internal_token="internal-test-token",
    )
    async with AppLifespan(create_resource(settings, authz=to_authz, clock=FrozenClock(1_700_000_000))):
        pass
    upstreams = {"authz": _client(), "resource": _client()}
    discovery = load_settings(DiscoverySettings, environ={}, base_url=BASE_URL, internal_token="internal-test-token")
    async with AppLifespan(create_discovery(discovery, upstreams=upstreams)):
        pass
    for client in (to_authz, *upstreams.values()):
        assert not client.is_closed
        await client.aclose()
