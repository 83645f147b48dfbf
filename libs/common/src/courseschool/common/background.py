"""The long-running loops a service runs beside its requests (the revocation and key
feeds, the activity and event flushes, the webhook outbox, maintenance): started with the
app's lifespan and stopped with it, within a bound.

A stop sets a flag the loop checks as well as cancelling its task. The Redis client can
swallow a cancellation that lands inside one of its own time-outs: it surfaces as a
TimeoutError, which a loop that forgives a lost store then forgives too, and the loop
runs on. Waiting for such a task without a bound held a worker's shutdown until the
process manager killed it (granian after 20 s), so the wait is bounded and a loop left
running is logged, never waited for."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod

from courseschool.common.logging import get_logger

log = get_logger(__name__)

STOP_GRACE = 3.0  # seconds a loop has to end once asked; well inside a pod's termination grace


class BackgroundLoop(ABC):
    """A loop of this process: `start()` once the app is up, `await stop()` on the way
    out. Subclasses write `_run()` as `while not self.stopping: ...`."""

    name = "background"

    def __init__(self) -> None:
        self.stopping = False
        self._task: asyncio.Task[None] | None = None

    @abstractmethod
    async def _run(self) -> None: ...

    def start(self) -> None:
        self.stopping = False
        self._task = asyncio.create_task(self._run(), name=self.name)

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def stop(self, grace: float = STOP_GRACE) -> bool:
        """Ask the loop to end and wait at most `grace` seconds; whether it ended."""
        self.stopping = True
        task, self._task = self._task, None
        if task is None:
            return True
        task.cancel()
        done, _ = await asyncio.wait([task], timeout=grace)
        if not done:
            log.warning("background_loop_left_running", loop=self.name, grace=grace)
            return False
        if not task.cancelled() and (error := task.exception()) is not None:
            log.warning("background_loop_failed", loop=self.name, error=type(error).__name__)
        return True
