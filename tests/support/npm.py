"""`npm ci` for the test-only Node tools pinned under tests/ (axe-core, the OpenAPI
linters, a client library): run when a folder's packages are missing, one at a time on
the machine (a file lock), since npm processes running at once over one cache have
failed with ENOTEMPTY; a failed run is cleaned up and tried once more."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

_ENV = {"npm_config_ignore_scripts": "true", "NO_UPDATE_NOTIFIER": "1", "npm_config_fund": "false"}


def npm_ci(folder: Path, installed: Path) -> None:
    """Install `folder`'s locked packages unless `installed` (a file they bring) exists."""
    npm = shutil.which("npm")
    assert npm is not None, "npm is not installed"
    lock = Path(tempfile.gettempdir()) / f"courseschool-npm-{os.getuid()}.lock"
    with lock.open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        report = ""
        for _ in range(2):
            if installed.exists():  # already there, or another worker installed it meanwhile
                return
            done = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund"],
                cwd=folder,
                capture_output=True,
                text=True,
                timeout=600,
                env={**os.environ, **_ENV},
                stdin=subprocess.DEVNULL,
            )
            if done.returncode == 0:
                return
            report = f"exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
            shutil.rmtree(folder / "node_modules", ignore_errors=True)
        raise AssertionError(f"npm ci in {folder} failed twice:\n{report}")
