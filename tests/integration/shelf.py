"""Apps built once per test process and lent to one test at a time.

Building a Litestar app is most of what a light in-process test costs: about 80 ms of
CPU for the authorization server and 90 for the resource API, nearly all of it Litestar
reading every handler's signature. A built app keeps nothing of a test between two
lifespans (each start builds the components, the pools, caches and loops, and each
shutdown closes them), so the fixtures borrow one from the shelf instead of building
their own. What a test hands an app when it is built and must stay the test's own, the
clock and the link between two apps, goes through stand-ins set at each loan (an app
leaves the clients it was given open: docs/design.md).

Only the fixtures borrow (`client`, `admin_flow`, `cimd_flow`, `open_api_env`); a test
that builds an app itself (other settings, another clock beside the fixture's) still
builds it."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from litestar import Litestar

from courseschool.authz.app import create_app
from courseschool.authz.settings import AuthzSettings
from courseschool.authz.storage.client_metadata import PUBLIC_WEB, DocumentWeb
from courseschool.common.clock import Clock

T = TypeVar("T")


class LentClock:
    """The clock a shelved app is built with: it reads the clock of the test that
    borrowed the app."""

    def __init__(self) -> None:
        self.reader: Clock | None = None

    def now(self) -> int:
        if self.reader is None:
            raise RuntimeError("a shelved app asked the time while no test had borrowed it")
        return self.reader.now()

    @contextmanager
    def reading(self, clock: Clock) -> Iterator[None]:
        self.reader = clock
        try:
            yield
        finally:
            self.reader = None


class Shelf:
    """Built apps by what they were built from. An app is lent to one test at a time;
    a test that borrows while every such app is out gets a new one, shelved when it is
    returned. An app whose loan ended in an error is not put back."""

    def __init__(self) -> None:
        self._free: defaultdict[Hashable, list[Any]] = defaultdict(list)
        self.built = 0

    @contextmanager
    def lend(self, key: Hashable, build: Callable[[], T]) -> Iterator[T]:
        free = self._free[key]
        if free:
            item = free.pop()
        else:
            item = build()
            self.built += 1
        yield item
        free.append(item)


@dataclass
class Clocked:
    app: Litestar
    clock: LentClock


@contextmanager
def authz_app(
    shelf: Shelf, settings: AuthzSettings, clock: Clock, *, document_web: DocumentWeb = PUBLIC_WEB
) -> Iterator[Litestar]:
    """The authorization server built from `settings` (fetching metadata documents from
    `document_web`), reading `clock`, for one test."""

    def build() -> Clocked:
        lent = LentClock()
        return Clocked(create_app(settings, clock=lent, document_web=document_web), lent)

    with shelf.lend(("authz", settings, document_web), build) as shelved, shelved.clock.reading(clock):
        yield shelved.app
