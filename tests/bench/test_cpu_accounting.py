"""The bench's CPU accounting from /proc (bench/cpu.py): a process tree's time keeps
what its exited children spent, a process that exits between two samples never makes a
figure negative, and the PostgreSQL backends of one database and a Redis server on this
machine are found. No timing is asserted: the work measured is counted, not timed."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import asyncpg
import pytest

from bench.cpu import backends, backends_cpu_seconds, cpu_spent, processes_sample, redis_pid, tree_sample
from bench.harness import RedisServer
from tests.support.infra import temporary_database

# Spins on the CPU for the given seconds of its own CPU time.
BURN = "import sys, time\nend = time.process_time() + float(sys.argv[1])\nwhile time.process_time() < end: pass\n"


def burner(seconds: float) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", BURN, str(seconds)])


def own_cpu(pid: int) -> float:
    """A child's CPU seconds as the kernel reports them after it was reaped (os.wait4)."""
    _, _, usage = os.wait4(pid, 0)
    return usage.ru_utime + usage.ru_stime


def test_a_tree_counts_its_live_children_and_those_that_exited() -> None:
    # A parent that runs one child burning 0.3 s and reaps it, then starts another burning
    # 0.3 s and waits for it to exit without reaping it (a zombie keeps its own entry),
    # then idles: one child's time is in the parent's reaped-children time, the other's in
    # its own entry, and the tree counts both.
    script = (
        "import os, subprocess, sys, time\n"
        f"subprocess.run([sys.executable, '-c', {BURN!r}, '0.3'])\n"
        f"p = subprocess.Popen([sys.executable, '-c', {BURN!r}, '0.3'])\n"
        "os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)\n"
        "sys.stdout.write('done\\n'); sys.stdout.flush()\n"
        "time.sleep(30)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
    try:
        before = tree_sample(parent.pid)
        assert [pid for pid, _ in before] == [parent.pid]
        assert parent.stdout is not None and parent.stdout.readline() == b"done\n"
        after = tree_sample(parent.pid)
        assert cpu_spent(before, after) >= 0.5  # both children's 0.6 s, less the clock ticks' rounding
        alone = processes_sample([parent.pid])  # the parent's own time leaves its children out
        assert cpu_spent(before, after) - cpu_spent(before, alone) >= 0.5
    finally:
        parent.kill()
        parent.wait()


def test_a_process_that_exited_between_samples_counts_nothing_more_and_never_negative() -> None:
    child = burner(0.2)
    pid = child.pid
    time.sleep(0.05)
    before = processes_sample([pid])
    assert len(before) == 1
    spent = own_cpu(pid)  # waits for it to finish and reaps it: the pid is gone from /proc
    assert spent >= 0.15
    after = processes_sample([pid])
    assert after == {}
    assert cpu_spent(before, after) == 0.0
    assert tree_sample(pid) == {}


def test_a_new_process_counts_whole_and_a_reused_pid_is_another_process() -> None:
    first = burner(0.1)
    first_key = next(iter(processes_sample([first.pid])))
    own_cpu(first.pid)
    # A sample that held the same pid with a larger figure: another start time, so the
    # new process counts from zero rather than going negative against it.
    # It says when it has spent its 0.2 s and then idles: a fixed sleep would count on the
    # scheduler giving it the CPU, which a loaded machine does not.
    script = BURN + "sys.stdout.write('done\\n'); sys.stdout.flush()\ntime.sleep(30)\n"
    second = subprocess.Popen([sys.executable, "-c", script, "0.2"], stdout=subprocess.PIPE)
    try:
        assert second.stdout is not None and second.stdout.readline() == b"done\n"
        sample = processes_sample([second.pid])
        ((key, cpu),) = sample.items()
        stale = {(key[0], key[1] - 1): 1000.0, first_key: 1000.0}
        assert cpu_spent(stale, sample) == cpu > 0.1
    finally:
        second.kill()
        second.wait()


async def test_the_backends_of_one_database_are_found_and_their_work_counted(postgres_admin_url: str) -> None:
    async with temporary_database(postgres_admin_url) as url:
        database = urlsplit(url).path.lstrip("/")
        conn = await asyncpg.connect(url)
        try:
            pid = await conn.fetchval("SELECT pg_backend_pid()")
            if not Path(f"/proc/{pid}/cmdline").exists() or not Path(f"/proc/{pid}/cmdline").read_bytes().startswith(
                b"postgres"
            ):
                pytest.skip("the PostgreSQL server's processes are not in this machine's /proc")
            assert pid in backends(database)
            assert pid not in backends(database + "_other")
            before = backends_cpu_seconds(database)
            await conn.fetchval("SELECT count(*) FROM generate_series(1, 3000000)")
            after = backends_cpu_seconds(database)
            assert cpu_spent(before, after) > 0
        finally:
            await conn.close()
        # Its connection closed: the backend is gone, and the figure does not go negative.
        deadline = time.monotonic() + 5
        while pid in backends(database) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert cpu_spent(after, backends_cpu_seconds(database)) == 0.0


def test_the_bench_redis_server_is_its_own_and_its_pid_is_found(tmp_path: Path) -> None:
    if not subprocess.run(["which", "redis-server"], capture_output=True).stdout:
        pytest.skip("redis-server is not installed")
    server = RedisServer(tmp_path / "redis.log")
    try:
        assert redis_pid(server.url) == server.process.pid
        assert tree_sample(server.process.pid)
    finally:
        server.stop()
    assert redis_pid(server.url) is None  # stopped: nothing answers there


def test_a_redis_elsewhere_has_no_pid_here() -> None:
    assert redis_pid("redis://192.0.2.1:6379/0") is None  # TEST-NET-1: never contacted, not local
