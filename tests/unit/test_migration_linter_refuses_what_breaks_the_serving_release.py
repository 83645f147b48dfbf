"""`make check` lints the migrations with squawk (.squawk.toml): what would break the
release still serving during a rolling upgrade (a column or table dropped or renamed, a
type changed, a required column added) fails it; an expansion passes."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SQUAWK = shutil.which("squawk", path=str(Path(sys.executable).parent)) or shutil.which("squawk")

BREAKING = {
    "ban-drop-column": "ALTER TABLE authz_clients DROP COLUMN client_name;",
    "ban-drop-table": "DROP TABLE authz_notices;",
    "renaming-column": "ALTER TABLE authz_clients RENAME COLUMN client_name TO name;",
    "renaming-table": "ALTER TABLE authz_clients RENAME TO authz_apps;",
    "changing-column-type": "ALTER TABLE authz_clients ALTER COLUMN client_name TYPE varchar(80);",
    "adding-required-field": "ALTER TABLE authz_clients ADD COLUMN tier text NOT NULL;",
}


def lint(folder: Path, sql: str) -> subprocess.CompletedProcess[str]:
    if SQUAWK is None:
        pytest.fail("squawk is not installed: `make install` (squawk-cli is pinned in requirements.lock)")
    path = folder / "0900_next_release.sql"
    path.write_text(sql)
    return subprocess.run(
        [SQUAWK, "--config", str(ROOT / ".squawk.toml"), "--reporter", "gcc", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )


@pytest.mark.parametrize("rule", sorted(BREAKING))
def test_a_contraction_in_the_same_release_fails(rule: str, tmp_path: Path) -> None:
    found = lint(tmp_path, BREAKING[rule])
    assert found.returncode != 0 and rule in found.stdout, found.stdout + found.stderr


def test_an_expansion_passes(tmp_path: Path) -> None:
    found = lint(
        tmp_path,
        "CREATE TABLE authz_client_tiers (client_id text PRIMARY KEY, tier text NOT NULL);\n"
        "ALTER TABLE authz_clients ADD COLUMN tier text;\n"
        "ALTER TABLE authz_clients ADD COLUMN rank integer NOT NULL DEFAULT 0;\n",
    )
    assert found.returncode == 0, found.stdout + found.stderr


def test_the_shipped_migrations_pass() -> None:
    """As `make check` runs it: paths from the repository's root (.squawk.toml excludes by them)."""
    files = sorted(str(p.relative_to(ROOT)) for p in ROOT.glob("services/*/src/courseschool/*/migrations/*.sql"))
    assert files
    found = subprocess.run(
        [SQUAWK or "squawk", "--config", str(ROOT / ".squawk.toml"), *files],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert found.returncode == 0, found.stdout + found.stderr
