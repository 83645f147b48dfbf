"""The interaction's second step (after the password): a code of the person's
authenticator app, or a recovery code, or the app the school requires set up, its
recovery codes shown once. The first step and the consent are `interaction.py`'s."""

from __future__ import annotations

from courseschool.common.errors import InvalidRequestError

from ..families import SignInPages
from ..storage.interactions import Interaction
from .interaction import EXPIRED, EXPIRED_ADVICE
from .second_factors import WRONG_ENROLMENT_CODE
from .signin import MAX_FAILURES, TOO_MANY_CODES, WRONG_CODE, SignedIn, enrol_second_step, second_step


async def login_second_step(c: SignInPages, interaction: Interaction, code: str, *, ip: str) -> str | None:
    """The interaction's second step: a code (`second_step`), or the authenticator app the
    school requires set up (`enrol_second_step`, its recovery codes kept to be shown
    once). Signed in: the new session's id. Too many wrong codes: back to the password."""
    step = interaction.second_step
    if step is None or interaction.user_id is not None:
        raise InvalidRequestError(EXPIRED, advice=EXPIRED_ADVICE)
    client_id = interaction.request.client_id
    signed_in: SignedIn | None
    if step.what == "verify":
        signed_in = await second_step(c, step, code, ip=ip, client_id=client_id)
    else:
        enrolled = await enrol_second_step(c, step, code, ip=ip, client_id=client_id)
        signed_in = enrolled[0] if enrolled else None
        if enrolled:
            await c.second_steps.keep_codes(f"interaction:{interaction.uid}", enrolled[1])
    if signed_in is not None:
        interaction.second_step, interaction.login_error = None, None
        interaction.user_id, interaction.auth_time = signed_in.user_id, signed_in.auth_time
    elif step.failures >= MAX_FAILURES:
        interaction.second_step, interaction.login_error = None, TOO_MANY_CODES
    else:
        interaction.login_error = WRONG_CODE if step.what == "verify" else WRONG_ENROLMENT_CODE
    await c.interactions.save(interaction)
    return signed_in.session_id if signed_in else None


async def recovery_codes_to_show(c: SignInPages, interaction: Interaction) -> list[str] | None:
    """The recovery codes of the app just set up in this interaction, once."""
    return await c.second_steps.take_codes(f"interaction:{interaction.uid}")
