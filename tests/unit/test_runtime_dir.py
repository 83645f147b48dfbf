"""The embedded PostgreSQL (pgserver) gets a private runtime directory where the
environment has none, so no command warns `RuntimeDirWarning` (platformdirs, asked by
pgserver on import, warns when XDG_RUNTIME_DIR is unset or not private); one it has is
used as it is; a directory of ours that someone else could control is refused."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

SHOW = (
    "import os, courseschool.platform.embedded, pgserver; "
    "print(pgserver.postgres_server.PostgresServer.runtime_path); print(os.environ.get('XDG_RUNTIME_DIR'))"
)


def _import(tmp_path: Path, xdg: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    env["TMPDIR"] = str(tmp_path)
    if xdg is not None:
        env["XDG_RUNTIME_DIR"] = xdg
    return subprocess.run(
        [sys.executable, "-W", "error", "-c", SHOW], env=env, capture_output=True, text=True, timeout=60
    )


def _ours(tmp_path: Path) -> Path:
    return tmp_path / f"courseschool-runtime-{os.geteuid()}"


def test_no_runtime_dir_gets_a_private_one_without_a_warning(tmp_path: Path) -> None:
    done = _import(tmp_path, None)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    runtime, environment = done.stdout.splitlines()
    assert Path(runtime) == _ours(tmp_path) / "python_PostgresServer"
    assert environment == "None"  # the process's environment is left as it was
    assert stat.S_IMODE(_ours(tmp_path).stat().st_mode) == 0o700


def test_a_runtime_dir_others_may_read_is_replaced_without_a_warning(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    done = _import(tmp_path, str(shared))
    assert done.returncode == 0 and done.stderr == "", done.stderr
    runtime, environment = done.stdout.splitlines()
    assert Path(runtime) == _ours(tmp_path) / "python_PostgresServer" and environment == str(shared)


def test_a_private_runtime_dir_is_used_as_it_is(tmp_path: Path) -> None:
    private = tmp_path / "run-user"
    private.mkdir(mode=0o700)
    done = _import(tmp_path, str(private))
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert Path(done.stdout.splitlines()[0]) == private / "python_PostgresServer"
    assert not _ours(tmp_path).exists()


@pytest.mark.parametrize("kind", ["symlink", "open mode"])
def test_a_directory_of_ours_someone_could_control_is_refused(tmp_path: Path, kind: str) -> None:
    if kind == "symlink":
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir(mode=0o700)
        _ours(tmp_path).symlink_to(elsewhere)
    else:
        _ours(tmp_path).mkdir()
        _ours(tmp_path).chmod(0o777)
    done = _import(tmp_path, None)
    assert done.returncode != 0
    assert "is not a private directory of this user" in done.stderr
    assert not (tmp_path / "elsewhere" / "python_PostgresServer").exists()
