"""What a sign-in holds between the password and the second step, and the recovery codes
waiting to be shown once, in Redis with a time limit. Losing either only means the
person signs in again (the codes can be made anew on their security page).

A sign-in through an authorization request keeps its `SecondStep` in the interaction
(storage/interactions.py); the standalone sign-in page keeps it here, under the digest
of its own cookie's value.

An authenticator app being set up is held for the page that began it (a session, a
sign-in's step): the secret it was shown is offered again only there, and only for
`ENROL_TTL`; anywhere else, or later, it is a new one (second_factors.begin_totp)."""

from __future__ import annotations

from typing import Literal, cast

import msgspec
import redis.asyncio as aioredis

from courseschool.common.secrets import digest

_PENDING = "authz:second-step:"
_SHOW = "authz:show-codes:"
_ENROLLING = "authz:totp-enrolling:"
SHOW_TTL = 600  # recovery codes wait this long to be shown
ENROL_TTL = 600  # an authenticator app's secret is offered again to the same page this long


class SecondStep(msgspec.Struct, kw_only=True):
    """The password was right; the sign-in waits for `what`: a code ("verify"), or an
    authenticator app set up because the school requires one ("enrol")."""

    user_id: str
    what: Literal["verify", "enrol"]
    failures: int = 0  # wrong codes in this sign-in; past MAX_FAILURES it starts again
    credential: str = ""  # users.credential_version of the password accepted: a new one ends the step
    ended: bool = False  # it no longer stands (a new password, the account disabled): sign in again


class RedisSecondStepStore:
    def __init__(self, redis: aioredis.Redis, ttl: int) -> None:
        self._redis = redis
        self._ttl = ttl

    async def get(self, binding: str | None) -> SecondStep | None:
        if not binding or len(binding) > 128:
            return None
        raw = cast(bytes | None, await self._redis.get(_PENDING + digest(binding).hex()))
        return msgspec.msgpack.decode(raw, type=SecondStep) if raw else None

    async def begin(self, binding: str, step: SecondStep) -> None:
        """A new step, for the store's time limit from now."""
        await self._redis.set(_PENDING + digest(binding).hex(), msgspec.msgpack.encode(step), ex=self._ttl)

    async def save(self, binding: str, step: SecondStep) -> None:
        """Keep its changes (a wrong code counted), not its time: a step's lifetime is
        fixed when it begins, however many codes are tried."""
        encoded = msgspec.msgpack.encode(step)
        await self._redis.set(_PENDING + digest(binding).hex(), encoded, keepttl=True, xx=True)

    async def drop(self, binding: str) -> None:
        await self._redis.delete(_PENDING + digest(binding).hex())

    async def keep_codes(self, key: str, codes: list[str]) -> None:
        """Recovery codes to show on the next page of `key` (a session or an interaction), once."""
        await self._redis.set(_SHOW + digest(key).hex(), msgspec.msgpack.encode(codes), ex=SHOW_TTL)

    async def take_codes(self, key: str) -> list[str] | None:
        raw = cast(bytes | None, await self._redis.getdel(_SHOW + digest(key).hex()))
        return msgspec.msgpack.decode(raw, type=list[str]) if raw else None

    async def hold_enrolment(self, user_id: str, by: str) -> None:
        """The authenticator app `user_id` is setting up was begun by `by` (a session, a sign-in)."""
        await self._redis.set(_ENROLLING + user_id, digest(by), ex=ENROL_TTL)

    async def enrolment_held_by(self, user_id: str, by: str) -> bool:
        held = cast(bytes | None, await self._redis.get(_ENROLLING + user_id))
        return held is not None and held == digest(by)
