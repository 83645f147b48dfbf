"""Where a sign-in is kept: the OS keyring (macOS Keychain, Windows Credential Locker,
the Secret Service on Linux), or, where none exists or when asked, a file readable by its
owner only (`0600`, in a `0700` folder). The file is announced when it is first written,
never chosen silently.

Beside either store lies a lock file per platform: a process takes it before it spends a
refresh token (rotation, RFC 6749 §10.4 / RFC 9700 §4.14) and re-reads the store under
it, so two processes never present the same refresh token (the server would take the
second use for theft and end the grant)."""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import json
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

import keyring
import keyring.errors

from .errors import ClientError, StoreCorrupted

log = logging.getLogger("courseschool_client")
SERVICE = "courseschool-client"
Storage = Literal["auto", "keyring", "file"]


@dataclass
class Record:
    """One platform's sign-in, keyed by its base URL. The registration (`client_id`) stays
    after `logout`; the tokens go."""

    base_url: str
    issuer: str
    client_id: str
    token_endpoint: str
    revocation_endpoint: str | None = None
    userinfo_endpoint: str | None = None
    access_token: str = ""
    refresh_token: str = ""
    token_type: str = "Bearer"
    expires_at: float = 0.0
    scope: str = ""
    dpop_key: dict[str, str] | None = None
    registration_uri: str = ""  # RFC 7592: where the client reads its registration,
    registration_token: str = ""  # with this token: a deleted client is registered again

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: object, where: str) -> Record:
        names = {f.name for f in dataclasses.fields(cls)}
        if not isinstance(data, dict) or not {"base_url", "issuer", "client_id", "token_endpoint"} <= set(data):
            raise StoreCorrupted(f"the sign-in kept in {where} is not one this library wrote: run logout, then login")
        record = cls(**{k: v for k, v in data.items() if k in names})
        texts = (record.base_url, record.issuer, record.client_id, record.access_token, record.refresh_token)
        if not all(isinstance(t, str) for t in texts) or not isinstance(record.expires_at, int | float):
            raise StoreCorrupted(f"the sign-in kept in {where} is damaged: run logout, then login")
        return record

    @property
    def signed_in(self) -> bool:
        return bool(self.refresh_token or self.access_token)


class Store(Protocol):
    where: str

    def load(self, base_url: str) -> Record | None: ...
    def save(self, record: Record) -> None: ...
    def delete(self, base_url: str) -> None: ...


def home() -> Path:
    """`COURSESCHOOL_CLIENT_HOME`, else `$XDG_CONFIG_HOME/courseschool-client`, else `~/.config/...`."""
    if explicit := os.environ.get("COURSESCHOOL_CLIENT_HOME"):
        return Path(explicit)
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "courseschool-client"


def _private_dir(path: Path) -> Path:
    """Make `path` and any missing parent of it 0700 (mkdir's parents get the default mode)."""
    missing = [folder for folder in (path, *path.parents) if not folder.exists()]
    for folder in reversed(missing):
        folder.mkdir(mode=0o700, exist_ok=True)
    return path


class KeyringStore:
    """One keyring entry per platform: service `courseschool-client`, the base URL as user."""

    def __init__(self) -> None:
        backend = keyring.get_keyring()
        self.where = f"the OS keyring ({type(backend).__module__}.{type(backend).__name__})"

    def load(self, base_url: str) -> Record | None:
        try:
            text = keyring.get_password(SERVICE, base_url)
        except keyring.errors.KeyringError as exc:
            raise ClientError(f"the keyring cannot be read ({exc}): unlock it, or use --storage file") from None
        if text is None:
            return None
        try:
            return Record.from_json(json.loads(text), self.where)
        except ValueError:
            raise StoreCorrupted(f"the sign-in kept in {self.where} is damaged: run logout, then login") from None

    def save(self, record: Record) -> None:
        try:
            keyring.set_password(SERVICE, record.base_url, json.dumps(record.to_json()))
        except keyring.errors.KeyringError as exc:
            raise ClientError(f"the keyring refused the sign-in ({exc}): unlock it, or use --storage file") from None

    def delete(self, base_url: str) -> None:
        with contextlib.suppress(keyring.errors.PasswordDeleteError):
            keyring.delete_password(SERVICE, base_url)


class FileStore:
    """`credentials.json` in the client's folder, mode 0600, replaced atomically."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "credentials.json"
        self.where = f"{self.path} (a file only you can read: no OS keyring here)"

    def _read_all(self) -> dict[str, Any]:
        try:
            text = self.path.read_text()
        except FileNotFoundError:
            return {}
        try:
            everything = json.loads(text)
        except ValueError:
            raise StoreCorrupted(f"{self.path} is damaged: run logout, then login") from None
        if not isinstance(everything, dict):
            raise StoreCorrupted(f"{self.path} is damaged: run logout, then login")
        return everything

    def _write_all(self, everything: dict[str, Any]) -> None:
        first = not self.path.exists()
        _private_dir(self.path.parent)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            os.fchmod(out.fileno(), 0o600)
            json.dump(everything, out, indent=1)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, self.path)
        if first:
            log.warning("no OS keyring: sign-ins are kept in %s, readable by you only (mode 0600)", self.path)

    def load(self, base_url: str) -> Record | None:
        data = self._read_all().get(base_url)
        return None if data is None else Record.from_json(data, str(self.path))

    @contextlib.contextmanager
    def _writing(self) -> Iterator[dict[str, Any]]:
        """Read, change, write under a lock of the file's own: the refresh lock is per
        platform, and two platforms' sign-ins share this file."""
        fd = os.open(_private_dir(self.path.parent) / ".credentials.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                everything = self._read_all()
            except StoreCorrupted:
                everything = {}  # a new sign-in (or a logout) replaces what cannot be read
            yield everything
            self._write_all(everything)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def save(self, record: Record) -> None:
        with self._writing() as everything:
            everything[record.base_url] = record.to_json()

    def delete(self, base_url: str) -> None:
        with self._writing() as everything:
            everything.pop(base_url, None)


def keyring_usable() -> bool:
    """A real backend (priority above 0), not keyring's `fail` or `null` placeholder."""
    backend = keyring.get_keyring()
    module = type(backend).__module__
    return not module.endswith((".fail", ".null")) and float(getattr(backend, "priority", 0)) > 0


def open_store(storage: Storage = "auto", folder: Path | None = None) -> Store:
    """`auto`: the keyring where one exists, else the file (said when it is first written)."""
    folder = folder or home()
    if storage == "keyring" or (storage == "auto" and keyring_usable()):
        if not keyring_usable():
            raise ClientError("no OS keyring is available here: use --storage file")
        return KeyringStore()
    return FileStore(folder)


@contextlib.contextmanager
def refresh_lock(base_url: str, folder: Path | None = None) -> Iterator[None]:
    """An exclusive lock per platform, across processes (flock on a file beside the store)."""
    locks = _private_dir((folder or home()) / "locks")
    name = hashlib.sha256(base_url.encode()).hexdigest()[:24] + ".lock"
    fd = os.open(locks / name, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
