"""CPU accounting from /proc: the CPU time of a process tree (reaped children included), of
given processes, of the PostgreSQL backends of a database and of a Redis server on this
machine, as samples whose difference is the CPU a run spent."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

# CPU accounting from /proc: a sample maps each counted process, keyed by (pid, start time)
# so that a reused pid is another process, to its CPU seconds so far (utime + stime).
Sample = dict[tuple[int, int], float]
CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat(pid: int) -> tuple[int, int, float, float] | None:
    """(parent pid, start time in ticks, own CPU seconds, reaped children's CPU seconds) of
    a process from /proc/PID/stat; None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    # proc(5): the command name is in parentheses and may hold spaces; the fields after it
    # start at the state (field 3): ppid is field 4, utime 14, stime 15, cutime 16,
    # cstime 17, starttime 22.
    fields = text[text.rindex(")") + 2 :].split()
    utime, stime, cutime, cstime = (int(f) for f in fields[11:15])
    return int(fields[1]), int(fields[19]), (utime + stime) / CLOCK_TICKS, (cutime + cstime) / CLOCK_TICKS


def _pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def descendants(pid: int) -> list[int]:
    """The live processes below `pid` (children, theirs, ...), from /proc."""
    children: dict[int, list[int]] = {}
    for other in _pids():
        stat = _stat(other)
        if stat is not None:
            children.setdefault(stat[0], []).append(other)
    found, todo = [], list(children.get(pid, []))
    while todo:
        child = todo.pop()
        found.append(child)
        todo += children.get(child, [])
    return found


def tree_sample(pid: int) -> Sample:
    """The CPU time of a process and everything below it, reaped children included: each
    live process's own time and that of the children it has reaped. When a child exits
    and is reaped, its time moves from its own entry into its parent's, so the sum goes on
    counting it (one entry, keyed by the root). Empty when the root is gone."""
    root = _stat(pid)
    if root is None:
        return {}
    total = root[2] + root[3]
    for child in descendants(pid):
        stat = _stat(child)
        if stat is not None:
            total += stat[2] + stat[3]
    return {(pid, root[1]): total}


def processes_sample(pids: list[int]) -> Sample:
    """Each live process's own CPU time (those already gone are left out)."""
    out: Sample = {}
    for pid in pids:
        stat = _stat(pid)
        if stat is not None:
            out[pid, stat[1]] = stat[2]
    return out


def cpu_spent(before: Sample, after: Sample) -> float:
    """CPU seconds spent between two samples: what each process of `after` spent since
    `before` (a process that started in between counts whole). A process of `before` that
    is gone by `after` counts nothing: whatever it spent after `before` is lost, and the
    sum never goes negative (a tree_sample keeps reaped children's time, so only processes
    counted one by one lose it)."""
    return sum(max(0.0, cpu - before.get(key, 0.0)) for key, cpu in after.items())


def cpu_seconds(process: subprocess.Popen[bytes] | int) -> Sample:
    """A server's processes (granian and its workers, Node): tree_sample of its root."""
    return tree_sample(process if isinstance(process, int) else process.pid)


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return ""


def backends(database: str) -> list[int]:
    """The PostgreSQL backends (on this machine) connected to `database`: their process
    title names it ("postgres: 15/main: USER DATABASE HOST(PORT) STATE")."""
    return [
        pid for pid in _pids() if (title := _cmdline(pid)).startswith("postgres:") and f" {database} " in f"{title} "
    ]


def backends_cpu_seconds(database: str) -> Sample:
    """CPU time of the PostgreSQL backends connected to `database`: the database work a
    server's requests cost, which its own CPU time leaves out. The backends are the
    connections of the servers' pools, which stay open through a round; one that closes
    during a round takes its time since the round began with it."""
    return processes_sample(backends(database))


def redis_pid(url: str) -> int | None:
    """The pid of the Redis server at `url` when it runs on this machine (INFO server)."""
    import redis

    host = urlsplit(url).hostname or ""
    if host not in ("127.0.0.1", "localhost", "::1"):
        return None
    client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=5)
    try:
        pid = int(client.info("server")["process_id"])
    except redis.ConnectionError:
        return None
    finally:
        client.close()
    return pid if _stat(pid) is not None else None
