"""The machine under the bench: a fixed piece of CPU work that says whether its speed held
between two moments, its busy CPU time, and where that time went during a run (this
bench's processes, PostgreSQL and Redis, everything else)."""

from __future__ import annotations

import subprocess
import sys
import time

import psutil

from bench.harness import CORES, SERVER_CORE, pinned

# A fixed piece of CPU work (the interpreter, dicts, JSON, a hash: what a request of ours
# spends its time on), run on the server's core in a process of its own.
_PROBE = """
import hashlib, json, time
from tests.support.net import free_port
def unit():
    d = {"k%d" % i: [i, str(i), {"v": i * 2}] for i in range(40)}
    s = json.dumps(d, sort_keys=True)
    hashlib.sha256(s.encode()).digest()
    return sorted(json.loads(s))
runs = []
for _ in range(25):
    started = time.process_time()
    for _ in range(300):
        unit()
    runs.append((time.process_time() - started) / 300 * 1e6)
    time.sleep(0.04)  # spread over about 1.4 s, so that a burst of other work spoils only some runs
print(min(runs))
"""


def speed_probe(tries: int = 3, pause: float = 1.0) -> float:
    """µs of CPU one unit of the fixed work takes on the server's core now: the least
    disturbed of 25 runs spread over more than a second, in the best of `tries` processes
    `pause` seconds apart (other work on the core, such as the writeback after a bulk
    insert, can only make a probe slower; a machine that really slowed down stays slow
    through all of them). The same code on the same machine should always take the same
    time; when it does not, the machine itself got faster or slower (a neighbour on the
    host, the host's clock), and figures taken at the two moments do not compare."""
    cmd = pinned([sys.executable, "-c", _PROBE], SERVER_CORE)
    times = []
    for attempt in range(tries):
        if attempt:
            time.sleep(pause)
        times.append(float(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout))
    return min(times)


def steady(before: float, after: float) -> bool:
    """Whether two probes agree within the probe's own noise (5%)."""
    return abs(after / before - 1) < 0.05


def drift(before: float, after: float) -> str:
    """How the machine's speed moved between two probes, in words."""
    change = after / before - 1
    if steady(before, after):
        return f"steady, {change:+.0%}"
    return f"{'slower' if change > 0 else 'faster'} by {abs(change):.0%}: figures from the two moments do not compare"


def busy_seconds() -> float:
    """CPU time the whole machine has spent busy (every process, every core) so far."""
    times = psutil.cpu_times()
    return sum(times) - times.idle - getattr(times, "iowait", 0.0)


class MachineLoad:
    """Where the machine's CPU time went between start() and stop(): this bench's own
    processes (reaped children included: servers, wrk), PostgreSQL and Redis (shared
    with whatever else uses them), and everything else. On a quiet machine the last is
    near zero; when it is not, the figures of the run are not comparable with a quiet run."""

    def __init__(self) -> None:
        self._start: dict[str, float] = {}
        self._shared: dict[tuple[int, float], float] = {}
        self.shares: dict[str, float] = {}
        self.probe: list[float] = []  # speed_probe() at start() and at stop()

    @staticmethod
    def _own(proc: psutil.Process) -> float:
        t = proc.cpu_times()
        return t.user + t.system + t.children_user + t.children_system

    def _sample(self) -> tuple[dict[str, float], dict[tuple[int, float], float]]:
        busy = busy_seconds()
        shared: dict[tuple[int, float], float] = {}
        for proc in psutil.process_iter(["name", "ppid", "create_time"]):
            try:
                name = proc.info["name"] or ""
                parent = psutil.Process(proc.info["ppid"]).name() if proc.info["ppid"] else ""
                # postmasters (their exited backends are in their children's times) and Redis
                if (name.startswith("postgres") and not parent.startswith("postgres")) or name == "redis-server":
                    shared[proc.pid, proc.info["create_time"]] = self._own(proc)
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
        return {"busy": busy, "ours": self._own(psutil.Process()), "wall": time.monotonic()}, shared

    def start(self) -> None:
        self.probe = [speed_probe()]
        self._start, self._shared = self._sample()

    def stop(self) -> None:
        end, shared = self._sample()
        self.probe.append(speed_probe())
        delta = {k: end[k] - self._start[k] for k in end}
        # servers that started during the run count whole; those that stopped are lost (counted as others)
        delta["shared"] = sum(cpu - self._shared.get(key, 0.0) for key, cpu in shared.items())
        capacity = delta["wall"] * CORES
        others = max(0.0, delta["busy"] - delta["ours"] - delta["shared"])
        self.shares = {
            "ours": delta["ours"] / capacity,
            "shared": delta["shared"] / capacity,
            "others": others / capacity,
            "minutes": delta["wall"] / 60,
        }

    def note(self) -> str:
        s = self.shares
        verdict = (
            "quiet"
            if s["others"] < 0.05
            else "BUSY: other processes competed for the cores, the figures are not comparable with a quiet run"
        )
        first, last = self.probe
        return (
            f"Machine during the run ({s['minutes']:.0f} min, {CORES} cores): this bench's processes used "
            f"{s['ours']:.0%} of the CPU time, PostgreSQL and Redis {s['shared']:.0%}, everything else "
            f"{s['others']:.0%} ({verdict}). Its speed: a fixed piece of CPU work on the server's core "
            f"(`machine.speed_probe`) took {first:.1f} µs at the start and {last:.1f} µs at the end "
            f"({drift(first, last)})."
        )
