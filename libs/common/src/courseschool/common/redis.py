"""The Redis client. Redis holds only what may be lost (see DESIGN.md).

A plain `REDIS_URL` names one server. With Sentinel (`REDIS_SENTINEL_MASTER` and
`REDIS_SENTINELS`), the client asks the sentinels where the master is each time it opens
a connection, so that after a failover its next connection reaches the promoted replica;
`REDIS_URL` then gives the rest (database, credentials, `rediss://` for TLS) and its host
is not used (docs/capacity.md: what a failover loses). Sentinels that ask for a password
(`requirepass`, or an ACL user) are given `REDIS_SENTINEL_PASSWORD` (and
`REDIS_SENTINEL_USERNAME`); with `REDIS_SENTINEL_TLS` they are asked over TLS, with the
TLS options of `REDIS_URL`'s query (`ssl_ca_certs`, `ssl_certfile`, ...)."""

from __future__ import annotations

from typing import Any

import msgspec
import redis.asyncio as aioredis
from redis.asyncio.connection import SSLConnection, UnixDomainSocketConnection, parse_url
from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import Sentinel
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

# Seconds a sentinel gets to answer where the master is, per sentinel asked in turn.
SENTINEL_TIMEOUT = 1.0


class SentinelTarget(msgspec.Struct, frozen=True):
    """The master's name as the sentinels know it, where the sentinels listen, and how
    they are asked: the credentials they want (their own, not the master's) and TLS."""

    master: str
    addresses: tuple[tuple[str, int], ...]
    username: str | None = None
    password: str | None = None
    tls: bool = False

    def __repr__(self) -> str:  # never the password, wherever a target is shown
        shown = "'***'" if self.password else "None"
        return (
            f"SentinelTarget(master={self.master!r}, addresses={self.addresses!r}, "
            f"username={self.username!r}, password={shown}, tls={self.tls!r})"
        )


def parse_sentinels(text: str) -> tuple[tuple[str, int], ...]:
    """`host:port,host:port,...` (an IPv6 address in brackets: `[::1]:26379`); the port
    defaults to Sentinel's 26379. ValueError names what is wrong."""
    found = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        host, _, port = item.rpartition(":") if not item.endswith("]") and ":" in item else (item, "", "26379")
        host = host.removeprefix("[").removesuffix("]")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"REDIS_SENTINELS: {item!r} is not host:port")
        found.append((host, int(port)))
    if not found:
        raise ValueError("REDIS_SENTINELS: no sentinel address")
    return tuple(found)


def create_redis(url: str, sentinel: SentinelTarget | None = None) -> aioredis.Redis:
    """Every client of the platform is made here. A connection error is retried once, on
    a new connection: a pooled connection made before Redis restarted fails at its next
    use, and without a retry (redis-py 8 retries nothing for a client made from a URL,
    not even its health check) that request answered 503 although Redis was back. A
    time-out is not retried (`retry_on_timeout=False`): a Redis that does not answer
    must cost a request one `socket_timeout`, not two."""
    options: dict[str, Any] = {
        "socket_timeout": 2.0,
        "socket_connect_timeout": 2.0,
        "health_check_interval": 30,
        "retry_on_timeout": False,
        "retry": Retry(NoBackoff(), 1, supported_errors=(RedisConnectionError,)),
    }
    if sentinel is None:
        return aioredis.from_url(url, **options)
    return _through_sentinels(url, sentinel, options)


class SentinelRedis(aioredis.Redis):
    """A client of the master the sentinels name, closing its sentinel clients with it
    (redis-py leaves them to the caller)."""

    sentinels: Sentinel | None = None

    async def aclose(self, close_connection_pool: bool | None = None) -> None:
        await super().aclose(close_connection_pool)
        if self.sentinels is not None:
            await self.sentinels.aclose()


def _through_sentinels(url: str, target: SentinelTarget, options: dict[str, Any]) -> aioredis.Redis:
    """The URL's database, credentials and TLS; the master's address from the sentinels,
    asked on every new connection (redis-py's SentinelConnectionPool). A connection to a
    master since demoted fails with a connection error (READONLY) and is made again."""
    kwargs: dict[str, Any] = dict(parse_url(url))
    connection_class = kwargs.pop("connection_class", None)
    if connection_class is UnixDomainSocketConnection:
        raise ValueError("REDIS_URL: with Sentinel, a redis:// or rediss:// URL (the sentinels give the address)")
    for name in ("host", "port", "path"):
        kwargs.pop(name, None)
    if connection_class is SSLConnection:
        kwargs["ssl"] = True  # the pool picks its TLS connection class from this
    sentinels = Sentinel(list(target.addresses), sentinel_kwargs=_asking_sentinels(target, kwargs), **options, **kwargs)
    client = sentinels.master_for(target.master, redis_class=SentinelRedis)
    assert isinstance(client, SentinelRedis)
    client.sentinels = sentinels
    return client


def _asking_sentinels(target: SentinelTarget, url_kwargs: dict[str, Any]) -> dict[str, Any]:
    """How each sentinel is reached: short time-outs and no retry (the next sentinel is
    asked instead: redis-py's default retried a refusal three times with back-off, 7 s
    before a wrong password was said), the sentinels' own credentials, and TLS with the
    URL's TLS options where they speak it. redis-py gives a sentinel none of the master's
    settings (`sentinel_kwargs`)."""
    asked: dict[str, Any] = {
        "socket_timeout": SENTINEL_TIMEOUT,
        "socket_connect_timeout": SENTINEL_TIMEOUT,
        "retry": Retry(NoBackoff(), 0),
    }
    if target.username:
        asked["username"] = target.username
    if target.password:
        asked["password"] = target.password
    if target.tls:
        asked["ssl"] = True
        asked.update({name: value for name, value in url_kwargs.items() if name.startswith("ssl_")})
    return asked


async def sentinels_said(client: aioredis.Redis) -> list[str]:
    """What each sentinel of a Sentinel client answers a PING now, `host:port: ...`; [] for
    a client of one server. Asked when no master was found, so that the cause is named (a
    password refused, TLS spoken to a sentinel in plain text) rather than only "no master"."""
    if not isinstance(client, SentinelRedis) or client.sentinels is None:
        return []
    said = []
    for sentinel in client.sentinels.sentinels:
        asked = sentinel.connection_pool.connection_kwargs
        where = f"{asked.get('host')}:{asked.get('port')}"
        try:
            await sentinel.ping()
        except RedisError as exc:
            said.append(f"{where}: {type(exc).__name__}: {exc}")
        else:
            said.append(f"{where}: answers, but names no master it trusts by that name")
    return said


def deployment_channel(client: aioredis.Redis, name: str) -> str:
    """The pub/sub channel `name` of the deployment this client belongs to. Redis delivers
    a message to every subscriber on the server, whatever database it selected, so the
    channel names the database too: two deployments sharing a Redis server (or two test
    runs sharing one) never hear each other's key changes or revocations."""
    return f"{name}:{client.connection_pool.connection_kwargs.get('db', 0)}"
