"""What a password reset ends, whoever resets it (an administrator, `admin users
reset-password`; the person, by an e-mailed link): whoever held the old password loses
what it gave them, the person's sign-in sessions and their grants, ended now (recorded
in Postgres, published to the resource servers at once), and an authenticator app they
began to set up and never confirmed (its secret may be known to whoever began it). And the rule every new
password follows."""

from __future__ import annotations

from typing import Protocol

from courseschool.common.errors import InvalidRequestError

from ..storage.admin import PgAdminStore
from ..storage.revocations import PgRedisRevoker
from ..storage.second_factors import PgSecondFactorStore

PASSWORD_RULE = "a password must be 10 to 1024 characters"


class Resetting(Protocol):
    """What ending a person's access reads (Administration, AccountPages)."""

    @property
    def admin_store(self) -> PgAdminStore: ...
    @property
    def revoker(self) -> PgRedisRevoker: ...
    @property
    def second_factors(self) -> PgSecondFactorStore: ...


def check_password_rule(password: str) -> None:
    if not 10 <= len(password) <= 1024:
        raise InvalidRequestError(PASSWORD_RULE)


async def end_sessions_and_grants(c: Resetting, user_id: str, *, reason: str = "password_reset") -> int:
    """End every sign-in session and every live grant of the person, and forget the
    authenticator app they had not finished setting up; how many grants ended."""
    await c.admin_store.end_sessions(user_id)
    await c.second_factors.drop_unconfirmed_totp(user_id)
    grants = list(await c.admin_store.live_grants_of_user(user_id))
    for grant_id in grants:
        await c.revoker.revoke_grant(grant_id, reason=reason)
    return len(grants)
