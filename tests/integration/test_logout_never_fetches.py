"""/oauth/logout is anonymous, so it resolves only clients already stored: it never
fetches a Client ID Metadata Document (1,300 requests from one address used to fetch
1,300 documents and write 1,300 cache keys), and an unknown client gets no redirect.
It is rate-limited per address like /oauth/authorize (RATE_LOGOUT_PER_IP).

Where a sign-out may send the browser (OpenID RP-Initiated Logout 1.0 §3; the authz
README and docs/design.md): to a `post_logout_redirect_uri` registered for a stored
client named by an `id_token_hint` this server signed, and only after the signed-in
person confirmed. Without a session nothing redirects: the signed-out page offers the
way back as a link (it used to 303 straight to any registered loopback path, any port,
with the caller's `state`, for anyone who named a client_id)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import httpx
import msgspec
import pytest

from courseschool.authz.app import create_app

from ..support.tls import HttpsServer
from .cimd import publish
from .conftest import serve
from .flow import BASE_URL, REDIRECT_URI, Flow

BACK = REDIRECT_URI.replace("53682", "61234")  # a loopback URI's port may differ (RFC 8252 §7.3)


async def _cimd_cache_keys(flow: Flow) -> int:
    return len([k async for k in flow.redis.scan_iter(match="*cimd*")])


async def test_logout_never_fetches_a_metadata_document(cimd_flow: Flow, site: tuple[HttpsServer, object]) -> None:
    server, _ = site
    url = publish(server, "/logout-client.json")
    for params in (
        {"client_id": url},
        {"client_id": url, "state": "s"},
        {"client_id": url, "post_logout_redirect_uri": "http://127.0.0.1:53682/callback"},
    ):
        for method in ("GET", "POST"):
            answer = await cimd_flow.client.request(
                method, "/oauth/logout", **({"params": params} if method == "GET" else {"data": params})
            )
            assert answer.status_code in (200, 400), (method, params, answer.text)
            assert "location" not in answer.headers and "text/html" in answer.headers["content-type"]
            assert "Agent Smith" not in answer.text  # the document's name is never learnt
    assert server.hits.get("/logout-client.json", 0) == 0
    assert await _cimd_cache_keys(cimd_flow) == 0
    assert await cimd_flow.count("authz_clients") == 0


async def test_logout_names_an_unknown_client_nowhere_and_sends_nobody_back(flow: Flow) -> None:
    for client_id in ("https://app.example/client.json", "no-such-client"):
        gone = await flow.client.get("/oauth/logout", params={"client_id": client_id, "state": "x"})
        assert gone.status_code == 200 and "You are signed out" in gone.text
        assert "location" not in gone.headers and "Go back to the app" not in gone.text


async def _signed_in(flow: Flow) -> tuple[dict, dict]:
    reg = await flow.register()
    return reg, await flow.tokens(reg, await flow.user("owner"))


async def test_logout_without_a_session_never_redirects(flow: Flow) -> None:
    _, tokens = await _signed_in(flow)
    flow.client.cookies.clear()  # a browser with no session here, sent by anyone's link
    wanted = {"id_token_hint": tokens["id_token"], "post_logout_redirect_uri": BACK, "state": "s-1"}
    for method in ("GET", "POST"):
        for params in (wanted, {**wanted, "csrf": "0" * 64}):  # a forged confirmation too
            kwargs = {"params": params} if method == "GET" else {"data": params}
            gone = await flow.client.request(method, "/oauth/logout", **kwargs)
            assert gone.status_code == 200 and "location" not in gone.headers, (method, params)
            assert "You are signed out" in gone.text
            link = re.search(r'<a href="([^"]+)">Go back to the app', gone.text)
            assert link is not None and link.group(1) == f"{BACK}?state=s-1"


async def test_logout_redirects_only_with_an_id_token_hint_for_the_client(flow: Flow) -> None:
    reg, tokens = await _signed_in(flow)
    other = await flow.register()
    for params in (
        {"client_id": reg["client_id"], "post_logout_redirect_uri": REDIRECT_URI, "state": "x"},  # no hint
        {"post_logout_redirect_uri": REDIRECT_URI},
        {
            "id_token_hint": tokens["id_token"],
            "client_id": other["client_id"],
            "post_logout_redirect_uri": REDIRECT_URI,
        },
    ):
        refused = await flow.client.get("/oauth/logout", params=params)
        assert refused.status_code == 400 and "location" not in refused.headers, params
        assert "text/html" in refused.headers["content-type"]
    # With the hint, the signed-in person is asked, and only their confirmation sends them back.
    page = await flow.client.get(
        "/oauth/logout", params={"id_token_hint": tokens["id_token"], "post_logout_redirect_uri": BACK, "state": "s"}
    )
    assert page.status_code == 200 and "Sign out of Course School?" in page.text
    form = dict(re.findall(r'name="(\w+)" value="([^"]*)"', page.text))
    assert form["id_token_hint"] == tokens["id_token"]
    done = await flow.client.post("/oauth/logout", data=form)
    assert done.status_code == 303 and done.headers["location"] == f"{BACK}?state=s"


@pytest.fixture
async def limited(authz_settings, clean_db, redis_client, clock) -> AsyncIterator[Flow]:
    settings = type(authz_settings)(**{**msgspec.structs.asdict(authz_settings), "rate_logout_per_ip": "3/3600"})
    async with serve(create_app(settings, clock=clock)) as client:
        yield Flow(client, clean_db, redis_client)


async def test_logout_is_rate_limited_per_address_with_a_page(limited: Flow) -> None:
    answers = [
        await limited.client.get("/oauth/logout", params={"client_id": f"https://app.example/{n}.json"})
        for n in range(2)
    ]
    answers.append(await limited.client.post("/oauth/logout", data={"csrf": "x"}))
    answers.append(await limited.client.get("/oauth/logout"))
    assert [a.status_code for a in answers] == [200, 200, 200, 429]
    refused = answers[-1]
    assert refused.headers["content-type"].startswith("text/html")
    assert 0 < int(refused.headers["retry-after"]) <= 3600
    other = httpx.ASGITransport(app=limited.client.app, client=("192.0.2.7", 4000))
    async with httpx.AsyncClient(transport=other, base_url=BASE_URL) as elsewhere:
        assert (await elsewhere.get("/oauth/logout")).status_code == 200  # another address, its own allowance


@pytest.mark.parametrize("value", ["120", "0/60", "x/y"])
def test_a_malformed_logout_rate_is_refused(authz_settings, value: str) -> None:
    with pytest.raises(ValueError, match="RATE_LOGOUT_PER_IP"):
        type(authz_settings)(**{**msgspec.structs.asdict(authz_settings), "rate_logout_per_ip": value})
