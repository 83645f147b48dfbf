"""RFC 9449 §11.1: a proof's `jti` is remembered for as long as the proof could be
accepted, so a replay is refused at every second of its window and never slips through
at its edge. The window is `iat` ± `window` seconds on the checker's clock (whole
seconds); the memory is the production in-memory store on the same injected clock, so
the test walks time second by second without sleeping. (The replay memory used to be
twice the window from the check, which ended one second before a proof made at the window's
future edge stopped being accepted.)"""

from __future__ import annotations

import pytest

from courseschool.common.clock import FrozenClock
from courseschool.common.dpop import DpopChecker, DpopPolicy, ProofTarget, replay_ttl
from courseschool.common.dpop_store import MemoryDpopStore
from courseschool.common.errors import InvalidDpopProofError

from ..support.dpop_proofs import DpopKey

NOW = 1_700_000_000
WINDOW = 60
URL = "https://school.example/api/oauth/token"


@pytest.mark.parametrize("iat", [NOW - WINDOW, NOW - 1, NOW, NOW + 1, NOW + WINDOW - 0.5, NOW + WINDOW])
async def test_a_replay_is_refused_at_every_second_the_proof_is_accepted(iat: float) -> None:
    clock = FrozenClock(NOW)
    dpop = DpopChecker(MemoryDpopStore(clock=clock), DpopPolicy(window=WINDOW), clock)
    key = DpopKey("ES256")
    proof = key.proof("POST", URL, claims={"iat": iat})
    assert (await dpop.check(ProofTarget(method="POST", url=URL, proofs=(proof,)))).jkt == key.jkt
    replays_refused = 0
    while abs(clock.now() - iat) <= WINDOW:  # every second the proof's iat is acceptable
        with pytest.raises(InvalidDpopProofError, match="used before"):
            await dpop.check(ProofTarget(method="POST", url=URL, proofs=(proof,)))
        replays_refused += 1
        clock.advance(1)
    assert replays_refused == int(iat) + WINDOW - NOW + 1  # the walk covered the whole window
    with pytest.raises(InvalidDpopProofError, match="iat is not within"):  # then refused for its age
        await dpop.check(ProofTarget(method="POST", url=URL, proofs=(proof,)))


def test_the_memory_is_as_long_as_the_acceptance_and_never_zero() -> None:
    assert replay_ttl(NOW + WINDOW, now=NOW, window=WINDOW) == 2 * WINDOW + 1  # through the second NOW + 120
    assert replay_ttl(NOW, now=NOW, window=WINDOW) == WINDOW + 1
    assert replay_ttl(NOW - WINDOW, now=NOW, window=WINDOW) == 1  # accepted through this second only
