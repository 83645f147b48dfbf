"""The signing keys this replica signs with.

Loaded at start (with Postgres down the service starts anyway, not ready, and the
maintenance loop loads them once it is back), then reloaded every
KEY_RELOAD_INTERVAL after the due rotation steps, so every replica signs with the
key every other replica signs with.
"""

from __future__ import annotations

import asyncpg

from courseschool.common.errors import TemporarilyUnavailableError
from courseschool.common.logging import get_logger
from courseschool.common.metrics import SIGNING_KEY_ACTIVATED

from .storage.keys import KeyRing, PgKeyStore

log = get_logger(__name__)


class SigningKeys:
    def __init__(self, store: PgKeyStore) -> None:
        self.store = store
        self._ring: KeyRing | None = None

    @property
    def loaded(self) -> bool:
        return self._ring is not None

    @property
    def ring(self) -> KeyRing:
        if self._ring is None:
            raise TemporarilyUnavailableError("the signing keys are not loaded yet; try again shortly")
        return self._ring

    def _loaded(self, ring: KeyRing) -> KeyRing:
        for alg, since in ring.activated.items():
            SIGNING_KEY_ACTIVATED.labels(alg).set(since)
        return ring

    async def start(self) -> None:
        try:
            self._ring = self._loaded(await self.store.ensure_active())
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
            log.warning("signing_keys_unavailable_at_start", error=type(exc).__name__)

    async def maintain(self) -> None:
        """Take due rotation steps, then reload."""
        if self._ring is None:
            self._ring = self._loaded(await self.store.ensure_active())
        await self.store.maintain()
        self._ring = self._loaded(await self.store.load())
