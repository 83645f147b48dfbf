"""The Python the bench serves from: the packages the image ships, nothing else.

`.venv` holds the development tools too (pytest, schemathesis, Playwright, ...), and
some libraries load what they find: Litestar adds its pydantic plugins whenever pydantic
can be imported, which no deployment has (6.5 MiB of RSS at the all-in-one's import
alone; bench/RESULTS.md has the figures after load). So the bench
serves the platform from a virtualenv made as deploy/Dockerfile makes the image's
/opt/venv: the third-party dependencies the four service packages declare, at the
lock's versions, with uv and without building anything, then the local packages
(editable here, so the working tree is what is measured; `platform` without its
embedded-server dependencies). Made once in `.data/bench-python/` and again when the
lock or a package's pyproject.toml changes.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements.lock"
SERVICES = ("libs/common", "services/authz", "services/resource-api", "services/discovery")
VENV = ROOT / ".data" / "bench-python"
# Development-only packages that a library would load if it found them in the server's
# Python: none may be there.
NOT_SHIPPED = ("pydantic", "pytest", "schemathesis", "playwright")


def declared() -> list[str]:
    """The third-party requirements of the four service packages, as the image installs them."""
    found: list[str] = []
    for package in SERVICES:
        project = tomllib.loads((ROOT / package / "pyproject.toml").read_text())["project"]
        found += [d for d in project.get("dependencies", []) if not d.startswith("courseschool-")]
    return sorted(set(found))


def _fingerprint() -> str:
    sources = [LOCK, *(ROOT / p / "pyproject.toml" for p in (*SERVICES, "platform"))]
    return hashlib.sha256(b"".join(path.read_bytes() for path in sources)).hexdigest()


def _uv() -> Path:
    from tools.install import pins, uv_binary  # the uv `make install` uses

    uv, why = uv_binary(pins()["uv"])
    if uv is None:
        sys.exit(f"bench: uv is needed for the shipped packages: {why}")
    return uv


def python() -> Path:
    """The shipped virtualenv's interpreter, made or refreshed first if it must be."""
    interpreter = VENV / "bin" / "python"
    stamp = VENV / "made-from"
    if interpreter.exists() and stamp.exists() and stamp.read_text() == _fingerprint():
        return interpreter
    uv = _uv()

    def run(*args: str | Path) -> None:
        subprocess.run([str(uv), *map(str, args)], check=True, cwd=ROOT)

    print(f"bench: the shipped packages into {VENV.relative_to(ROOT)}/", flush=True)
    run("venv", "--quiet", "--clear", "--python", sys.executable, VENV)
    requirements = VENV / "requirements.txt"
    requirements.write_text("\n".join(declared()) + "\n")
    run("pip", "install", "--quiet", "--python", interpreter, "--no-build", "-c", LOCK, "-r", requirements)
    editables = [arg for package in SERVICES for arg in ("-e", ROOT / package)]
    run("pip", "install", "--quiet", "--python", interpreter, "--no-deps", "-c", LOCK, *editables)
    run("pip", "install", "--quiet", "--python", interpreter, "--no-deps", "-e", ROOT / "platform")
    present = subprocess.run(
        [interpreter, "-c", f"import importlib.util as u; print(*[m for m in {NOT_SHIPPED!r} if u.find_spec(m)])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    if present:
        sys.exit(f"bench: the shipped packages hold development-only ones: {', '.join(present)}")
    stamp.write_text(_fingerprint())
    return interpreter
