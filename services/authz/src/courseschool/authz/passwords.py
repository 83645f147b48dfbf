"""Password hashing with argon2id, off the event loop.

The parameters are settings (PASSWORD_TIME_COST, PASSWORD_MEMORY_KIB, PASSWORD_PARALLELISM):
by default argon2-cffi's, RFC 9106's second recommended option (three passes over 64 MiB,
four lanes); never below OWASP's floor for argon2id (two passes over 19 MiB, settings.py).
A stored hash of other parameters is replaced at its next sign-in (`check_password`).

One hash is slow on purpose and takes its memory cost in RAM. Run
on the event loop, a flood of sign-ins stalled every other request (security review,
finding 4). `PasswordWork`
runs them on a small thread pool instead (argon2-cffi releases the GIL while it
hashes), as many at once as the pool has threads (one per core by default), with at
most a bounded number more waiting for a thread; beyond that it refuses at once with
503 and `Retry-After`, rather than letting sign-ins queue without end.

The plain functions are for what runs outside a request (scripts, seeding, tests).
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

import msgspec
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from courseschool.common.errors import TemporarilyUnavailableError

DEFAULT = PasswordHasher()  # RFC 9106, second recommended option: t=3, 64 MiB, p=4
T = TypeVar("T")


def hasher(*, time_cost: int, memory_kib: int, parallelism: int) -> PasswordHasher:
    return PasswordHasher(time_cost=time_cost, memory_cost=memory_kib, parallelism=parallelism)


@functools.cache
def _dummy_hash(hasher: PasswordHasher) -> str:
    """Verified against when the account does not exist, so both paths cost the same.
    Made at the first such check, with today's parameters, not at import: every process
    that imports this module (each admin command) would pay a hash it never uses."""
    return hasher.hash("no such account: equalise timing")


# Stored for a person invited who has not chosen a password yet: no hash of anything,
# so no password matches it; checked like an unknown account (the same work).
NO_PASSWORD = "!invited"


def hash_password(password: str, hasher: PasswordHasher = DEFAULT) -> str:
    return hasher.hash(password)


def verify_password(password_hash: str | None, password: str, hasher: PasswordHasher = DEFAULT) -> bool:
    if password_hash == NO_PASSWORD:
        password_hash = None
    try:
        return hasher.verify(password_hash or _dummy_hash(hasher), password) and password_hash is not None
    except (VerificationError, InvalidHashError):
        return False


class Checked(msgspec.Struct, frozen=True):
    ok: bool
    new_hash: str | None = None  # the password hashed with today's parameters, when the old ones are outdated


def check_password(password_hash: str | None, password: str, hasher: PasswordHasher = DEFAULT) -> Checked:
    """Verify, and rehash in the same turn when the stored parameters are not `hasher`'s."""
    if not verify_password(password_hash, password, hasher):
        return Checked(ok=False)
    rehash = password_hash is not None and password_hash != NO_PASSWORD and hasher.check_needs_rehash(password_hash)
    return Checked(ok=True, new_hash=hash_password(password, hasher) if rehash else None)


class PasswordWork:
    """Hashing and verification on `workers` threads, with at most `queue` more
    waiting for one; `in_flight` counts both."""

    def __init__(self, *, workers: int, queue: int, hasher: PasswordHasher = DEFAULT) -> None:
        self._hasher = hasher
        self._threads = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="password")
        self._room = workers + queue
        self._lock = threading.Lock()
        self._in_flight = 0

    @property
    def in_flight(self) -> int:
        return self._in_flight

    async def check(self, password_hash: str | None, password: str) -> Checked:
        return await self._run(check_password, password_hash, password, self._hasher)

    async def hash(self, password: str) -> str:
        return await self._run(hash_password, password, self._hasher)

    def close(self) -> None:
        self._threads.shutdown(wait=False, cancel_futures=True)

    async def _run(self, work: Callable[..., T], *args: object) -> T:
        with self._lock:
            if self._in_flight >= self._room:
                busy = TemporarilyUnavailableError("too many sign-ins are being checked right now; try again shortly")
                busy.headers["Retry-After"] = "1"
                raise busy
            self._in_flight += 1
        job = self._threads.submit(work, *args)
        # Its place is given back when the work is done (or dropped before it started),
        # not when a caller that went away stops waiting: the bound holds for the threads.
        job.add_done_callback(self._done)
        return await asyncio.wrap_future(job)

    def _done(self, _: Future[Any]) -> None:
        with self._lock:
            self._in_flight -= 1
