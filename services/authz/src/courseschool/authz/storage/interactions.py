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
        self, request: AuthorizationRequest, *, user_id: str | None, auth_time: int | None
    ) -> tuple[Interaction, str]:
        """Store a new interaction; return it and the browser-binding value for the cookie."""
        binding = new_token()
        interaction = Interaction(
            uid=new_token(18),
            request=request,
            csrf=new_token(),
            browser_hash=digest(binding),
            user_id=user_id,
            auth_time=auth_time,
        )
        await self._redis.set(_PREFIX + interaction.uid, msgspec.msgpack.encode(interaction), ex=self._ttl)
        return interaction, binding

    async def get(self, uid: str) -> Interaction | None:
        if not uid or len(uid) > 64:
            return None
        raw = cast(bytes | None, await self._redis.get(_PREFIX + uid))
        return msgspec.msgpack.decode(raw, type=Interaction) if raw else None

    async def save(self, interaction: Interaction) -> None:
        await self._redis.set(_PREFIX + interaction.uid, msgspec.msgpack.encode(interaction), ex=self._ttl, xx=True)

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
