"""Finding 14: any anonymously self-registered confidential client could introspect
every access token of any client or school. Introspection is for resource servers,
which an administrator makes: others get 401 invalid_client and learn nothing."""

from __future__ import annotations

from .flow import Flow, Lifecycle


async def test_self_registered_confidential_client_may_not_introspect(flow: Flow) -> None:
    victim = await flow.tokens(await flow.register())
    snoop = await flow.register(client_name="Snoop", token_endpoint_auth_method="client_secret_post")
    response = await flow.client.post(
        "/api/oauth/introspect",
        data={
            "token": victim["access_token"],
            "client_id": snoop["client_id"],
            "client_secret": snoop["client_secret"],
        },
    )
    assert response.status_code == 401 and response.json()["error"] == "invalid_client"
    assert "active" not in response.json() and "sub" not in response.text


async def test_a_resource_server_made_by_an_administrator_introspects(flow: Flow) -> None:
    victim = await flow.tokens(await flow.register())
    rs = await flow.integration("Partner API")
    body = await Lifecycle(flow).introspect(rs, victim["access_token"])
    assert body["active"] is True and body["token_type"] == "Bearer"
