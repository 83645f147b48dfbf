"""Issue 38, T4-3: anonymous requests wrote a security event and a webhook delivery each
(every new unreachable metadata-document URL at /oauth/authorize: one event, one
delivery, no source address). Anonymous noise is counted in /metrics and logged, never
stored one by one; every event a request stores names the caller's address."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import structlog

from courseschool.authz.app import create_app
from courseschool.authz.settings import AuthzSettings
from courseschool.authz.storage.client_metadata import DocumentWeb

from ..support.tls import HttpsServer
from .cimd import LOOPBACK, cimd_settings
from .conftest import serve
from .flow import BASE_URL, Flow, Lifecycle, pkce_pair
from .test_metrics import _value

SECRET = "webhook-secret-for-tests-0123456789abcdef"


@pytest.fixture
async def hooked_cimd(
    authz_settings: AuthzSettings,
    site: tuple[HttpsServer, Path],
    site_document_web: DocumentWeb,
    clean_db: Any,
    redis_client: Any,
    clock: Any,
) -> AsyncIterator[tuple[Flow, HttpsServer]]:
    """An app that fetches metadata documents from `site` and sends its webhook there too."""
    server, ca = site
    settings = cimd_settings(
        authz_settings,
        events_webhook_url=server.url("/hooks"),
        events_webhook_secret=SECRET,
        events_webhook_ca_bundle=str(ca),
        events_webhook_interval=3600.0,
    )
    async with serve(create_app(settings, clock=clock, document_web=site_document_web)) as client:
        yield Flow(client, clean_db, redis_client), server


def _components(flow: Flow) -> Any:
    return flow.client.app.state.authz  # type: ignore[attr-defined]


async def test_unusable_metadata_documents_are_counted_not_stored(hooked_cimd: tuple[Flow, HttpsServer]) -> None:
    flow, server = hooked_cimd
    before = (await flow.client.get("/metrics")).text
    _, challenge = pkce_pair()
    with structlog.testing.capture_logs() as logged:
        for n in range(5):  # five new URLs, none of them a document (the site answers 404)
            params = {
                "response_type": "code",
                "client_id": server.url(f"/nothing-{n}.json"),
                "redirect_uri": LOOPBACK,
                "code_challenge": challenge,
                "code_challenge_method": "S256",
            }
            answer = await flow.client.get("/oauth/authorize", params=params)
            assert answer.status_code == 400, answer.text
        start = await flow.start(flow.authorize_params(await flow.register(), challenge))
        await flow.login(start.headers["location"], {"email": "nobody@example.test"}, password="a guess")
    await _components(flow).events.flush()
    after = (await flow.client.get("/metrics")).text
    refused = [e for e in logged if e.get("audit") and e["event"] == "client_metadata_refused"]
    assert len(refused) == 5 and all(e.get("ip") for e in refused)  # the log still has each, with its caller
    assert len([e for e in logged if e.get("audit") and e["event"] == "login_failed"]) == 1
    stored = await flow.pool.fetch("SELECT action FROM authz_events")
    assert [r["action"] for r in stored] == ["client_registered"]  # neither the documents nor no one's sign-in
    queued = await flow.pool.fetch("SELECT body->>'action' AS action FROM authz_webhook_outbox")
    assert [r["action"] for r in queued] == ["client_registered"]
    moved = _value(after, "courseschool_anonymous_events_total", action="client_metadata_refused") - _value(
        before, "courseschool_anonymous_events_total", action="client_metadata_refused"
    )
    assert moved == 5


async def test_a_known_persons_failed_sign_in_is_still_stored(hooked_cimd: tuple[Flow, HttpsServer]) -> None:
    flow, _ = hooked_cimd
    reg = await flow.register()
    user = await flow.user("owner")
    _, challenge = pkce_pair()
    start = await flow.start(flow.authorize_params(reg, challenge))
    await flow.login(start.headers["location"], user, password="not the password at all")
    await _components(flow).events.flush()
    row = await flow.pool.fetchrow("SELECT subject, source FROM authz_events WHERE action = 'login_failed'")
    assert row is not None and row["subject"] == user["id"] and row["source"]
    assert await flow.pool.fetchval(
        "SELECT count(*) FROM authz_webhook_outbox o JOIN authz_events e ON e.id = o.event_id "
        "WHERE e.action = 'login_failed'"
    )


async def test_every_event_a_request_stores_names_its_source(flow: Flow, clock: Any) -> None:
    """A whole life of a grant and a client: registered, approved, refreshed, reused,
    changed, revoked, deleted; consent remembered; the person's own removals."""
    reg = await flow.register(grant_types=["authorization_code", "refresh_token"])
    user = await flow.user("owner")
    tokens = await flow.tokens(reg, user)
    life = Lifecycle(flow)
    assert (await life.refresh(reg, tokens["refresh_token"])).status_code == 200
    clock.advance(60)
    assert (await life.refresh(reg, tokens["refresh_token"])).status_code == 400  # reused: the grant ends
    again = await flow.tokens(reg, user)
    assert (await life.revoke(reg, again["access_token"])).status_code == 200
    bearer = {"Authorization": f"Bearer {reg['registration_access_token']}"}
    path = reg["registration_client_uri"].removeprefix(BASE_URL)
    body = {"client_id": reg["client_id"], "client_name": "Renamed", "redirect_uris": reg["redirect_uris"]}
    answer = await flow.client.put(path, json=body, headers=bearer)
    assert answer.status_code == 200, answer.text
    assert (await flow.client.delete(path, headers=bearer)).status_code == 204
    await _components(flow).events.flush()
    rows = await flow.pool.fetch("SELECT action, source FROM authz_events ORDER BY id")
    actions = {r["action"] for r in rows}
    assert {"client_registered", "consent_given", "refresh_reused", "grant_revoked"} <= actions
    assert {"access_token_revoked", "client_updated", "client_deleted"} <= actions
    assert [r["action"] for r in rows if not r["source"]] == []
