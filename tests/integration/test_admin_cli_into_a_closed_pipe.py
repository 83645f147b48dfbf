"""Issue 38 (from 9): `admin audit list | head -1` printed a BrokenPipeError traceback.
A reader that stops reading (head, a pager quit early) is not the command's failure: it
ends quietly, with status 0, whatever it had done already stays done."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


@pytest.mark.parametrize("module", ["courseschool.authz", "courseschool.platform"])
@pytest.mark.parametrize(
    "args", [["audit", "list"], ["--json", "audit", "list"], ["schools", "list"], ["audit", "list", "--help"]]
)
def test_a_reader_that_stopped_reading_gets_no_traceback(
    database_url: str, redis_url: str, kek: str, clean_db: object, tmp_path, args: list[str], module: str
) -> None:
    environ = {
        **os.environ,
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "KEY_ENCRYPTION_KEY": kek,
        "ADMIN_LOG_FILE": str(tmp_path / "admin-cli.log"),
        "DATA_DIR": str(tmp_path / "no-run-here"),  # the platform's entry point: the servers named above
    }
    cli = subprocess.Popen(
        [sys.executable, "-m", module, "admin", *args],
        env=environ,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert cli.stdout is not None and cli.stderr is not None
    cli.stdout.close()  # the reader is gone before the command prints (it takes a second to start)
    errors = cli.stderr.read().decode()
    assert cli.wait(timeout=60) == 0, errors
    assert errors == ""
