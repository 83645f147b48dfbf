"""The inputs `make bench` writes through our own grant store are real: every minted
code exchanges, every minted refresh token refreshes, once. Without this the bench can
break with a change of the store and nothing in `make test` notices (it did once)."""

from __future__ import annotations

from urllib.parse import parse_qsl

from bench.inputs import mint, mint_public
from tests.support.oauth_client import CALLBACK

from .flow import BASE_URL, Flow


async def test_minted_codes_and_refresh_tokens_work_once(flow: Flow, database_url: str) -> None:
    user = await flow.user()
    public = await flow.register(redirect_uris=[CALLBACK])
    confidential = await flow.register(redirect_uris=[CALLBACK], token_endpoint_auth_method="client_secret_post")
    codes = await mint_public(database_url, public["client_id"], BASE_URL, "code", 3, email=user["email"])
    refreshes = await mint_public(database_url, public["client_id"], BASE_URL, "refresh", 3, email=user["email"])
    for body in codes:
        first = await flow.token(**dict(parse_qsl(body)))
        assert first.status_code == 200, first.text
        assert (await flow.token(**dict(parse_qsl(body)))).json()["error"] == "invalid_grant"  # once
    for refresh in refreshes:
        form = {"grant_type": "refresh_token", "refresh_token": refresh, "client_id": public["client_id"]}
        assert (await flow.token(**form)).status_code == 200
    confidential_codes, confidential_refreshes = await mint(
        database_url, confidential, BASE_URL, 2, email=user["email"]
    )
    for body in confidential_codes + confidential_refreshes:
        response = await flow.token(**dict(parse_qsl(body)))
        assert response.status_code == 200, response.text
