"""Review finding 8: a person could ask their school to approve any number of apps (one
pending request per app), and every request e-mails each owner and admin. Now one
person makes at most RATE_ACCESS_REQUEST_PER_PERSON requests (5 an hour by default),
whatever the apps: beyond it the answer is 429 and nothing is recorded or sent; other
people at the school may still ask."""

from __future__ import annotations

from ..support.smtp import SmtpRelay
from .flow import Flow
from .test_school_app_approvals import _mail, ask, consent_page, mailed  # noqa: F401
from .test_school_app_policy import set_policy

ALLOWED = 5  # RATE_ACCESS_REQUEST_PER_PERSON's default: 5/3600


async def _asks(flow: Flow, person: dict[str, str], name: str) -> int:
    reg = await flow.register(client_name=name)
    interaction, page, _ = await consent_page(flow, reg, person, "openid account:read")
    return (await ask(flow, interaction, page)).status_code


async def test_a_person_may_ask_a_few_times_an_hour_whatever_the_apps(mailed: tuple[Flow, SmtpRelay]) -> None:  # noqa: F811
    flow, relay = mailed
    school = await flow.school("strict")
    owner = await flow.user("owner", school=school)
    student, other = await flow.user("student", school=school), await flow.user("student", school=school)
    await set_policy(flow, owner, "approved_only")
    for n in range(ALLOWED):
        assert await _asks(flow, student, f"Helper {n}") == 303
    assert len(await _mail(flow, relay)) == ALLOWED  # the one owner, once per request
    assert await _asks(flow, student, "One Too Many") == 429
    assert await flow.count("authz_app_access_requests") == ALLOWED
    assert await _mail(flow, relay) == []
    assert await _asks(flow, other, "Another Person's App") == 303
    assert await flow.count("authz_app_access_requests") == ALLOWED + 1
    assert [to for to, _ in await _mail(flow, relay)] == [owner["email"]]
