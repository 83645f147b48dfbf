"""Signing in with a passkey (WebAuthn authentication, §7.2): in place of the password,
any of the person's discoverable passkeys with user verification (the device and its PIN
or biometric: two factors, so no second step follows and the school's requirement is
met); or as the second step after the password, one of the person's own passkeys.

Each attempt counts as a password or a code does (endpoints/signin.py): the per-address
rate, the lockout of the address at the account (a passkey of nobody's counts at the
address), a `login_failed` or `second_factor_failed` event; a success is a
`login_succeeded` event naming the factor (`passkey`, `password+passkey`). Challenges are
the page's, bound to its browser (the interaction's cookie, or the sign-in page's) and
taken on the first answer."""

from __future__ import annotations

from courseschool.common.errors import InvalidRequestError
from courseschool.common.logging import audit
from courseschool.common.secrets import digest

from ..families import SignInPages
from ..protocol.models import User
from ..protocol.passkeys import (
    Asserted,
    Assertion,
    Refused,
    RelyingParty,
    authentication_options,
    parsed_assertion,
    relying_party,
    verify_assertion,
)
from ..storage.interactions import Interaction
from ..storage.passkeys import Passkey
from ..storage.second_step import SecondStep
from .interaction import EXPIRED, EXPIRED_ADVICE
from .interaction_second_step import login_enrol_passkey
from .signin import MAX_FAILURES, SignedIn, _account, _failed, _not_locked, _open_session, restart_reason, stale
from .waiting_step import step_person

SIGN_IN = "sign-in"  # the challenges' purposes
SECOND_STEP = "second-step"
PASSKEY_REFUSED = "That passkey did not sign you in. Try again, or sign in with your email and password."
PASSKEY_NOT_RIGHT = "That passkey was not accepted. Try it again, or type a code."


async def sign_in_options(c: SignInPages, binding: str) -> str | None:
    """The options of a sign-in with any passkey (JSON for our script), a new challenge
    kept for this browser; None: passkeys are not available at this address."""
    rp = relying_party(c.settings.base_url)
    if not isinstance(rp, RelyingParty):
        return None
    challenge = await c.passkeys.challenges.issue(SIGN_IN, binding)
    return authentication_options(rp, allow=None, challenge=challenge)


async def second_step_options(c: SignInPages, step: SecondStep, binding: str) -> str | None:
    """The options of the second step with one of the person's passkeys; None: they have
    none (or passkeys are not available here)."""
    rp = relying_party(c.settings.base_url)
    if not isinstance(rp, RelyingParty) or step.what != "verify" or await step_person(c, step) is None:
        return None
    keys = await c.passkeys.keys.of_user(step.user_id)
    if not keys:
        return None
    challenge = await c.passkeys.challenges.issue(SECOND_STEP, binding)
    return authentication_options(rp, allow=[k.credential_id for k in keys], challenge=challenge)


async def passkey_sign_in(
    c: SignInPages, binding: str | None, credential: str, *, ip: str, agent: str | None, client_id: str | None
) -> SignedIn | None:
    """A sign-in with a passkey alone; None: refused (an event says why, the lockout counts it)."""
    await c.limits.count("rate_login_per_ip", ip)
    rp = relying_party(c.settings.base_url)
    parsed = parsed_assertion(credential)
    key = None
    if isinstance(rp, RelyingParty) and not isinstance(parsed, Refused):
        key = await c.passkeys.keys.by_credential(parsed.raw_id, rp.id)
    user = await c.users.get(key.user_id) if key is not None else None
    # A passkey of nobody's counts at the address (and at a key of its own), not at an account.
    account = _account(user.email) if user is not None else digest(f"passkey:{credential[:200]}").hex()
    await _not_locked(c, account, ip, client_id)
    challenge = await c.passkeys.challenges.take(SIGN_IN, binding)
    outcome = _checked(rp, parsed, key, user, challenge, owner=None, user_verification=True)
    if isinstance(outcome, Asserted) and key is not None and user is not None:
        if await c.passkeys.keys.use(key.id, outcome.sign_count, backed_up=outcome.backed_up, now=c.clock.now()):
            return await _open_session(c, user, account, ip=ip, agent=agent, client_id=client_id, factor="passkey")
        outcome = Refused(reason="an assertion with this counter was accepted already")
    reason = outcome.reason if isinstance(outcome, Refused) else ""
    subject = user.id if user is not None else None
    audit("login_failed", actor="user", subject=subject, client_id=client_id, ip=ip, factor="passkey", reason=reason)
    await _failed(c, account, ip, subject)
    return None


async def passkey_second_step(
    c: SignInPages,
    step: SecondStep,
    binding: str | None,
    credential: str,
    *,
    ip: str,
    agent: str | None,
    client_id: str | None,
) -> SignedIn | None:
    """The second step with one of the person's own passkeys; None: refused (counted in
    `step.failures` and the lockout, as a wrong code is; a step that no longer stands, `stale`)."""
    await c.limits.count("rate_login_per_ip", ip)
    user = await step_person(c, step) if step.what == "verify" else None
    if user is None:
        stale(step)
        return None
    account = _account(user.email)
    await _not_locked(c, account, ip, client_id)
    rp = relying_party(c.settings.base_url)
    parsed = parsed_assertion(credential)
    key = None
    if isinstance(rp, RelyingParty) and not isinstance(parsed, Refused):
        key = await c.passkeys.keys.by_credential(parsed.raw_id, rp.id)
    challenge = await c.passkeys.challenges.take(SECOND_STEP, binding)
    outcome = _checked(rp, parsed, key, user, challenge, owner=user.id, user_verification=False)
    if isinstance(outcome, Asserted) and key is not None:
        if await c.passkeys.keys.use(key.id, outcome.sign_count, backed_up=outcome.backed_up, now=c.clock.now()):
            factor = "password+passkey"
            return await _open_session(c, user, account, ip=ip, agent=agent, client_id=client_id, factor=factor)
        outcome = Refused(reason="an assertion with this counter was accepted already")
    step.failures += 1
    reason = outcome.reason if isinstance(outcome, Refused) else ""
    audit(
        "second_factor_failed",
        actor="user",
        subject=user.id,
        client_id=client_id,
        ip=ip,
        factor="passkey",
        reason=reason,
    )
    await _failed(c, account, ip, user.id)
    return None


async def interaction_passkey(
    c: SignInPages,
    interaction: Interaction,
    binding: str | None,
    credential: str,
    *,
    ip: str,
    agent: str | None,
    name: str = "",
) -> str | None:
    """The interaction's sign-in with a passkey: in place of the password on its login
    page, or as its second step, or (named `name`) set up as the second factor the school
    requires. Signed in: the new session's id (the interaction bound to the person);
    otherwise the page says what happened."""
    if interaction.user_id is not None:
        raise InvalidRequestError(EXPIRED, advice=EXPIRED_ADVICE)
    step, client_id = interaction.second_step, interaction.request.client_id
    if step is not None and step.what == "enrol":
        return await login_enrol_passkey(c, interaction, binding, name, credential, ip=ip, agent=agent)
    if step is None:
        signed_in = await passkey_sign_in(c, binding, credential, ip=ip, agent=agent, client_id=client_id)
    else:
        signed_in = await passkey_second_step(c, step, binding, credential, ip=ip, agent=agent, client_id=client_id)
    if signed_in is not None:
        interaction.bind(user_id=signed_in.user_id, auth_time=signed_in.auth_time, session_id=signed_in.session_id)
    elif step is not None and step.failures >= MAX_FAILURES:
        interaction.second_step, interaction.login_error = None, restart_reason(step)
    else:
        interaction.login_error = PASSKEY_REFUSED if step is None else PASSKEY_NOT_RIGHT
    await c.interactions.save(interaction)
    return signed_in.session_id if signed_in is not None else None


def _checked(
    rp: RelyingParty | str,
    parsed: Assertion | Refused,
    key: Passkey | None,
    user: User | None,
    challenge: bytes | None,
    *,
    owner: str | None,
    user_verification: bool,
) -> Asserted | Refused:
    """Each reason to refuse, in order, then the library's verification. `owner`: whose
    passkey it must be (the second step's person); None: whoever's it is (a sign-in
    without a password), as long as the assertion names that person."""
    if not isinstance(rp, RelyingParty):
        return Refused(reason="passkeys are not available at this address")
    if isinstance(parsed, Refused):
        return parsed
    if challenge is None:
        return Refused(reason="no challenge: used already, expired, or of another browser")
    if key is None or user is None or user.disabled:
        return Refused(reason="no such passkey, or its person cannot sign in")
    if owner is not None and key.user_id != owner:
        return Refused(reason="the passkey is another person's")
    return verify_assertion(
        rp,
        parsed,
        challenge=challenge,
        public_key=key.public_key,
        sign_count=key.sign_count,
        owner_id=key.user_id,
        user_verification=user_verification,
    )
