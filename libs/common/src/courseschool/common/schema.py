"""Schema versions: the migrations a service's code knows against those the database
has applied (`schema_migrations`, which the runner in db.py fills).

A rolling upgrade runs two releases side by side on one database, so a release's
migrations only add (expand) and what the previous release still uses is removed one
release later (contract; docs/design.md, "Rolling upgrades"). Hence, for a service:

- the database is *behind* when a migration its code knows is not applied: it is not
  ready (`/readyz` 503, naming both versions) until the migration step has run;
- the database is *ahead* when it holds migrations of a later release: it stays ready,
  which is what expand / contract allows.

Each service checks at start (one log line, `schema_version` or `schema_behind`; the
service starts either way and waits, unready, for the migration step) and at each
`/readyz`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import asyncpg

from .db import Folders, migration_files
from .health import NotReady
from .logging import get_logger

log = get_logger(__name__)

_APPLIED = "SELECT version FROM schema_migrations WHERE service = $1"


@dataclass(frozen=True)
class SchemaState:
    service: str
    code: int  # the highest migration the code knows (0: none)
    database: int  # the highest the database has applied (0: none)
    missing: tuple[int, ...]  # migrations the code knows that the database has not applied

    @property
    def behind(self) -> bool:
        return bool(self.missing)

    @property
    def ahead(self) -> bool:
        return not self.missing and self.database > self.code

    def describe(self) -> dict[str, Any]:
        state = "behind" if self.behind else "ahead" if self.ahead else "current"
        body: dict[str, Any] = {"service": self.service, "code": self.code, "database": self.database, "state": state}
        if self.missing:
            body["missing"] = list(self.missing)
        return body

    def reason(self) -> str:
        return (
            f"behind: the database has {self.service} migrations up to {self.database:04d}, "
            f"this code needs {self.code:04d} (missing {', '.join(f'{v:04d}' for v in self.missing)}): "
            "run the migration step"
        )


def known_versions(folders: Folders) -> list[int]:
    return [version for version, _, _ in migration_files(folders)]


async def schema_state(db: Any, service: str, known: list[int]) -> SchemaState:
    """`db`: a connection or a pool; `known`: the versions the code knows
    (`known_versions`). A database never migrated has applied nothing."""
    try:
        applied = {row["version"] for row in await db.fetch(_APPLIED, service)}
    except asyncpg.UndefinedTableError:
        applied = set()
    return SchemaState(
        service=service,
        code=max(known, default=0),
        database=max(applied, default=0),
        missing=tuple(v for v in known if v not in applied),
    )


class SchemaCheck:
    """A service's schema check: `at_start` logs where the database stands, calling it
    is the `/readyz` check (NotReady while behind; the versions in the answer either way)."""

    def __init__(self, service: str, folders: Folders) -> None:
        self.service = service
        self.known = known_versions(folders)  # once: the files do not change under a running process

    async def __call__(self, db: Any) -> dict[str, Any]:
        state = await schema_state(db, self.service, self.known)
        if state.behind:
            raise NotReady(state.reason(), state.describe())
        return state.describe()

    async def at_start(self, db: Any) -> SchemaState | None:
        """Logs the state; a database out of reach is left to /readyz (None)."""
        try:
            state = await schema_state(db, self.service, self.known)
        except Exception as exc:  # noqa: BLE001 - out of reach, timed out, refused: /readyz says
            log.warning("schema_unknown", service=self.service, error=type(exc).__name__)
            return None
        if state.behind:
            log.warning("schema_behind", **state.describe())
        else:
            log.info("schema_version", **state.describe())
        return state
