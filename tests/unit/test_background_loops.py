"""Stopping a service's background loops (courseschool.common.background): a loop that
swallows its cancellation, as the Redis client does when it lands inside one of its own
time-outs, still ends on the stop flag; a loop that ends on neither is left behind after
the grace, logged, and never holds the worker's shutdown."""

from __future__ import annotations

import asyncio
import time

import structlog

from courseschool.common.background import BackgroundLoop


class Forgiving(BackgroundLoop):
    """Turns every cancellation into one more round, as a loop that forgives a lost
    store does when the client reports the cancellation as its own time-out."""

    name = "forgiving"

    def __init__(self) -> None:
        super().__init__()
        self.rounds = 0

    async def _run(self) -> None:
        while not self.stopping:
            self.rounds += 1
            try:
                await asyncio.sleep(0.05)
            except asyncio.CancelledError:
                asyncio.current_task().uncancel()  # type: ignore[union-attr]


class Stubborn(Forgiving):
    """Ends on neither the flag nor a cancellation: only when the test lets it go."""

    name = "stubborn"

    def __init__(self) -> None:
        super().__init__()
        self.let_go = asyncio.Event()

    async def _run(self) -> None:
        while not self.let_go.is_set():
            try:
                await asyncio.sleep(0.05)
            except asyncio.CancelledError:
                asyncio.current_task().uncancel()  # type: ignore[union-attr]


class Failing(BackgroundLoop):
    name = "failing"

    async def _run(self) -> None:
        raise LookupError("gone")


async def test_a_loop_that_swallows_its_cancellation_ends_on_the_flag() -> None:
    loop = Forgiving()
    loop.start()
    await asyncio.sleep(0.12)
    assert loop.running and loop.rounds >= 2
    began = time.monotonic()
    assert await asyncio.wait_for(loop.stop(grace=5), 10) is True
    assert time.monotonic() - began < 1, "ended on the flag, not at the grace"
    assert not loop.running


async def test_a_loop_that_never_ends_is_left_after_the_grace_and_logged() -> None:
    loop = Stubborn()
    loop.start()
    task = loop._task
    assert task is not None
    await asyncio.sleep(0.06)
    try:
        with structlog.testing.capture_logs() as logs:
            began = time.monotonic()
            assert await loop.stop(grace=0.3) is False
            waited = time.monotonic() - began
        assert 0.3 <= waited < 2
        assert {
            "event": "background_loop_left_running",
            "loop": "stubborn",
            "grace": 0.3,
            "log_level": "warning",
        } in logs
        assert not loop.running and not task.done()  # forgotten by the loop object, still running
    finally:
        loop.let_go.set()  # the test's session event loop must not be left with it
        await asyncio.wait_for(task, 5)


async def test_a_failed_loop_is_logged_with_its_error_and_a_second_stop_is_harmless() -> None:
    loop = Failing()
    loop.start()
    await asyncio.sleep(0.01)
    with structlog.testing.capture_logs() as logs:
        assert await loop.stop() is True
        assert await loop.stop() is True
    assert [e for e in logs if e["event"] == "background_loop_failed"] == [
        {"event": "background_loop_failed", "loop": "failing", "error": "LookupError", "log_level": "warning"}
    ]


async def test_stop_before_start_does_nothing() -> None:
    loop = Forgiving()
    assert await loop.stop() is True
    assert loop.rounds == 0 and loop.stopping
