"""A passkey set up at the sign-in step the school requires (a person it covers who has
no second factor, right after the password), in place of an authenticator app: WebAuthn
registration (§7.1) against a challenge of the page's browser (the interaction's cookie,
or the sign-in page's), taken on the first answer. Set up, it completes the sign-in as
the app's first code does (`signin.enrol_second_step`): the session, a `login_succeeded`
event naming the factor (`password+passkey`), ten recovery codes to show once, and the
person told by e-mail (as of a passkey added on the security page, `add_passkey`). A
refused answer changes nothing and counts in `step.failures` as a wrong code does."""

from __future__ import annotations

from ..families import SignInPages
from ..protocol.passkeys import RelyingParty, registration_options, relying_party
from ..protocol.second_factors import new_recovery_codes
from ..storage.second_step import SecondStep
from .account_changes import tell
from .passkeys import MAX_PASSKEYS, register_passkey
from .signin import SignedIn, _account, _open_session, stale
from .waiting_step import step_person

ENROL = "enrol"  # the challenges' purpose
PASSKEY_NOT_SAVED = (
    "That passkey was not saved: your browser or device did not finish, or the page was open too long. "
    "Try again, or set up an authenticator app."
)


async def enrolment_options(c: SignInPages, step: SecondStep, binding: str | None) -> str | None:
    """The options of a new passkey at the enrolment step (JSON for our script), a new
    challenge kept for this browser; None: passkeys are not available at this address
    (the app alone is offered)."""
    rp = relying_party(c.settings.base_url)
    if not isinstance(rp, RelyingParty) or step.what != "enrol" or not binding:
        return None
    user = await step_person(c, step)
    if user is None:
        return None
    keys = await c.passkeys.keys.of_user(user.id)
    if len(keys) >= MAX_PASSKEYS:
        return None
    challenge = await c.passkeys.challenges.issue(ENROL, binding)
    return registration_options(
        rp,
        user_id=user.id,
        email=user.email,
        name=user.name,
        exclude=[k.credential_id for k in keys],
        challenge=challenge,
    )


async def enrol_passkey(
    c: SignInPages,
    step: SecondStep,
    binding: str | None,
    name: str,
    credential: str,
    *,
    ip: str,
    agent: str | None,
    client_id: str | None,
) -> tuple[SignedIn, list[str]] | None:
    """The browser's new passkey verified and kept: the sign-in completes, with the new
    recovery codes to show once. None: refused (`step.failures` counted; a step that
    no longer stands, `stale`)."""
    user = await step_person(c, step) if step.what == "enrol" else None
    if user is None:
        stale(step)
        return None
    challenge = await c.passkeys.challenges.take(ENROL, binding)
    rp = relying_party(c.settings.base_url)
    added = await register_passkey(c, user, rp, challenge, name, credential, ip=ip)
    if added is None:
        step.failures += 1
        return None
    await tell(c, user, "passkey_added", ip=ip, agent=agent)
    codes = added.recovery_codes
    if codes is None:  # a factor set up meanwhile (another browser): new codes all the same
        codes = new_recovery_codes()
        await c.second_factors.replace_recovery_codes(user.id, codes, now=c.clock.now())
    account = _account(user.email)
    signed_in = await _open_session(
        c, user, account, ip=ip, agent=agent, client_id=client_id, factor="password+passkey"
    )
    return signed_in, codes
