"""A person's passkeys on their security page: add one (WebAuthn registration, §7.1),
name it, list them, remove one. Each change is an event and an e-mail to the person. A
person's first second factor comes with recovery codes, shown once, as a first
authenticator app's do. Signing in with one is `passkey_sign_in.py`'s; setting one up
at a sign-in the school requires two steps of, `passkey_enrolment.py`'s."""

from __future__ import annotations

import uuid

import msgspec

from courseschool.common.errors import InvalidRequestError, NotFoundError
from courseschool.common.logging import audit

from ..families import AccountPages, SignInPages
from ..protocol.models import User
from ..protocol.passkeys import (
    Refused,
    RelyingParty,
    Unavailable,
    clean_name,
    registration_options,
    relying_party,
    verify_registration,
)
from ..protocol.second_factors import new_recovery_codes
from ..storage.passkeys import Passkey
from .account_changes import tell

REGISTER = "register"  # the challenge's purpose
MAX_PASSKEYS = 10
DEFAULT_NAME = "Passkey"
NOT_HERE = "passkeys are not available at this server's address"
NOT_HERE_ADVICE = "Passkeys are not available on this server: see your security page for why."
NO_SUCH = "you have no such passkey"
NOT_SAVED = (
    "The passkey was not saved: your browser or device did not finish, or the page was open too long. Try again."
)


class Added(msgspec.Struct, frozen=True, kw_only=True):
    """A passkey kept; `recovery_codes`: new ones to show once, when it is the person's
    first second factor (None otherwise: the codes they have stay)."""

    recovery_codes: list[str] | None


class PasskeysView(msgspec.Struct, frozen=True, kw_only=True):
    passkeys: list[Passkey]
    unavailable: Unavailable | None  # why passkeys cannot work at this server's address
    host: str  # the address's host, named when passkeys are unavailable
    full: bool  # MAX_PASSKEYS reached


def here(c: AccountPages) -> RelyingParty:
    rp = relying_party(c.settings.base_url)
    if not isinstance(rp, RelyingParty):
        raise InvalidRequestError(NOT_HERE, advice=NOT_HERE_ADVICE)
    return rp


async def passkeys_view(c: AccountPages, user: User) -> PasskeysView:
    rp = relying_party(c.settings.base_url)
    keys = await c.passkeys.keys.of_user(user.id)
    host = rp.id if isinstance(rp, RelyingParty) else c.settings.base_url.split("://", 1)[1]
    return PasskeysView(
        passkeys=keys,
        unavailable=None if isinstance(rp, RelyingParty) else rp,
        host=host,
        full=len(keys) >= MAX_PASSKEYS,
    )


async def begin_registration(c: AccountPages, user: User, session_id: str) -> str:
    """The options of a new passkey (JSON for our script); its challenge kept for this
    browser's session only, once, a few minutes."""
    rp = here(c)
    keys = await c.passkeys.keys.of_user(user.id)
    if len(keys) >= MAX_PASSKEYS:
        raise InvalidRequestError(
            f"a person may keep {MAX_PASSKEYS} passkeys", advice="Remove a passkey you no longer use first."
        )
    challenge = await c.passkeys.challenges.issue(REGISTER, session_id)
    return registration_options(
        rp,
        user_id=user.id,
        email=user.email,
        name=user.name,
        exclude=[k.credential_id for k in keys],
        challenge=challenge,
    )


async def add_passkey(
    c: AccountPages, user: User, session_id: str, name: str, credential: str, *, ip: str, agent: str | None
) -> Added | None:
    """The browser's answer, verified against the challenge of this session (taken: it
    works once), then kept under the name given. None: nothing was added."""
    rp = here(c)
    challenge = await c.passkeys.challenges.take(REGISTER, session_id)
    added = await register_passkey(c, user, rp, challenge, name, credential, ip=ip)
    if added is not None:
        await tell(c, user, "passkey_added", ip=ip, agent=agent)
    return added


async def register_passkey(
    c: AccountPages | SignInPages,
    user: User,
    rp: RelyingParty | Unavailable,
    challenge: bytes | None,
    name: str,
    credential: str,
    *,
    ip: str,
) -> Added | None:
    """A new passkey of `user` (§7.1), answering `challenge` (already taken: it works
    once): kept under `name`, an event; and new recovery codes if it is their first second
    factor. None: refused (an event says why), nothing changed."""
    if not isinstance(rp, RelyingParty):
        audit("passkey_refused", actor="user", subject=user.id, ip=ip, reason="passkeys are not available here")
        return None
    if challenge is None:
        audit("passkey_refused", actor="user", subject=user.id, ip=ip, reason="no challenge for this browser")
        return None
    registered = verify_registration(rp, credential, challenge=challenge)
    if isinstance(registered, Refused):
        audit("passkey_refused", actor="user", subject=user.id, ip=ip, reason=registered.reason)
        return None
    first = not (await c.second_factors.factors(user.id)).any
    now = c.clock.now()
    passkey_id = await c.passkeys.keys.add(
        user.id,
        credential_id=registered.credential_id,
        public_key=registered.public_key,
        sign_count=registered.sign_count,
        rp_id=rp.id,
        name=clean_name(name) or DEFAULT_NAME,
        backed_up=registered.backed_up,
        now=now,
    )
    if passkey_id is None:
        audit("passkey_refused", actor="user", subject=user.id, ip=ip, reason="registered already")
        return None
    audit("second_factor_added", actor="user", subject=user.id, factor="passkey", passkey_id=passkey_id, ip=ip)
    codes = new_recovery_codes() if first else None
    if codes is not None:
        await c.second_factors.replace_recovery_codes(user.id, codes, now=now)
    return Added(recovery_codes=codes)


async def passkey_of(c: AccountPages, user: User, passkey_id: str) -> Passkey:
    """One of the person's own passkeys; 404 for any other id."""
    for key in await c.passkeys.keys.of_user(user.id) if _is_id(passkey_id) else []:
        if key.id == passkey_id:
            return key
    raise NotFoundError(NO_SUCH, advice="Go back to your security page: the passkey may have been removed.")


async def rename_passkey(
    c: AccountPages, user: User, passkey_id: str, name: str, *, ip: str, agent: str | None
) -> None:
    cleaned = clean_name(name)
    if not cleaned:
        raise InvalidRequestError("a passkey needs a name", advice="Go back and type a name for the passkey.")
    if not _is_id(passkey_id) or not await c.passkeys.keys.rename(user.id, passkey_id, cleaned):
        raise NotFoundError(NO_SUCH, advice="Go back to your security page: the passkey may have been removed.")
    audit("passkey_renamed", actor="user", subject=user.id, passkey_id=passkey_id, ip=ip)
    await tell(c, user, "passkey_renamed", ip=ip, agent=agent)


async def remove_passkey(c: AccountPages, user: User, passkey_id: str, *, ip: str, agent: str | None) -> None:
    if not _is_id(passkey_id) or await c.passkeys.keys.remove(user.id, passkey_id) is None:
        raise NotFoundError(NO_SUCH, advice="Go back to your security page: the passkey may have been removed.")
    audit("second_factor_removed", actor="user", subject=user.id, factor="passkey", passkey_id=passkey_id, ip=ip)
    await tell(c, user, "passkey_removed", ip=ip, agent=agent)


def _is_id(value: str) -> bool:
    try:
        return str(uuid.UUID(value)) == value
    except ValueError:
        return False
