"""Issue 40: a person's first second factor comes with ten recovery codes, shown once,
whether it is an authenticator app or a passkey (added on the security page here; set up
where the school requires two steps, test_passkey_meets_the_two_step_requirement.py).
A passkey added later leaves the codes as they are."""

from __future__ import annotations

from typing import Any

from ..support.soft_authenticator import SoftAuthenticator
from .flow import Flow
from .passkeys import FIRST_ADDED, ORIGIN, add_passkey, sign_in_with_password
from .test_two_step_sign_in import RECOVERY


async def codes_of(flow: Flow, user: dict[str, str]) -> list[bytes]:
    """The digests of the person's unused recovery codes."""
    rows = await flow.pool.fetch(
        "SELECT code_hash FROM authz_recovery_codes WHERE user_id = $1::uuid AND used_at IS NULL ORDER BY code_hash",
        user["id"],
    )
    return [r["code_hash"] for r in rows]


async def test_a_first_passkey_on_the_security_page_comes_with_recovery_codes(here: Flow) -> None:
    user = await here.user()
    await sign_in_with_password(here, user)
    refused = await add_passkey(here, SoftAuthenticator(ORIGIN), origin="http://evil.localhost:8000")
    assert refused.headers["location"] == "/oauth/security/passkeys/new?failed=1"
    assert await codes_of(here, user) == []  # nothing added, no codes
    added = await add_passkey(here, SoftAuthenticator(ORIGIN))
    assert added.headers["location"] == FIRST_ADDED
    shown = await here.client.get(FIRST_ADDED)
    codes: list[Any] = RECOVERY.findall(shown.text)
    assert len(codes) == 10 and "Your passkey was added" in shown.text and "shown only now" in shown.text
    kept = await codes_of(here, user)
    assert len(kept) == 10
    once = await here.client.get(FIRST_ADDED)
    assert once.status_code == 303 and once.headers["location"] == "/oauth/security"
    security = (await here.client.get("/oauth/security")).text
    assert "10 of 10 left" in security and "None yet" not in security
    second = await add_passkey(here, SoftAuthenticator(ORIGIN), name="Phone")  # not the first: the codes stay
    assert second.headers["location"] == "/oauth/security?done=passkey-added"
    assert await codes_of(here, user) == kept
