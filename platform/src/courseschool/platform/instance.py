"""One data folder, one `run`; one port, one server.

A second `run` on the same checkout would share the first one's data folder: its
embedded PostgreSQL and Redis (it would attach to them, then stop them when it stops),
its `running.json`. `run` therefore holds an exclusive lock on `DATA_DIR/platform.lock`
(`flock`) for as long as its process lives; the kernel drops it when the process ends,
however it ends, so a lock is never stale. The file says who holds it (pid, address),
for the refusal's message. A busy port is found before anything is started, by binding
it as the server will (granian would otherwise share it through SO_REUSEPORT, or fail
after the embedded servers were started). Either refusal touches nothing.
"""

from __future__ import annotations

import errno
import fcntl
import os
import socket
from pathlib import Path

import msgspec

LOCK_FILE = "platform.lock"


class InstanceRefused(Exception):
    """This `run` must not start; the message says why and what to do."""


class Holder(msgspec.Struct, frozen=True):
    pid: int
    address: str
    base_url: str


class InstanceLock:
    """The data folder's lock, held by this process until `release` or its exit."""

    def __init__(self, fd: int, path: Path) -> None:
        self._fd: int | None = fd
        self.path = path
        # granian forks its workers: a worker left behind by a killed `run` must not keep
        # the folder locked in its name. Closing a forked copy leaves the lock with us
        # (an flock lasts until every descriptor of it is closed).
        os.register_at_fork(after_in_child=self._forget)

    def _forget(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # closing the descriptor releases the lock


def claim(data_dir: Path, *, host: str, port: int, base_url: str) -> InstanceLock:
    """Take the data folder, then check the port; on either refusal nothing is changed
    (no file made, the lock given back) and `InstanceRefused` says which instance or
    port is in the way."""
    path = data_dir / LOCK_FILE
    me = Holder(pid=os.getpid(), address=f"http://{_shown(host)}:{port}", base_url=base_url)
    fd = _locked(path, data_dir, create=False) if path.exists() else None
    try:
        ensure_port_free(host, port)
        if fd is None:  # a new data folder: made only now that nothing is in the way
            data_dir.mkdir(parents=True, exist_ok=True)
            fd = _locked(path, data_dir, create=True)
    except BaseException:
        if fd is not None:
            os.close(fd)
        raise
    os.ftruncate(fd, 0)
    os.pwrite(fd, msgspec.json.encode(me), 0)
    return InstanceLock(fd, path)


def _locked(path: Path, data_dir: Path, *, create: bool) -> int:
    """The lock file's descriptor, locked; InstanceRefused naming the holder if taken."""
    fd = os.open(path, os.O_RDWR | (os.O_CREAT if create else 0), 0o600)  # never truncated unlocked
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _read_holder(fd)
        os.close(fd)
        who = f"pid {holder.pid}, serving {holder.address}" if holder else "its pid is not recorded yet"
        raise InstanceRefused(
            f"another platform is running on the data folder {data_dir.resolve()} ({who}); "
            "stop it first, or start this one with another DATA_DIR"
        ) from None
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_holder(fd: int) -> Holder | None:
    try:
        return msgspec.json.decode(os.pread(fd, 4096, 0), type=Holder)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None  # the holder is between taking the lock and writing its name


def ensure_port_free(host: str, port: int) -> None:
    """Bind the address and let it go at once (SO_REUSEADDR: connections of an earlier
    server still in TIME_WAIT do not count; a listening socket does)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            where = f"{_shown(host)}:{port}"
            if exc.errno == errno.EADDRINUSE:
                raise InstanceRefused(f"address {where} is in use; choose another with --port or PORT") from None
            raise InstanceRefused(f"cannot listen on {where}: {exc.strerror}; check HOST and PORT") from None


def _shown(host: str) -> str:
    return f"[{host}]" if ":" in host else host
