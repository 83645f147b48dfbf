"""A school's app policy (issue 39), where grants are made and where tokens are issued:
under *only apps the school approved* an unapproved app gets no grant and its consent
page offers to ask; under *apps may read* it gets no `:write` scope, and the page marks
those areas as needing the school's approval; a grant made before the policy narrowed
gets only what the policy allows at its next use (or ends, when that is nothing); an
administrator's integration is approved by construction; an approval covers one client
id, not a name; a role's cap still applies inside an approval."""

from __future__ import annotations

from typing import Any

from courseschool.authz.protocol.school_policy import NOT_APPROVED, Policy
from courseschool.common.scopes import SCOPES

from .flow import Flow, Lifecycle, csrf_of, pkce_pair, query_of

EVERY_SCOPE = " ".join(s.name for s in SCOPES)


def _stores(flow: Flow) -> Any:
    return flow.client.app.state.authz.account_pages  # type: ignore[attr-defined]


async def set_policy(flow: Flow, owner: dict[str, str], policy: Policy) -> None:
    await _stores(flow).school_apps.set_policy(
        owner["school_id"], policy, by=owner["id"], now=_stores(flow).clock.now()
    )


async def approve(flow: Flow, owner: dict[str, str], client_id: str, scope: str | None = None) -> None:
    stores = _stores(flow)
    await stores.school_apps.approve(
        owner["school_id"],
        client_id,
        client_name=None,
        scope=scope,
        by=owner["id"],
        role="owner",
        now=stores.clock.now(),
    )


async def at_consent(flow: Flow, reg: dict[str, Any], user: dict[str, str], scope: str) -> tuple[str, str, str]:
    """The person signed in at the app's consent page: (interaction, the page, verifier)."""
    flow.client.cookies.clear()
    verifier, challenge = pkce_pair()
    start = await flow.start(flow.authorize_params(reg, challenge, scope=scope))
    interaction = start.headers["location"]
    await flow.login(interaction, user)
    page = await flow.client.get(interaction)
    assert page.status_code == 200
    return interaction, page.text, verifier


async def test_only_approved_apps_an_unapproved_app_gets_no_grant(flow: Flow) -> None:
    school = await flow.school("strict")
    owner, student = await flow.user("owner", school=school), await flow.user("student", school=school)
    await set_policy(flow, owner, "approved_only")
    reg = await flow.register(client_name="Homework Helper")
    interaction, page, _ = await at_consent(flow, reg, student, "openid account:read")
    assert "This app needs your school" in page
    assert f'action="{interaction}/ask"' in page and 'value="approve"' not in page
    done = await flow.client.post(f"{interaction}/consent", data={"csrf": csrf_of(page), "decision": "approve"})
    callback = query_of(done.headers["location"])
    assert callback["error"] == "access_denied" and callback["error_description"] == NOT_APPROVED
    assert await flow.count("authz_grants") == 0


async def test_an_approval_covers_its_registration_not_another_with_its_name(flow: Flow) -> None:
    school = await flow.school("strict")
    owner, student = await flow.user("owner", school=school), await flow.user("student", school=school)
    await set_policy(flow, owner, "approved_only")
    real = await flow.register(client_name="Homework Helper")
    await approve(flow, owner, real["client_id"])
    tokens = await flow.tokens(real, student, scope="openid account:read")
    assert tokens["scope"] == "openid account:read"
    forged = await flow.register(client_name="Homework Helper")  # anyone may register the same name
    callback, _, _ = await flow.authorize(forged, student, scope="openid account:read")
    assert callback["error"] == "access_denied" and callback["error_description"] == NOT_APPROVED


async def test_apps_may_read_every_scope_asked_yields_reads_and_the_page_marks_changes(flow: Flow) -> None:
    school = await flow.school("readers")
    owner, lecturer = await flow.user("owner", school=school), await flow.user("lecturer", school=school)
    await set_policy(flow, owner, "read_only")
    reg = await flow.register(client_name="Agent")
    interaction, page, verifier = await at_consent(flow, reg, lecturer, EVERY_SCOPE)
    assert "approval (4)</h2>" in page
    done = await flow.client.post(f"{interaction}/consent", data={"csrf": csrf_of(page), "decision": "approve"})
    code = query_of(done.headers["location"])["code"]
    tokens = (await flow.exchange(reg, code, verifier)).json()
    assert "courses:read" in tokens["scope"].split()
    assert not [s for s in tokens["scope"].split() if s.endswith(":write")]
    # Approved with changes to courses only: the lecturer's role still caps the rest.
    await approve(flow, owner, reg["client_id"], "courses:read courses:write events:write orders:write")
    more = await flow.tokens(reg, lecturer, scope=EVERY_SCOPE)
    writes = {s for s in more["scope"].split() if s.endswith(":write")}
    assert writes == {"courses:write", "events:write"}  # orders:write: beyond a lecturer's role


async def test_a_narrower_policy_holds_at_the_next_refresh(flow: Flow) -> None:
    school = await flow.school("later")
    owner, lecturer = await flow.user("owner", school=school), await flow.user("lecturer", school=school)
    reg = await flow.register(client_name="Early Agent", grant_types=["authorization_code", "refresh_token"])
    tokens = await flow.tokens(reg, lecturer, scope="openid courses:read courses:write")
    life = Lifecycle(flow)
    await set_policy(flow, owner, "read_only")
    read = await life.refresh(reg, tokens["refresh_token"])
    assert read.status_code == 200 and read.json()["scope"] == "openid courses:read"
    await set_policy(flow, owner, "approved_only")
    refused = await life.refresh(reg, read.json()["refresh_token"])
    assert refused.status_code == 400
    assert refused.json() == {"error": "invalid_grant", "error_description": NOT_APPROVED}
    reason = await flow.pool.fetchval("SELECT revoke_reason FROM authz_grants WHERE client_id = $1", reg["client_id"])
    assert reason == "school_policy"


async def test_the_code_exchange_holds_a_policy_set_while_the_person_decided(flow: Flow) -> None:
    school = await flow.school("midway")
    owner, student = await flow.user("owner", school=school), await flow.user("student", school=school)
    reg = await flow.register(client_name="Midway Agent")
    callback, verifier, _ = await flow.authorize(reg, student, scope="openid account:read")
    await set_policy(flow, owner, "approved_only")
    refused = await flow.exchange(reg, callback["code"], verifier)
    assert refused.status_code == 400 and refused.json()["error_description"] == NOT_APPROVED


async def test_an_integration_is_approved_by_construction(flow: Flow) -> None:
    school = await flow.school("strict")
    owner, student = await flow.user("owner", school=school), await flow.user("student", school=school)
    await set_policy(flow, owner, "approved_only")
    made = await flow.integration("Gradebook", scope="openid account:read")
    tokens = await flow.tokens(made, student, scope="openid account:read")
    assert tokens["scope"] == "openid account:read"


async def test_the_decision_page_says_the_school_has_not_approved_the_app(flow: Flow) -> None:
    school = await flow.school("strict")
    owner, student = await flow.user("owner", school=school), await flow.user("student", school=school)
    await set_policy(flow, owner, "approved_only")
    reg = await flow.register(client_name="Homework Helper")
    flow.client.cookies.clear()
    _, challenge = pkce_pair()
    start = await flow.start(flow.authorize_params(reg, challenge, scope="openid account:read", decision_page="true"))
    interaction = start.headers["location"]
    await flow.login(interaction, student)
    page = (await flow.client.get(interaction)).text
    done = await flow.client.post(f"{interaction}/consent", data={"csrf": csrf_of(page), "decision": "deny"})
    assert done.headers["location"] == f"{interaction}/done"
    decided = await flow.client.get(f"{interaction}/done")
    assert "Your school has not approved" in decided.text and "You denied" not in decided.text
