"""What every bench scenario shares: pinning, starting a server, running wrk and reading
its figures (with the checks our Lua scripts print), medians, RSS. Free ports come from
tests/support/net.py, which the tests use too."""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import time
from pathlib import Path

import httpx
import psutil

from bench.cpu import redis_pid
from tests.support.net import free_port

ROOT = Path(__file__).resolve().parent.parent
CORES = os.cpu_count() or 1
SERVER_CORE, LOAD_CORE = 0, 1


def pinned(cmd: list[str], core: int | None) -> list[str]:
    """`cmd` on one core (None: wherever the kernel puts it)."""
    if core is None or CORES < 2 or not shutil.which("taskset"):
        return cmd
    return ["taskset", "-c", str(core), *cmd]


def start(
    cmd: list[str], env: dict[str, str], url: str, log: Path, *, core: int | None = SERVER_CORE, cwd: Path | None = None
) -> subprocess.Popen[bytes]:
    """Start a server and wait until `url` answers 200 (probes need the internal token
    on the production all-in-one: sent when the environment has one)."""
    headers = {"Authorization": f"Bearer {env['INTERNAL_TOKEN']}"} if env.get("INTERNAL_TOKEN") else {}
    process = subprocess.Popen(pinned(cmd, core), env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT, cwd=cwd)
    deadline = time.monotonic() + 60
    with httpx.Client(timeout=1, headers=headers) as http:  # one TLS context for the whole wait
        while time.monotonic() < deadline:
            if process.poll() is not None:
                break
            try:
                if http.get(url).status_code == 200:
                    return process
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
    process.kill()
    raise RuntimeError(f"did not start: {log.read_text()[-2000:]}")


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(5)


def wrk(
    url: str,
    seconds: float,
    *,
    script: str | None = None,
    env: dict[str, str] | None = None,
    connections: int = 32,
    threads: int = 1,
    core: int | None = LOAD_CORE,
) -> dict[str, float]:
    """One wrk run. `failures` counts non-2xx answers plus what our Lua scripts refuse
    (`bench-check` line: an answer without what it must carry, a single-use body or token
    missing); a run with failures is not a valid figure."""
    cmd = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency", url]
    if script:
        cmd[1:1] = ["-s", str(ROOT / "bench" / "lua" / script)]
    if CORES < 2:
        core = None
    done = subprocess.run(
        pinned(cmd, core),
        capture_output=True,
        text=True,
        timeout=seconds + 60,
        env={**os.environ, "WRK_THREADS": str(threads), **(env or {})},
    )
    out = done.stdout
    found = re.search(r"Requests/sec:\s+([\d.]+)", out)
    if found is None:
        raise RuntimeError(f"wrk failed: {done.stderr[-2000:]}{out[-2000:]}")
    total = int(re.search(r"(\d+) requests in", out).group(1))
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    sockets = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    check = re.search(r"bench-check failures=(\d+) starved=(\d+)", out)
    non2xx = int(bad.group(1)) if bad else 0
    failures = non2xx + (sum(int(x) for x in sockets.groups()) if sockets else 0)
    if check:
        failures = max(failures, int(check.group(1)) + int(check.group(2)))
    return {
        "rps": float(found.group(1)),
        "p50": _ms(out, "50%"),
        "p99": _ms(out, "99%"),
        "errors": (non2xx / total) if total else 0.0,
        "requests": float(total),
        "failures": float(failures),
    }


def _ms(out: str, label: str) -> float:
    value, unit = re.search(rf"{label}\s+([\d.]+)(us|ms|s)", out).groups()
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def median_of(runs: list[dict[str, float]]) -> dict[str, float]:
    """Medians per figure; failures are added up (one failed run taints the figure)."""
    out = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    if "failures" in runs[0]:
        out["failures"] = sum(r["failures"] for r in runs)
    return out


def rss_mb(process: subprocess.Popen[bytes] | int) -> float:
    """Resident memory of a process and its children (granian's workers), MiB."""
    proc = psutil.Process(process if isinstance(process, int) else process.pid)
    procs = [proc, *proc.children(recursive=True)]
    total = 0
    for p in procs:
        try:
            if p.name() == "taskset":
                continue
            total += p.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total / 2**20


class RedisServer:
    """A Redis server of the bench's own, on a free port of the loopback, unpinned like the
    machine's PostgreSQL: the same redis-server the machine runs, with the machine's
    settings (no snapshots, no append-only file). Its CPU time is then the bench's alone,
    and nothing the bench writes can touch another user's data; it is stopped (and its
    data gone) at the end."""

    def __init__(self, log: Path) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        cmd = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen(cmd, stdout=log.open("wb"), stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while redis_pid(self.url) != self.process.pid:
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.process.kill()
                raise RuntimeError(f"redis-server did not start: {log.read_text()[-2000:]}")
            time.sleep(0.1)

    def stop(self) -> None:
        stop(self.process)
