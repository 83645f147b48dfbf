"""A keyring backend for the tests: what an OS keyring is to the library (a backend
keyring chooses, priority above 0), kept in a JSON file that `TEST_KEYRING_FILE` names so
that every process of a test sees the same entries. Selected in child processes with
`PYTHON_KEYRING_BACKEND=tests.client.keyring_backend.FileBackedKeyring`."""

from __future__ import annotations

import json
import os
from pathlib import Path

from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError


class FileBackedKeyring(KeyringBackend):
    priority = 5  # type: ignore[assignment]

    @staticmethod
    def _path() -> Path:
        return Path(os.environ["TEST_KEYRING_FILE"])

    def _all(self) -> dict[str, str]:
        try:
            return dict(json.loads(self._path().read_text()))
        except FileNotFoundError:
            return {}

    def _write(self, entries: dict[str, str]) -> None:
        temporary = self._path().with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(json.dumps(entries))
        os.replace(temporary, self._path())

    def get_password(self, service: str, username: str) -> str | None:
        return self._all().get(f"{service} {username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        entries = self._all()
        entries[f"{service} {username}"] = password
        self._write(entries)

    def delete_password(self, service: str, username: str) -> None:
        entries = self._all()
        if entries.pop(f"{service} {username}", None) is None:
            raise PasswordDeleteError("no such entry")
        self._write(entries)
