"""An interaction lives no longer than the login session that signed it in (the
browser's at /authorize, or the one its sign-in form opened): a password reset, a
sign-out, "sign out everywhere else", an admin's reset of the person's second factors
end that session, and with it the interaction's say. What it could still show or
decide goes back to its sign-in form; nothing is granted. So does a sign-in still
waiting at its second step whose password is no longer the person's (waiting_step.py).
And so does one whose browser has signed in again since (someone else, or the same
person in another tab): its pages would show one person's consent in another's sign-in,
and its decision would be refused."""

from __future__ import annotations

from courseschool.common.secrets import digest, same

from ..families import SignInPages
from ..storage.interactions import Interaction
from .waiting_step import SIGN_IN_AGAIN, step_person


async def sign_in_lives(c: SignInPages, interaction: Interaction, cookie: str | None = None) -> bool:
    """Whether the interaction is signed in by a session still live and of its person;
    and, given the browser's session `cookie`, whether it is that session (someone else
    signed in on this browser meanwhile: a decision now would be recorded as made in
    their sign-in)."""
    if interaction.user_id is None or interaction.session_hash is None:
        return False
    if cookie is not None and not same(digest(cookie), interaction.session_hash):
        return False
    return await c.sessions.lives(interaction.session_hash, interaction.user_id, now=c.clock.now())


ANOTHER_SIGN_IN = "This browser was signed in again since this page opened. Sign in to continue."


async def forget_ended_sign_in(c: SignInPages, interaction: Interaction, cookie: str | None = None) -> None:
    """The interaction signed in by a session that ended, or by another than the
    browser's (`cookie`, its session cookie, when it sent one), or waiting at a second
    step that no longer stands: back to its sign-in form."""
    if interaction.user_id is None:
        step = interaction.second_step
        if step is None or await step_person(c, step) is not None:
            return
        interaction.unbind()
        interaction.login_error = SIGN_IN_AGAIN
    elif await sign_in_lives(c, interaction, cookie):
        return
    else:
        replaced = cookie is not None and await sign_in_lives(c, interaction)
        interaction.unbind()
        if replaced:  # whoever holds the browser now is not shown the address typed before
            interaction.login_error, interaction.login_email = ANOTHER_SIGN_IN, None
    await c.interactions.save(interaction)
