"""Pending interactions (an authorization request waiting for login and consent),
kept in Redis with a time limit. Losing one only means the user starts again."""

from __future__ import annotations

from typing import cast

import msgspec
import redis.asyncio as aioredis

from courseschool.common.secrets import digest, new_token

from ..protocol.authorization import AuthorizationRequest
from .second_step import SecondStep

_PREFIX = "authz:interaction:"
_HANDOFF = "authz:handoff:"


class Interaction(msgspec.Struct, kw_only=True):
    uid: str
    request: AuthorizationRequest
    csrf: str
    browser_hash: bytes  # digest of the binding cookie set on this browser
    user_id: str | None = None
    auth_time: int | None = None
    login_error: str | None = None
    login_email: str | None = None  # what was typed at a failed sign-in, shown again
    shown: list[str] | None = None  # the scopes the consent page last offered: the most an approval grants
    second_step: SecondStep | None = None  # the password was right; a code (or an app set up) is awaited
    session_hash: bytes | None = None  # digest of the login session that signed it in: it must stay live

    def bind(self, *, user_id: str, auth_time: int, session_id: str) -> None:
        """Signed in: the person, and the login session whose life the interaction's is."""
        self.user_id, self.auth_time, self.session_hash = user_id, auth_time, digest(session_id)
        self.second_step, self.login_error = None, None

    def unbind(self) -> None:
        """Back to the sign-in form: nobody signed in, nothing shown yet."""
        self.user_id, self.auth_time, self.session_hash = None, None, None
        self.second_step, self.login_error, self.shown = None, None, None


class Handoff(msgspec.Struct, frozen=True, kw_only=True):
    """What a decided interaction hands back, kept for its decision page (when asked for)."""

    location: str
    approved: bool
    client_name: str
    browser_hash: bytes
    vouched: bool = False  # an integration's name (the school's word); any other is self-declared
    blocked: bool = False  # not approved because the person's school blocked the app
    not_approved: bool = False  # the school's app policy lets the app have nothing (it has not approved it)


class RedisInteractionStore:
    def __init__(self, redis: aioredis.Redis, ttl: int) -> None:
        self._redis = redis
        self._ttl = ttl

    async def create(
        self, request: AuthorizationRequest, *, signed_in: tuple[str, int, str] | None
    ) -> tuple[Interaction, str]:
        """Store a new interaction; return it and the browser-binding value for the cookie.
        `signed_in`: the browser's live sign-in (user id, auth time, session id), if any."""
        binding = new_token()
        interaction = Interaction(
            uid=new_token(18),
            request=request,
            csrf=new_token(),
            browser_hash=digest(binding),
        )
        if signed_in is not None:
            user_id, auth_time, session_id = signed_in
            interaction.bind(user_id=user_id, auth_time=auth_time, session_id=session_id)
        await self._redis.set(_PREFIX + interaction.uid, msgspec.msgpack.encode(interaction), ex=self._ttl)
        return interaction, binding

    async def get(self, uid: str) -> Interaction | None:
        if not uid or len(uid) > 64:
            return None
        raw = cast(bytes | None, await self._redis.get(_PREFIX + uid))
        return msgspec.msgpack.decode(raw, type=Interaction) if raw else None

    async def save(self, interaction: Interaction) -> None:
        """Keep its changes, not its time: an interaction's lifetime is fixed when it is made."""
        await self._redis.set(_PREFIX + interaction.uid, msgspec.msgpack.encode(interaction), keepttl=True, xx=True)

    async def hand_off(self, uid: str, handoff: Handoff, ttl: int = 120) -> None:
        await self._redis.set(_HANDOFF + uid, msgspec.msgpack.encode(handoff), ex=ttl)

    async def take_handoff(self, uid: str) -> Handoff | None:
        if not uid or len(uid) > 64:
            return None
        raw = cast(bytes | None, await self._redis.getdel(_HANDOFF + uid))
        return msgspec.msgpack.decode(raw, type=Handoff) if raw else None

    async def take(self, uid: str) -> Interaction | None:
        """Remove and return: an interaction completes at most once."""
        raw = cast(bytes | None, await self._redis.getdel(_PREFIX + uid))
        return msgspec.msgpack.decode(raw, type=Interaction) if raw else None
