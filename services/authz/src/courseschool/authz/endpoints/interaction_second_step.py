"""The interaction's second step (after the password): a code of the person's
authenticator app, or a recovery code, or the second factor the school requires set up
(an authenticator app, or a passkey), its recovery codes shown once. The first step and
the consent are `interaction.py`'s; a passkey as the second step, `passkey_sign_in.py`'s."""

from __future__ import annotations

from courseschool.common.errors import InvalidRequestError

from ..families import SignInPages
from ..storage.interactions import Interaction
from ..storage.second_step import SecondStep
from .interaction import EXPIRED, EXPIRED_ADVICE
from .passkey_enrolment import PASSKEY_NOT_SAVED, enrol_passkey
from .second_factors import WRONG_ENROLMENT_CODE
from .signin import MAX_FAILURES, WRONG_CODE, SignedIn, enrol_second_step, restart_reason, second_step


async def login_second_step(
    c: SignInPages, interaction: Interaction, code: str, *, ip: str, agent: str | None
) -> str | None:
    """The interaction's second step: a code (`second_step`), or the authenticator app the
    school requires set up (`enrol_second_step`, its recovery codes kept to be shown
    once). Signed in: the new session's id. Too many wrong codes: back to the password."""
    step = _waiting(interaction)
    client_id = interaction.request.client_id
    if step.what == "verify":
        signed_in = await second_step(c, step, code, ip=ip, agent=agent, client_id=client_id)
        return await _settle(c, interaction, step, signed_in, WRONG_CODE)
    enrolled = await enrol_second_step(c, step, code, ip=ip, agent=agent, client_id=client_id)
    return await _settle(c, interaction, step, enrolled, WRONG_ENROLMENT_CODE)


async def login_enrol_passkey(
    c: SignInPages,
    interaction: Interaction,
    binding: str | None,
    name: str,
    credential: str,
    *,
    ip: str,
    agent: str | None,
) -> str | None:
    """A passkey as the second factor the school requires (`enrol_passkey`), as
    `login_second_step` takes the app's first code: a refused answer counts as a wrong one."""
    step = _waiting(interaction)
    if step.what != "enrol":
        raise InvalidRequestError(EXPIRED, advice=EXPIRED_ADVICE)
    client_id = interaction.request.client_id
    enrolled = await enrol_passkey(c, step, binding, name, credential, ip=ip, agent=agent, client_id=client_id)
    return await _settle(c, interaction, step, enrolled, PASSKEY_NOT_SAVED)


def _waiting(interaction: Interaction) -> SecondStep:
    step = interaction.second_step
    if step is None or interaction.user_id is not None:
        raise InvalidRequestError(EXPIRED, advice=EXPIRED_ADVICE)
    return step


async def _settle(
    c: SignInPages,
    interaction: Interaction,
    step: SecondStep,
    outcome: SignedIn | tuple[SignedIn, list[str]] | None,
    error: str,
) -> str | None:
    """The interaction after a second step: signed in (the codes of a factor set up now
    kept for the next page), back to the password past MAX_FAILURES, or `error` shown."""
    if isinstance(outcome, tuple):
        await c.second_steps.keep_codes(f"interaction:{interaction.uid}", outcome[1])
        outcome = outcome[0]
    if outcome is not None:
        interaction.bind(user_id=outcome.user_id, auth_time=outcome.auth_time, session_id=outcome.session_id)
    elif step.failures >= MAX_FAILURES:
        interaction.second_step, interaction.login_error = None, restart_reason(step)
    else:
        interaction.login_error = error
    await c.interactions.save(interaction)
    return outcome.session_id if outcome else None


async def recovery_codes_to_show(c: SignInPages, interaction: Interaction) -> tuple[list[str], str] | None:
    """The recovery codes of the second factor just set up in this interaction, once, and
    which it was ("app" or "passkey")."""
    codes = await c.second_steps.take_codes(f"interaction:{interaction.uid}")
    if not codes or interaction.user_id is None:
        return None
    factors = await c.second_factors.factors(interaction.user_id)
    return codes, "app" if factors.totp else "passkey"
