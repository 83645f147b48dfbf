"""`make install`: the virtualenv `.venv` with every package pinned in requirements.lock
and the six local packages (editable), installed with uv, or with pip where uv cannot run.

uv is the PyPI package `uv` (a wheel with its binary inside) at the version the lock pins,
installed with pip into `.tools/uv/`, a folder this script owns (made once; `make clean`
keeps it). Nothing is downloaded by a script of its own: pip
and uv fetch packages from the index the machine's pip and uv are set up for.

Each step says what it does, uv's own progress shows while it installs, and the last
line says what was installed and how long it took. Runs on the interpreter that runs
it (`make install PYTHON=python3.12` picks another); the standard library only.

INSTALLER=pip makes it use pip even where uv runs (the fallback, on purpose)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements.lock"
VENV = ROOT / ".venv"
TOOLS = ROOT / ".tools" / "uv"
PACKAGES = ("libs/common", "libs/client", "services/authz", "services/resource-api", "services/discovery", "platform")
# setuptools' "compat" editable mode: a path entry per package, which mypy and the
# namespace packages (courseschool.*) read like an ordinary install.
EDITABLE = ("--config-settings", "editable_mode=compat")

STARTED = time.monotonic()


def say(message: str) -> None:
    print(f"install: {message}", flush=True)


MARKS: list[tuple[str, float]] = []  # each step's short name and when it began


def step(name: str, message: str) -> None:
    """Say what begins now; its time is told in the last line."""
    MARKS.append((name, time.monotonic()))
    say(message)


def breakdown() -> str:
    ends = [began for _, began in MARKS[1:]] + [time.monotonic()]
    return ", ".join(f"{name} {end - began:.1f} s" for (name, began), end in zip(MARKS, ends, strict=True))


def elapsed(since: float = STARTED) -> str:
    return f"{time.monotonic() - since:.1f} s"


def pins() -> dict[str, str]:
    """name -> version of every line of the lock (`name==version`, nothing else)."""
    found = {}
    for line in LOCK.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, sep, version = line.partition("==")
            if not sep:
                sys.exit(f"install: requirements.lock: {line!r} is not pinned with ==")
            found[re.sub(r"[-_.]+", "-", name).lower()] = version
    return found


def run(*command: str | Path) -> None:
    done = subprocess.run([str(part) for part in command], check=False)
    if done.returncode != 0:
        sys.exit(f"install: failed ({done.returncode}): {' '.join(map(str, command))}")


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def uv_binary(version: str) -> tuple[Path | None, str]:
    """`.tools/uv/bin/uv` at the pinned version, installed with pip when missing or
    another version; (None, why) when uv cannot be had or cannot run here."""
    uv = TOOLS / "bin" / "uv"
    if _uv_version(uv) == version:
        return uv, ""
    began = time.monotonic()
    step("uv", f"uv {version}: installing it into {TOOLS.relative_to(ROOT)}/ with pip (once)")
    shutil.rmtree(TOOLS, ignore_errors=True)
    quiet = ("-q", "--disable-pip-version-check", "--root-user-action=ignore")
    # The interpreter's own pip, into a plain folder (no virtualenv to make); a virtualenv
    # of its own where that pip is missing or refuses (an externally managed Python).
    if _pip(sys.executable, *quiet, "--target", str(TOOLS), f"uv=={version}") != 0:
        shutil.rmtree(TOOLS, ignore_errors=True)
        if subprocess.run([sys.executable, "-m", "venv", str(TOOLS)], check=False).returncode != 0:
            return None, "no virtualenv for it could be made"
        if _pip(str(venv_python(TOOLS)), *quiet, f"uv=={version}") != 0:
            return None, f"pip could not install uv=={version} (no wheel for this platform?)"
    found = _uv_version(uv)
    if found != version:
        return None, f"its binary does not run here ({found or 'no output'})"
    say(f"uv {version}: ready ({elapsed(began)})")
    return uv, ""


def _pip(python: str, *args: str) -> int:
    return subprocess.run([python, "-m", "pip", "install", *args], check=False).returncode


def _uv_version(uv: Path) -> str | None:
    if not uv.exists():
        return None
    try:
        out = subprocess.run([str(uv), "--version"], capture_output=True, text=True, timeout=30, check=False)
    except OSError:
        return None
    words = out.stdout.split()
    return words[1] if out.returncode == 0 and len(words) > 1 else None


def install_with_uv(uv: Path) -> None:
    python = venv_python(VENV)
    if not python.exists():
        step("virtualenv", f"{VENV.name}: creating it for {sys.executable} (Python {sys.version.split()[0]})")
        run(uv, "venv", "--quiet", "--allow-existing", "--python", sys.executable, VENV)
    step("the lock", f"{len(pins())} pinned packages from {LOCK.name}")
    run(uv, "pip", "install", "--python", python, "-r", LOCK)
    if editables_current():
        say(f"{len(PACKAGES)} local packages: installed (editable) and their pyproject.toml unchanged since")
        return
    step("local packages", f"{len(PACKAGES)} local packages, editable")
    editables = [arg for package in PACKAGES for arg in ("-e", str(ROOT / package))]
    # Built with the lock's setuptools, already in the virtualenv: no build environments.
    run(uv, "pip", "install", "--python", python, "--no-deps", "--no-build-isolation", *EDITABLE, *editables)


def editables_current() -> bool:
    """Every local package installed editable from this checkout, after its pyproject.toml
    last changed (a change of the lock alone needs no rebuild of them)."""
    installed = {}
    for record in VENV.glob("lib/python*/site-packages/*.dist-info/direct_url.json"):
        try:
            origin = json.loads(record.read_text())
        except (OSError, ValueError):
            continue
        if origin.get("dir_info", {}).get("editable"):
            installed[origin.get("url")] = record.parent.stat().st_mtime
    return all(
        installed.get((ROOT / package).as_uri(), 0.0) >= (ROOT / package / "pyproject.toml").stat().st_mtime
        for package in PACKAGES
    )


def install_with_pip() -> None:
    python = venv_python(VENV)
    if not python.exists():
        step("virtualenv", f"{VENV.name}: creating it for {sys.executable} (Python {sys.version.split()[0]})")
        run(sys.executable, "-m", "venv", VENV)
    elif subprocess.run([str(python), "-m", "pip", "--version"], capture_output=True, check=False).returncode:
        run(python, "-m", "ensurepip", "--upgrade")  # a virtualenv made by uv has no pip
    pip = (python, "-m", "pip", "install", "--disable-pip-version-check")
    step("pip", "pip: the newest, into the virtualenv")
    run(*pip, "-q", "--upgrade", "pip")
    step("the lock", f"{len(pins())} pinned packages from {LOCK.name} (pip shows each one)")
    run(*pip, "--progress-bar", "off", "-r", LOCK)
    if editables_current():
        say(f"{len(PACKAGES)} local packages: installed (editable) and their pyproject.toml unchanged since")
        return
    step("local packages", f"{len(PACKAGES)} local packages, editable")
    editables = [arg for package in PACKAGES for arg in ("-e", str(ROOT / package))]
    run(*pip, "-q", "--no-deps", *EDITABLE, *editables)


def main() -> int:
    os.chdir(ROOT)
    lock = pins()
    installer = os.environ.get("INSTALLER", "uv")
    if installer not in ("uv", "pip"):
        sys.exit(f"install: INSTALLER={installer!r}: uv or pip")
    uv: Path | None = None
    if installer == "uv":
        version = lock.get("uv")
        if version is None:
            sys.exit("install: requirements.lock pins no uv (uv==VERSION)")
        uv, why = uv_binary(version)
        if uv is None:
            say(f"uv cannot be used here: {why}; falling back to pip")
    if uv is not None:
        install_with_uv(uv)
        used = f"uv {lock['uv']}"
    else:
        install_with_pip()
        used = "pip"
    say(
        f"done: {len(lock)} packages from {LOCK.name} and {len(PACKAGES)} local ones in {VENV.name}/, "
        f"with {used}, in {elapsed()} ({breakdown()})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
