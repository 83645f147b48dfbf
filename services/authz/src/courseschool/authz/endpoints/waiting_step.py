"""A sign-in waiting at its second step (the password was right; a code, a passkey, or
the second factor the school requires is awaited) stands only while the password it
accepted is still the person's and the person is not disabled: a password reset (by the
person or an administrator) or a change ends it, as it ends their sessions
(password_reset.end_sessions_and_grants), so whoever held the old password cannot finish
it afterwards. A set-up the school asked for stands only while the person still has no
second factor. Every page that shows a step and every completion asks `step_person`."""

from __future__ import annotations

from courseschool.common.secrets import same

from ..families import SignInPages
from ..protocol.models import User
from ..storage.second_step import SecondStep

SIGN_IN_AGAIN = "Your account changed since you typed your password. Sign in again."


async def step_person(c: SignInPages, step: SecondStep) -> User | None:
    """The person `step` is for, while it stands; None: it is stale (sign in again)."""
    user = await c.users.get(step.user_id)
    if user is None or user.disabled or not step.credential:
        return None
    current = await c.users.credential(user.id)
    if current is None or not same(current, step.credential):
        return None
    if step.what == "enrol" and (await c.second_factors.factors(user.id)).any:
        return None  # a factor set up meanwhile (another browser): this set-up no longer stands
    return user


async def standalone_step(c: SignInPages, binding: str | None) -> SecondStep | None:
    """The sign-in page's waiting step of this browser (None: none); a stale one is
    forgotten and comes back `ended`, so the page can say why the password is asked again."""
    step = await c.second_steps.get(binding)
    if step is None or binding is None:
        return None
    if await step_person(c, step) is None:
        await c.second_steps.drop(binding)
        step.ended = True
    return step
