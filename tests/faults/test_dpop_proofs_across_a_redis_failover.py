"""Issue 41, item 2: what a Redis failover loses of the DPoP replay memory (RFC 9449
§11.1), and what bounds the replay it allows. Two processes' checkers (two stores, two
clients of the sentinels, one clock) over a master, its replica and three sentinels
(sentinels.RedisWithSentinels); the master is killed and the replica promoted:

- a proof id the master had copied to the replica is refused everywhere after it;
- a proof taken while Redis was away lives in that process's memory only: that process
  refuses it after the failover (it used to ask the new master alone, which never heard
  of it); another process accepts it once, as Redis lost it, and only while the proof's
  `iat` is within DPOP_PROOF_WINDOW of its clock: one second later it is refused for its
  age, whatever Redis remembers.

A proof id the master acknowledged but had not copied yet is lost the same way (the
replication is asynchronous); the same bound holds (docs/capacity.md)."""

from __future__ import annotations

import asyncio
import time

import pytest
import redis.asyncio as aioredis
import redis.exceptions

from courseschool.common.clock import FrozenClock
from courseschool.common.dpop import DpopChecker, DpopPolicy, ProofTarget
from courseschool.common.dpop_store import DPOP_KEYS, RedisDpopStore
from courseschool.common.errors import InvalidDpopProofError
from courseschool.common.redis import SentinelTarget, create_redis, parse_sentinels

from ..support.dpop_proofs import DpopKey
from .sentinels import MASTER_NAME, RedisWithSentinels
from .test_redis_failover import sentinels  # noqa: F401 - the fixture

WINDOW = 60  # DPOP_PROOF_WINDOW's default
URL = "https://school.example/api/oauth/token"


def _at(proof: str) -> ProofTarget:
    return ProofTarget(method="POST", url=URL, proofs=(proof,))


async def _refused(checker: DpopChecker, proof: str, why: str) -> None:
    with pytest.raises(InvalidDpopProofError, match=why):
        await checker.check(_at(proof))


async def _reaches_the_master(client: aioredis.Redis, bound: float = 30.0) -> None:
    """A condition, not a wait: the client answers a write on the promoted master (right
    after the promotion, a client's first connections may still find no master, and the
    checker then holds proofs in its process's memory, as while Redis is away)."""
    deadline = time.monotonic() + bound
    while True:
        try:
            await client.set("dpop-test:reachable", "1", ex=5)
            return
        except (redis.exceptions.RedisError, OSError):  # no master yet, a read-only replica, a reset connection
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)


async def test_a_proof_id_redis_lost_is_replayable_once_and_only_within_its_iat_window(
    sentinels: RedisWithSentinels,  # noqa: F811 - the fixture
) -> None:
    target = SentinelTarget(MASTER_NAME, parse_sentinels(sentinels.sentinels))
    clients = [create_redis(sentinels.url, target) for _ in range(2)]
    clock = FrozenClock(int(time.time()))
    here, elsewhere = (
        DpopChecker(RedisDpopStore(client, DPOP_KEYS, clock=clock), DpopPolicy(window=WINDOW), clock)
        for client in clients
    )
    key = DpopKey("ES256")
    try:
        copied = key.proof("POST", URL, iat=clock.now())
        await here.check(_at(copied))
        assert await clients[0].execute_command("WAIT", 1, 5000) == 1  # on the replica too

        sentinels.kill_master()
        taken_while_away = [key.proof("POST", URL, iat=clock.now()) for _ in range(2)]
        for proof in taken_while_away:
            await here.check(_at(proof))  # Redis is away: this process's memory takes them
        await asyncio.to_thread(sentinels.wait_for_promotion)
        for client in clients:  # the sentinels name the new master to each client: wait until both reach it
            await _reaches_the_master(client)

        for checker in (here, elsewhere):  # the promoted replica has the copied id
            await _refused(checker, copied, "used before")
        for proof in taken_while_away:  # this process remembers what it took meanwhile
            await _refused(here, proof, "used before")

        # Another process: Redis never heard of them. Replayable once, at the last second
        # of the window at the latest...
        clock.advance(WINDOW)
        assert (await elsewhere.check(_at(taken_while_away[0]))).jkt == key.jkt
        await _refused(elsewhere, taken_while_away[0], "used before")
        # ... and no longer once the proof's iat is outside the window.
        clock.advance(1)
        await _refused(elsewhere, taken_while_away[1], "iat is not within")
    finally:
        for client in clients:
            await client.aclose()
