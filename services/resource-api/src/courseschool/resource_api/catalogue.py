"""The anonymous catalogue's answers, kept briefly in this process.

The public catalogue (published courses, events, posts, ...) is the same for every
anonymous caller and is read far more often than it changes, so its encoded pages are
kept for CATALOGUE_CACHE_TTL seconds (0: not at all) and sent with the same
`Cache-Control: public, max-age`. A write through this process forgets the area's
pages at once; another replica's write shows within the TTL. Nothing a token can see
is kept here: only what any anonymous caller may read. A page held is sent by
`web/catalogue_hits.py` before the route's handler runs; the handler fills the cache.
"""

from __future__ import annotations

import time
from collections.abc import Hashable

from courseschool.common.metrics import CACHE

MAX_ENTRIES = 4096
_HIT, _MISS = CACHE.labels("catalogue", "hit"), CACHE.labels("catalogue", "miss")


def cache_control(ttl: float) -> str:
    """The `Cache-Control` of an anonymous catalogue page."""
    return f"public, max-age={int(ttl)}" if int(ttl) else "no-cache"


class CatalogueCache:
    def __init__(self, ttl: float) -> None:
        self.ttl = ttl
        self._pages: dict[tuple[str, Hashable], tuple[bytes, float]] = {}

    def get(self, area: str, key: Hashable) -> bytes | None:
        page = self.held(area, key)
        if page is None:
            _MISS.inc()
        return page

    def held(self, area: str, key: Hashable) -> bytes | None:
        """`get` for a first look that the handler follows on a miss: a hit is counted, a
        miss is left for the handler's own `get` to count (once per request)."""
        held = self._pages.get((area, key))
        if held is not None and held[1] > time.monotonic():
            _HIT.inc()
            return held[0]
        return None

    def put(self, area: str, key: Hashable, body: bytes) -> None:
        if self.ttl <= 0:
            return
        if len(self._pages) >= MAX_ENTRIES:
            self._pages.clear()
        self._pages[(area, key)] = (body, time.monotonic() + self.ttl)

    def forget(self, area: str) -> None:
        """After a write to the area through this process."""
        for key in [k for k in self._pages if k[0] == area]:
            del self._pages[key]
