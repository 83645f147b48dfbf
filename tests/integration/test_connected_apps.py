"""The connected-apps page (issue #13, per sign-in since issue 24): one card per app, with
who vouches for the app's name and its kind; under it every sign-in (a grant the person
holds, one per approval whose code was exchanged) with its scopes in plain words, when it
was approved and last used, and the address and browser it was approved from. Only
grants that still hold access are listed, and only the person's own."""

from __future__ import annotations

import uuid

from courseschool.authz.protocol.models import Client
from courseschool.authz.storage.clients import PgClientStore
from courseschool.authz.storage.grants import PgGrantStore
from courseschool.authz.web.connected_apps import moment

from .apps_page import FIREFOX_LINUX, approve, browser, cards, page, rows, text
from .flow import PASSWORD, Flow, Lifecycle, pkce_pair, query_of


async def test_each_registration_is_an_app_of_its_own(flow: Flow, clock) -> None:
    user = await flow.user()
    async with browser(flow, "198.51.100.23", FIREFOX_LINUX) as home:
        first = await approve(home, user, client_name="Course Sync")
        clock.advance(120)
        async with browser(flow, "203.0.113.9") as office:  # installed again elsewhere: a new registration
            second = await approve(office, user, client_name="Course Sync")
        response, _ = await page(home)
    listed = cards(response.text)
    assert [list(card) for card in listed] == [[second["grant_id"]], [first["grant_id"]]]  # most recently used first
    for grant, address, agent in (
        (first, "198.51.100.23", "Firefox on Linux"),
        (second, "203.0.113.9", "python-httpx"),
    ):
        row = text(rows(response.text)[grant["grant_id"]])
        assert row.startswith("Course Sync Self-declared name An app on a computer that registered itself")
        assert f"{agent} Approved " in row and f"From address {address}" in row
        assert "Your identity Know who you are and see your name and your email address" in row
        assert "Courses See " in row


async def test_a_row_shows_when_it_was_approved_and_last_used(flow: Flow, clock) -> None:
    user = await flow.user()
    approved_at = clock.now()
    app = await approve(flow, user)
    row = text(rows((await page(flow))[0].text)[app["grant_id"]])
    assert f"Approved {moment(approved_at).text}" in row
    assert f"Last used {moment(approved_at).text}" in row  # the code was exchanged at once
    assert moment(0).text == "1 Jan 1970, 00:00 UTC"

    clock.advance(3 * 86400 + 3600)
    refreshed = await Lifecycle(flow).refresh(app["reg"], app["tokens"]["refresh_token"])
    assert refreshed.status_code == 200
    async with browser(flow) as later:  # the first sign-in session has ended by now
        await approve(later, user)
        row = text(rows((await page(later))[0].text)[app["grant_id"]])
    assert f"Approved {moment(approved_at).text}" in row
    assert f"Last used {moment(approved_at + 3 * 86400 + 3600).text}" in row


async def test_an_approval_whose_code_was_never_exchanged_is_not_listed(flow: Flow, clock) -> None:
    user = await flow.user()
    reg = await flow.register(client_name="Slow CLI")
    callback, verifier, _ = await flow.authorize(reg, user)  # approved; the code not exchanged yet
    response, _ = await page(flow)
    assert rows(response.text) == {} and "Slow CLI" not in response.text
    assert "No app has access to your school's data through your account." in response.text
    assert (await flow.exchange(reg, callback["code"], verifier)).status_code == 200
    assert "Slow CLI" in (await page(flow))[0].text  # exchanged: now it holds access


async def test_a_grant_whose_tokens_all_expired_is_not_listed(flow: Flow, clock) -> None:
    user = await flow.user()
    app = await approve(flow, user)
    clock.advance(14 * 86400 + 1)  # the refresh token idled out, the access token long expired
    async with browser(flow) as later:
        other = await approve(later, user)
        assert list(rows((await page(later))[0].text)) == [other["grant_id"]]
    assert (await Lifecycle(flow).refresh(app["reg"], app["tokens"]["refresh_token"])).status_code == 400


async def test_kinds_an_integration_is_verified_a_metadata_document_app_shows_its_site(flow: Flow) -> None:
    user = await flow.user()
    integration = await flow.integration("Partner CRM", scope="openid courses:read")
    made = await approve(flow, user, integration, scope="openid courses:read")
    document_app = await _document_client_grant(flow, user)
    listed = rows((await page(flow))[0].text)
    assert text(listed[made["grant_id"]]).startswith(
        "Partner CRM Verified An integration your school's administrator set up. "
        "Its access goes to an app on this computer (port "
    )
    assert text(listed[document_app]).startswith(
        "Notes Helper Self-declared name An app that describes itself on notes.example"
    )


async def _document_client_grant(flow: Flow, user: dict[str, str]) -> str:
    """A client known by its Client ID Metadata Document, as recorded on first use, and
    an approval of it whose code was exchanged."""
    url = "https://notes.example/oauth/client.json"
    client = Client(
        client_id=url,
        client_name="Notes Helper",
        redirect_uris=["http://127.0.0.1:7777/cb"],
        token_endpoint_auth_method="none",
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        application_type="native",
        scope=None,
        id_token_signed_response_alg="RS256",
        secret_hash=None,
        is_integration=False,
        client_id_issued_at=0,
        verified_origin="notes.example",
    )
    await PgClientStore(flow.pool).record_document_client(client)
    now = flow.client.app.state.authz.clock.now()  # type: ignore[attr-defined]
    code = uuid.uuid4().hex
    grants = PgGrantStore(flow.pool)
    grant = await grants.create_with_code(
        client_id=url,
        user_id=user["id"],
        school_id=user["school_id"],
        scope="openid courses:read",
        resource="http://127.0.0.1:8000",
        auth_time=now,
        code=code,
        redirect_uri="http://127.0.0.1:7777/cb",
        code_challenge="x" * 43,
        nonce=None,
        code_expires_at=now + 60,
        now=now,
        created_from="192.0.2.1",
    )
    ended = await grants.redeem_code(
        code=code,
        refresh_token=uuid.uuid4().hex,
        scope=grant.scope,
        resource=grant.resource,
        now=now,
        grants_per_app=10,
    )
    assert ended == []
    return grant.id


async def test_a_person_never_sees_another_persons_grants(flow: Flow) -> None:
    alice = await flow.user(email="alice@example.test")
    bob = await flow.user(email="bob@example.test")
    alices = await approve(flow, alice)
    async with browser(flow) as bobs_browser:
        bobs = await approve(bobs_browser, bob)
        bob_sees = (await page(bobs_browser))[0].text
    alice_sees = (await page(flow))[0].text
    assert list(rows(alice_sees)) == [alices["grant_id"]] and "alice@example.test" in alice_sees
    assert list(rows(bob_sees)) == [bobs["grant_id"]] and "alice@example.test" not in bob_sees


async def test_the_empty_page_says_no_app_has_access(flow: Flow) -> None:
    user = await flow.user()
    async with browser(flow) as fresh:
        signed_in = await fresh.client.post("/oauth/signin", data={})  # no page cookie: refused
        assert signed_in.status_code == 403
        page_ = await fresh.client.get("/oauth/signin")
        csrf = page_.text.split('name="csrf" value="')[1].split('"')[0]
        done = await fresh.client.post(
            "/oauth/signin", data={"csrf": csrf, "email": user["email"], "password": PASSWORD}
        )
        assert done.status_code == 303 and done.headers["location"] == "/oauth/apps"
        response, _ = await page(fresh)
    assert rows(response.text) == {}
    assert "No app has access to your school's data through your account." in response.text
    assert "Remove all" not in response.text


async def test_the_address_is_recorded_where_remembered_consent_creates_the_grant(flow: Flow) -> None:
    integration = await flow.integration("Partner CRM", scope="openid courses:read")
    user = await flow.user()
    await approve(flow, user, integration, scope="openid courses:read")  # consent remembered
    async with browser(flow, "192.0.2.77") as elsewhere:
        callback, _, _ = await elsewhere.authorize(integration, user, scope="openid courses:read")
        _, challenge = pkce_pair()
        silent = await elsewhere.start(
            elsewhere.authorize_params(integration, challenge, scope="openid courses:read", prompt="none")
        )
    assert "code" in query_of(silent.headers["location"])
    addresses = await flow.pool.fetch(
        "SELECT created_from FROM authz_grants WHERE client_id = $1 ORDER BY created_at, created_from",
        integration["client_id"],
    )
    assert sorted(r["created_from"] for r in addresses) == ["127.0.0.1", "192.0.2.77", "192.0.2.77"]
    assert callback["code"]


async def _last_used(flow: Flow, grant_id: str) -> int | None:
    return await flow.pool.fetchval(
        "SELECT extract(epoch FROM last_used_at)::bigint FROM authz_grants WHERE id = $1::uuid", grant_id
    )


async def test_last_used_moves_only_when_a_token_is_issued(flow: Flow, clock) -> None:
    """Set by the code exchange and by every rotation, in their own statements; a replay
    within the grace window, a refused refresh and a revoked grant leave it alone."""
    user = await flow.user()
    life = Lifecycle(flow)
    reg = await flow.register()
    callback, verifier, _ = await flow.authorize(reg, user)
    grant_id = await flow.pool.fetchval("SELECT id::text FROM authz_grants WHERE client_id = $1", reg["client_id"])
    assert await _last_used(flow, grant_id) is None
    clock.advance(5)
    tokens = (await flow.exchange(reg, callback["code"], verifier)).json()
    assert await _last_used(flow, grant_id) == clock.now()

    clock.advance(100)
    rotated = await life.refresh(reg, tokens["refresh_token"])
    assert rotated.status_code == 200 and await _last_used(flow, grant_id) == clock.now()
    used_at = clock.now()
    clock.advance(2)
    replayed = await life.refresh(reg, tokens["refresh_token"])  # a lost answer asked again: the same tokens
    assert replayed.json()["refresh_token"] == rotated.json()["refresh_token"]
    assert await _last_used(flow, grant_id) == used_at
    assert (await life.refresh(reg, "not-a-refresh-token")).status_code == 400
    assert await _last_used(flow, grant_id) == used_at

    await flow.client.app.state.authz.revoker.revoke_grant(grant_id, reason="revoked_by_user")  # type: ignore[attr-defined]
    clock.advance(5)
    assert (await life.refresh(reg, rotated.json()["refresh_token"])).status_code == 400
    assert await _last_used(flow, grant_id) == used_at
