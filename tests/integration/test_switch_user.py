""" "Not you? Sign out" on the consent page: the signed-in person signs out there, and the
same sign-in request goes back to the sign-in form for someone else."""

from __future__ import annotations

from .flow import Flow, pkce_pair, query_of


async def _consent_page(flow: Flow) -> tuple[str, str, dict]:
    reg = await flow.register()
    ann = await flow.user("owner")
    await flow.tokens(reg, ann)  # Ann is signed in in this browser
    _, challenge = pkce_pair()
    start = await flow.start(flow.authorize_params(reg, challenge))
    interaction = start.headers["location"]
    page, csrf = await flow.page(interaction)
    assert ann["email"] in page.text and 'value="approve"' in page.text  # straight to consent, as Ann
    return interaction, csrf, reg


async def test_not_you_signs_out_and_returns_to_the_sign_in_form(flow: Flow) -> None:
    interaction, csrf, _ = await _consent_page(flow)
    switched = await flow.client.post(f"{interaction}/switch", data={"csrf": csrf})
    assert switched.status_code == 303 and switched.headers["location"] == interaction
    assert await flow.count("authz_login_sessions WHERE ended_at IS NULL") == 0
    page, _ = await flow.page(interaction)
    assert 'name="password"' in page.text  # the sign-in form, for someone else
    bob = await flow.user("owner")
    await flow.login(interaction, bob)
    final = await flow.consent(interaction)
    assert "code" in query_of(final.headers["location"])
    page_as_bob = await flow.pool.fetchval(
        "SELECT count(*) FROM authz_grants g JOIN authz_users u ON u.id = g.user_id WHERE u.email = $1", bob["email"]
    )
    assert page_as_bob == 1


async def test_not_you_needs_the_pages_csrf_token(flow: Flow) -> None:
    interaction, _, _ = await _consent_page(flow)
    refused = await flow.client.post(f"{interaction}/switch", data={"csrf": "forged"})
    assert refused.status_code == 403
    assert await flow.count("authz_login_sessions WHERE ended_at IS NULL") == 1
