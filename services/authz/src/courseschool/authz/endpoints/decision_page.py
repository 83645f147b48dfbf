"""The decision page a client may ask for (`decision_page`): the outcome kept for the
browser that decided, shown once before the browser goes back to the app."""

from __future__ import annotations

from typing import Literal

from courseschool.common.errors import InvalidRequestError
from courseschool.common.secrets import digest, same

from ..families import SignInPages
from ..protocol.client_names import client_kind
from ..storage.interactions import Handoff, Interaction
from .interaction import EXPIRED, EXPIRED_ADVICE


async def hand_off(
    c: SignInPages,
    interaction: Interaction,
    location: str,
    *,
    outcome: Literal["approved", "denied", "blocked", "not_approved"],
    name: str,
) -> None:
    """Keep the outcome for the decision page the client asked for (`decision_page`)."""
    client = await c.directory.get(interaction.request.client_id)
    handoff = Handoff(
        location=location,
        approved=outcome == "approved",
        blocked=outcome == "blocked",
        not_approved=outcome == "not_approved",
        client_name=name,
        browser_hash=interaction.browser_hash,
        vouched=client is not None and client_kind(client) == "integration",
    )
    await c.interactions.hand_off(interaction.uid, handoff)


async def take_handoff(c: SignInPages, uid: str, binding: str | None) -> Handoff:
    """The decided outcome, once, for the browser that decided it."""
    handoff = await c.interactions.take_handoff(uid)
    if handoff is None or not binding or not same(digest(binding), handoff.browser_hash):
        raise InvalidRequestError(EXPIRED, advice=EXPIRED_ADVICE)
    return handoff
