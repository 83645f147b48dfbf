"""The signing keys: listing them, and a rotation on demand, which every running
replica hears of at once (keys.KeyChangeFeed)."""

from __future__ import annotations

from typing import Any

from courseschool.common.clock import iso
from courseschool.common.errors import InvalidRequestError

from ...keys import announce_key_change
from .base import AdminBase


class KeysAdmin(AdminBase):
    async def list_keys(self) -> list[dict[str, Any]]:
        return [
            {
                "kid": k.kid,
                "alg": k.alg,
                "state": k.state,
                "created_at": iso(k.created_at),
                "activated_at": iso(k.activated_at),
                "retired_at": iso(k.retired_at),
            }
            for k in await self.c.keys.infos()
        ]

    async def _next_key_signs_from(self, alg: str) -> str | None:
        """When the published next key of `alg` takes over signing: after its publication
        lead, and not before the active key's interval ends (protocol.key_rotation.plan)."""
        keys = [k for k in await self.c.keys.infos() if k.alg == alg]
        upcoming = next((k for k in keys if k.state == "next"), None)
        active = next((k for k in keys if k.state == "active"), None)
        if upcoming is None:
            return None
        policy = self.c.keys.policy
        start = upcoming.created_at + policy.lead
        if active is not None:
            start = max(start, (active.activated_at or active.created_at) + policy.interval)
        return iso(start)

    async def rotate_key(self, alg: str, *, immediate: bool = False) -> dict[str, Any]:
        if alg not in ("ES256", "RS256"):
            raise InvalidRequestError("alg must be ES256 or RS256")
        done = await self.c.keys.rotate_now(alg, immediate=immediate)
        await self.c.keys_rotated()
        # Every running replica reloads its keys when told (keys.KeyChangeFeed);
        # those not told (Redis down) within KEY_RELOAD_INTERVAL.
        told = await announce_key_change(self.c.redis)
        await self._audit("signing_key_rotation", alg=alg, immediate=immediate, steps=done)
        signs_from = await self._next_key_signs_from(alg)
        return {
            "alg": alg,
            "steps": done,
            "next_key_signs_from": signs_from,
            "servers_told": told,
            "others_reload_within_seconds": self.c.settings.key_reload_interval,
            "keys": await self.list_keys(),
        }
