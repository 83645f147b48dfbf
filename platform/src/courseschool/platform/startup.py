"""What `run` shows and does while it starts: a line per step, the time it took to be
ready once /readyz answers, and the stop signals that unwind a start-up half done."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
import urllib.request
from collections.abc import Iterator


class StartUp:
    """What start-up is doing: one line as each step begins (a log line of its own may
    follow), then, once /readyz answers, how long it took to be ready and what took the
    time: from this process's start (the interpreter and the imports included) and, when
    `make run` says when it began (RUN_STARTED_AT, seconds since the epoch), from there
    too (its install included)."""

    READY_WITHIN = 120.0  # stop asking after this; the log says what went wrong

    def __init__(self) -> None:
        import psutil

        now, wall = time.monotonic(), time.time()
        self.began = now - max(wall - psutil.Process().create_time(), 0.0)
        try:
            make: float | None = float(os.environ.get("RUN_STARTED_AT", ""))
        except ValueError:
            make = None
        self.make_began = None if make is None else now - max(wall - make, 0.0)
        if self.make_began is not None:  # the process's start time is kept to the second or so
            self.began = max(self.began, self.make_began)
        self.steps: list[str] = [f"starting Python and the code {now - self.began:.1f} s"]

    @contextlib.contextmanager
    def step(self, what: str, detail: str = "") -> Iterator[None]:
        print(f"  {what}{f' ({detail})' if detail else ''} ...", flush=True)
        began = time.monotonic()
        yield
        self.steps.append(f"{what} {time.monotonic() - began:.1f} s")

    def ready_line(self, now: float, server: float) -> str:
        parts = ", ".join([*self.steps, f"the server and its apps {server:.1f} s"])
        line = f"\n  Ready in {now - self.began:.1f} s ({parts})"
        if self.make_began is not None:
            line += f"; {now - self.make_began:.1f} s since `make run`"
        return line + "\n"

    def announce_ready(self, host: str, port: int) -> None:
        """Asks /readyz from a thread of its own (granian takes this one), then prints."""
        probe_host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
        url = f"http://{f'[{probe_host}]' if ':' in probe_host else probe_host}:{port}/readyz"
        serving = time.monotonic()
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never via an HTTP(S)_PROXY

        def wait() -> None:
            while time.monotonic() - serving < self.READY_WITHIN:
                try:
                    with direct.open(url, timeout=1.0) as answer:
                        if answer.status == 200:
                            now = time.monotonic()
                            print(self.ready_line(now, now - serving), flush=True)
                            return
                except OSError:
                    pass  # not listening yet, or not ready (503)
                time.sleep(0.1)

        threading.Thread(target=wait, name="ready-announcer", daemon=True).start()


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


class StartUpSignals:
    """Until granian takes over (it handles SIGINT and SIGTERM, and for `run` SIGHUP and
    SIGQUIT): every stop signal unwinds start-up as Ctrl-C does, so the embedded servers
    started so far are stopped (by default SIGTERM and SIGHUP end the process at once).
    While a server is being started, the signal waits until it is up (and known, so it
    can be stopped)."""

    def __init__(self) -> None:
        self._holding = False
        self._received: int | None = None
        for stop in STOP_SIGNALS:
            signal.signal(stop, self._handle)

    def _handle(self, signum: int, frame: object) -> None:
        if self._holding:
            self._received = signum
            return
        raise KeyboardInterrupt(signal.Signals(signum).name)

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        self._holding = True
        try:
            yield
        finally:
            self._holding = False
        if self._received is not None:
            raise KeyboardInterrupt(signal.Signals(self._received).name)

    @staticmethod
    def ignore() -> None:
        """Stopping already: let the servers stop."""
        for stop in STOP_SIGNALS:
            signal.signal(stop, signal.SIG_IGN)
