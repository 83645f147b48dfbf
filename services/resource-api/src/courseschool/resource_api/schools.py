"""The schools this resource server serves. The authorization server owns schools;
a school this service has not seen yet (one an administrator just created) is looked
up there over its internal API on first use, kept in `api_schools`, and cached in
memory, so that a new school works at once for its users' tokens and in the
anonymous catalogue, in every topology."""

from __future__ import annotations

import time
from urllib.parse import quote

import httpx
import msgspec

from courseschool.common.errors import TemporarilyUnavailableError
from courseschool.common.logging import get_logger

from .storage.schools import PgSchoolStore, SchoolRecord

log = get_logger(__name__)

MAX_REF = 100
MAX_CACHED = 10_000


class SchoolDirectory:
    """Lookup on miss: memory, then `api_schools`, then the authorization server.
    Unknown references are remembered briefly too, so anonymous callers cannot make
    every request a call to the authorization server."""

    def __init__(
        self,
        store: PgSchoolStore,
        authz: httpx.AsyncClient,
        internal_token: str | None,
        *,
        ttl: float = 300.0,
        miss_ttl: float = 30.0,
    ) -> None:
        self._store = store
        self._authz = authz
        self._token = internal_token
        self._ttl = ttl
        self._miss_ttl = miss_ttl
        self._cache: dict[str, tuple[SchoolRecord | None, float]] = {}

    async def find(self, ref: str) -> SchoolRecord | None:
        """The school with this id or slug, or None."""
        ref = ref[:MAX_REF]
        held = self._cache.get(ref)
        if held is not None and held[1] > time.monotonic():
            return held[0]
        school = await self._store.find(ref)
        if school is None or school.name is None:
            learnt = await self._ask_authz(ref)
            if learnt is not None:
                await self._store.save(learnt)
                school = learnt
        self._remember(ref, school)
        return school

    async def _ask_authz(self, ref: str) -> SchoolRecord | None:
        if not self._token:
            return None
        try:
            response = await self._authz.get(
                f"/internal/schools/{quote(ref, safe='')}",
                headers={"Authorization": f"Bearer {self._token}"},
                timeout=3.0,
            )
        except httpx.HTTPError as exc:
            log.warning("school_lookup_failed", error=type(exc).__name__)
            raise TemporarilyUnavailableError("the school directory is unavailable; try again shortly") from None
        if response.status_code == 404:
            return None
        if response.status_code != 200:
            log.warning("school_lookup_failed", status=response.status_code)
            raise TemporarilyUnavailableError("the school directory is unavailable; try again shortly")
        return msgspec.json.decode(response.content, type=SchoolRecord)

    def _remember(self, ref: str, school: SchoolRecord | None) -> None:
        if len(self._cache) >= MAX_CACHED:
            self._cache.clear()
        expires = time.monotonic() + (self._ttl if school is not None else self._miss_ttl)
        self._cache[ref] = (school, expires)
