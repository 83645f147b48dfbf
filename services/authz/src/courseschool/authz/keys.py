"""The signing keys this replica signs with.

Loaded at start (with Postgres down the service starts anyway, not ready, and the
maintenance loop loads them once it is back), then reloaded every
KEY_RELOAD_INTERVAL after the due rotation steps, so every replica signs with the
key every other replica signs with.

A rotation made on demand (`admin keys rotate`, above all `--immediate` for a key that
must stop signing now) is announced on the Redis channel `courseschool:signing-keys:<db>`
(<db>: the Redis database in use),
beside the revocations' channel: every running replica listens and reloads at once, and
reloads again each time it subscribes anew (an announcement made while it was not
listening is not lost for long). Redis may lose an announcement; the reload every
KEY_RELOAD_INTERVAL stays the bound.

Loads are taken one at a time (`_loading`): a reload told of a change and the periodic
maintenance may run at once, and a load that read the table first must not replace, when
it finishes last, the key set a later load read (the newest key would go missing until
the next reload).
"""

from __future__ import annotations

import asyncio
import contextlib

import asyncpg
import redis.asyncio as aioredis
import redis.exceptions
from redis.asyncio.client import PubSub

from courseschool.common.background import STOP_GRACE, BackgroundLoop
from courseschool.common.errors import TemporarilyUnavailableError
from courseschool.common.logging import get_logger
from courseschool.common.metrics import SIGNING_KEY_ACTIVATED
from courseschool.common.redis import create_redis, deployment_channel
from courseschool.common.settings import BaseSettings

from .storage.keys import KeyRing, PgKeyStore

log = get_logger(__name__)

CHANNEL = "courseschool:signing-keys"


class SigningKeys:
    def __init__(self, store: PgKeyStore) -> None:
        self.store = store
        self._ring: KeyRing | None = None
        self._loading = asyncio.Lock()  # one load at a time: the last to read is the last to set

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
            async with self._loading:
                self._ring = self._loaded(await self.store.ensure_active())
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
            log.warning("signing_keys_unavailable_at_start", error=type(exc).__name__)

    async def maintain(self) -> None:
        """Take due rotation steps, then reload."""
        async with self._loading:
            if self._ring is None:
                self._ring = self._loaded(await self.store.ensure_active())
            await self.store.maintain()
            self._ring = self._loaded(await self.store.load())

    async def reload(self) -> None:
        """Load the key set again now (told of a rotation); on failure keep the last one:
        the maintenance loop tries again."""
        async with self._loading:
            if self._ring is None:
                return  # not loaded yet: the maintenance loop loads it
            try:
                self._ring = self._loaded(await self.store.load())
            except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
                log.warning("signing_keys_reload_failed", error=type(exc).__name__)
                return
        log.info("signing_keys_reloaded")


def key_channel(client: aioredis.Redis) -> str:
    """The channel of this deployment's key changes."""
    return deployment_channel(client, CHANNEL)


async def announce_key_change(client: aioredis.Redis) -> int:
    """Tell every running replica that the key set changed; how many servers heard it
    (0 if Redis could not carry it: they reload within KEY_RELOAD_INTERVAL)."""
    try:
        return int(await client.publish(key_channel(client), b"reload"))
    except (redis.exceptions.RedisError, OSError) as exc:
        log.warning("signing_key_announcement_failed", error=type(exc).__name__)
        return 0


class KeyChangeFeed(BackgroundLoop):
    """Reloads the keys each time a change is announced, from `start` to `stop`.

    Reads its subscription on the connection itself: redis-py's reader would reconnect
    and subscribe again unseen, missing what was announced in between. Without Redis it
    tries again after `retry` seconds, doubling up to thirty."""

    name = "signing_key_feed"

    def __init__(self, keys: SigningKeys, settings: BaseSettings, *, retry: float = 1.0) -> None:
        assert settings.redis_url  # backing_services refuses to start without it
        self._keys = keys
        # A client of its own: its subscription's connection, lost and given back when
        # Redis restarts, must not change which of the shared pool's connections the
        # requests use (one closed by the restart fails the request that takes it).
        self._client = create_redis(settings.redis_url, settings.redis_sentinel)
        self._retry = retry
        # Set while it follows the channel (subscribed, and the keys reloaded after it);
        # a change announced from then on reaches this process.
        self.following = asyncio.Event()
        super().__init__()

    async def stop(self, grace: float = STOP_GRACE) -> bool:
        stopped = await super().stop(grace)
        with contextlib.suppress(Exception):
            await self._client.aclose()
        return stopped

    async def _run(self) -> None:
        delay = self._retry
        while not self.stopping:
            pubsub = self._client.pubsub()
            listening = False
            try:
                await pubsub.subscribe(key_channel(self._client))
                listening, delay = True, self._retry
                await self._keys.reload()  # whatever changed while this process was not listening
                self.following.set()
                await self._follow(pubsub)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - whatever broke the subscription: subscribe again
                if listening:  # once per loss, not once per attempt while Redis is away
                    log.warning("signing_key_feed_lost", error=type(exc).__name__)
            finally:
                self.following.clear()
                with contextlib.suppress(Exception):  # closing a connection that is already gone
                    await pubsub.aclose()
            if not self.stopping:
                await asyncio.sleep(delay)
                delay = min(delay * 2, 30.0)

    async def _follow(self, pubsub: PubSub) -> None:
        connection = pubsub.connection
        assert connection is not None  # subscribed
        while not self.stopping:
            if not connection.is_connected:
                raise ConnectionError("the connection closed")
            response = await connection.read_response(timeout=0.25, disconnect_on_error=False, push_request=True)
            if response is None:
                continue
            message = await pubsub.handle_message(response, ignore_subscribe_messages=True)
            if message is not None and message.get("type") == "message":
                await self._keys.reload()
