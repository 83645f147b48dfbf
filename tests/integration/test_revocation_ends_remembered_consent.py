"""Finding 15: an integration's remembered consent outlived the revocation of its grant
(`prompt=none` silently got a new grant). Revoking a grant, by the client, the user or
an administrator, now ends the consent it came from."""

from __future__ import annotations

import pytest

from courseschool.authz.endpoints.admin import AdminService

from .flow import Flow, Lifecycle, pkce_pair, query_of


async def _remembered(flow: Flow) -> tuple[dict, dict, dict]:
    integration = await flow.integration("Partner CRM", scope="openid courses:read")
    user = await flow.user("owner")
    callback, verifier, _ = await flow.authorize(integration, user, scope="openid courses:read")
    tokens = (await flow.exchange(integration, callback["code"], verifier)).json()
    _, challenge = pkce_pair()
    silent = await flow.start(flow.authorize_params(integration, challenge, scope="openid courses:read", prompt="none"))
    assert "code" in query_of(silent.headers["location"])  # consent is remembered
    return integration, user, tokens


async def _silent_error(flow: Flow, integration: dict) -> str | None:
    _, challenge = pkce_pair()
    again = await flow.start(flow.authorize_params(integration, challenge, scope="openid courses:read", prompt="none"))
    return query_of(again.headers["location"]).get("error")


@pytest.mark.parametrize("who", ["admin", "client"])
async def test_revoking_the_grant_ends_the_remembered_consent(flow: Flow, who: str) -> None:
    integration, _, tokens = await _remembered(flow)
    if who == "admin":
        grant_id = await flow.pool.fetchval(
            "SELECT id::text FROM authz_grants WHERE client_id = $1 AND revoked_at IS NULL ORDER BY created_at LIMIT 1",
            integration["client_id"],
        )
        await AdminService(flow.client.app.state.authz.administration).revoke_grant(grant_id)
    else:
        assert (await Lifecycle(flow).revoke(integration, tokens["refresh_token"])).status_code == 200
    assert await flow.count("authz_consents") == 0
    assert await _silent_error(flow, integration) == "consent_required"
