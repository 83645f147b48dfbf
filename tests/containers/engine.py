"""A container engine for the container tier, and the project's image built with it.

The engine is podman (Debian's package, run as root with runc: see .ci/run) or, on a
laptop, Docker; the same command line serves both. Where neither can run a container,
`engine_or_skip()` skips the tier and says why.

The image is built from deploy/Dockerfile as shipped. Its base is the official Python
image where it can be pulled; where no image registry answers (these machines), a stand-in
made from Debian's archive: `debootstrap --variant=minbase bookworm` with Python 3.11
(Debian's bookworm Python, the official image's version), the machine's CA bundle and
pip settings, imported with `<engine> import`, and passed through the Dockerfile's
PYTHON_IMAGE build argument.

Both are kept between runs, keyed by what they are made from: the base by its recipe
(tarball under CACHE_DIR), the image by the hash of the Dockerfile, its ignore file, the
lock and every file of the build context (a tag in the engine's own storage). A run whose
inputs did not change builds nothing; a clean machine builds both (a few minutes on two
busy cores: about 4 for the base, 3 for the image).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from ..support.deployment import DEPLOY, REPO

CACHE_DIR = Path(os.environ.get("COURSESCHOOL_CACHE_DIR", "/var/cache/courseschool"))
DOCKERFILE = DEPLOY / "Dockerfile"
IMAGE_REPOSITORY = "localhost/courseschool-test"
BASE_REPOSITORY = "localhost/courseschool-base"
OFFICIAL_BASE = "docker.io/library/python:3.11-slim-bookworm"
# What the Dockerfile's stages need of their base: Python with venv, `python` on PATH,
# apt (to add the builder's compilers), groupadd/useradd, CA certificates.
BASE_PACKAGES = ("python3", "python3-venv", "python-is-python3", "ca-certificates")
# Bumped when the recipe below changes in a way the inputs do not show.
BASE_RECIPE = f"bookworm minbase {' '.join(BASE_PACKAGES)} v1"
# The build context: what Dockerfile.dockerignore lets in.
CONTEXT = (
    "requirements.lock",
    "libs/common",
    "services/authz",
    "services/resource-api",
    "services/discovery",
    "platform",
)
IGNORED_PARTS = {"__pycache__", ".pytest_cache", "build", "dist"}
BUILD_TIMEOUT = 900
PULL_TIMEOUT = 60


@dataclass(frozen=True)
class Engine:
    binary: str  # podman or docker

    @property
    def name(self) -> str:
        return Path(self.binary).name

    def run(self, *args: str, timeout: float = 120, check: bool = True) -> subprocess.CompletedProcess[str]:
        """`<engine> args...`; raises with its stderr on a non-zero exit when `check`."""
        result = subprocess.run(
            [self.binary, *args], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
        )
        if check and result.returncode != 0:
            raise RuntimeError(
                f"`{self.name} {' '.join(args[:3])} ...` failed ({result.returncode}): {result.stderr[-3000:]}"
            )
        return result

    def image_exists(self, reference: str) -> bool:
        return self.run("image", "inspect", reference, check=False, timeout=60).returncode == 0


def _why_no_engine() -> tuple[Engine | None, str]:
    reasons = []
    for name in ("podman", "docker"):
        binary = shutil.which(name)
        if binary is None:
            reasons.append(f"no {name}")
            continue
        engine = Engine(binary)
        try:
            probe = engine.run("info", timeout=60, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            reasons.append(f"{name}: {exc}")
            continue
        if probe.returncode == 0:
            return engine, ""
        reasons.append(f"`{name} info` failed: {probe.stderr.strip()[-300:]}")
    return None, "; ".join(reasons)


def can_run_or_skip(engine: Engine, image: str) -> None:
    """A container of `image` starts and exits 0 (runtime, cgroups and limits allow it)."""
    probe = engine.run("run", "--rm", "--network", "host", image, "true", timeout=120, check=False)
    if probe.returncode != 0:
        pytest.skip(
            f"{engine.name} cannot run a container here: {probe.stderr.strip()[-400:]} (on Debian with cgroup v1: "
            "runc as the runtime and `default_ulimits = []`, see .ci/run)"
        )


_FOUND: list[tuple[Engine | None, str]] = []


def find_engine() -> tuple[Engine | None, str]:
    """The engine, or None and why there is none (asked once per session)."""
    if not _FOUND:
        _FOUND.append(_why_no_engine())
    return _FOUND[0]


def engine_or_skip() -> Engine:
    engine, why = find_engine()
    if engine is None:
        pytest.skip(
            f"no container engine can run here ({why}); the container tier needs podman (Debian: apt-get install "
            "podman runc debootstrap, as .ci/run does) or Docker"
        )
    return engine


# -- inputs and keys ---------------------------------------------------------------------


def _context_files() -> list[Path]:
    files: list[Path] = []
    for entry in CONTEXT:
        path = REPO / entry
        if path.is_file():
            files.append(path)
            continue
        for found in sorted(path.rglob("*")):
            rel = found.relative_to(REPO).parts
            if found.is_file() and not IGNORED_PARTS & set(rel) and not any(p.endswith(".egg-info") for p in rel):
                files.append(found)
    return files


def image_key(base: str) -> str:
    """What the image is made of: its base, the Dockerfile, its ignore file, the lock and
    the context."""
    digest = hashlib.sha256(base.encode() + b"\0")
    for path in [DOCKERFILE, DEPLOY / "Dockerfile.dockerignore", *_context_files()]:
        digest.update(str(path.relative_to(REPO)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _base_key() -> str:
    return hashlib.sha256(BASE_RECIPE.encode()).hexdigest()[:12]


# -- the stand-in base -------------------------------------------------------------------


def _debian_mirror() -> str:
    """The archive this machine's apt uses (its deb822 or one-line sources)."""
    sources = Path("/etc/apt/sources.list.d/debian.sources")
    if sources.exists():
        for line in sources.read_text().splitlines():
            if line.startswith("URIs:") and "security" not in line:
                return line.split()[1]
    listing = Path("/etc/apt/sources.list")
    if listing.exists():
        for line in listing.read_text().splitlines():
            words = line.split()
            if len(words) >= 3 and words[0] == "deb" and "security" not in words[1]:
                return words[1]
    raise RuntimeError("no Debian archive in this machine's apt sources: debootstrap needs one")


def _make_base_tarball(target: Path) -> None:
    debootstrap = shutil.which("debootstrap") or "/usr/sbin/debootstrap"
    if not Path(debootstrap).exists():
        pytest.skip("debootstrap is missing (Debian: apt-get install debootstrap; .ci/run does it)")
    with tempfile.TemporaryDirectory(prefix="cs-rootfs-", dir=CACHE_DIR) as tmp:
        root = Path(tmp) / "root"
        mirror = _debian_mirror()
        try:
            made = subprocess.run(
                [
                    debootstrap,
                    "--variant=minbase",
                    f"--include={','.join(BASE_PACKAGES)}",
                    "bookworm",
                    str(root),
                    mirror,
                ],
                capture_output=True,
                text=True,
                timeout=BUILD_TIMEOUT,
            )
        finally:
            # debootstrap mounts /proc and /sys in the new root while it works: never
            # leave them mounted under a folder about to be removed.
            for mounted in ("dev/pts", "proc", "sys"):
                subprocess.run(["umount", "--recursive", "--lazy", str(root / mounted)], capture_output=True)
        if made.returncode != 0:
            pytest.fail(f"debootstrap failed ({made.returncode}):\n{(made.stdout + made.stderr)[-3000:]}")
        # The machine's CA bundle (and pip's settings that point at it): a build reaches
        # PyPI the way this machine does.
        bundle = Path("/etc/ssl/certs/ca-certificates.crt")
        if bundle.exists():
            shutil.copyfile(bundle, root / "etc/ssl/certs/ca-certificates.crt")
            (root / "etc/pip.conf").write_text(f"[global]\ncert = {bundle}\n")
        shutil.rmtree(root / "var/cache/apt/archives", ignore_errors=True)
        (root / "var/cache/apt/archives/partial").mkdir(parents=True)
        partial = target.with_suffix(".part")
        subprocess.run(["tar", "-C", str(root), "--numeric-owner", "-cf", str(partial), "."], check=True, timeout=300)
        partial.rename(target)


@contextlib.contextmanager
def _base_lock():
    """One maker of the base at a time on this machine: `.ci/run` starts one beside the
    lint and type checks (see the end of this module), and the tier waits for it."""
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    with open(CACHE_DIR / "base.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def base_image(engine: Engine) -> str:
    """The image the Dockerfile builds FROM: the official one where it can be pulled,
    else the stand-in (imported from the cached tarball, made first if need be)."""
    with _base_lock():
        return _base_image(engine)


def _base_image(engine: Engine) -> str:
    reference = f"{BASE_REPOSITORY}:bookworm-{_base_key()}"
    for present in (OFFICIAL_BASE, reference):
        if engine.image_exists(present):
            return present
    with contextlib.suppress(subprocess.TimeoutExpired):
        if engine.run("pull", "-q", OFFICIAL_BASE, timeout=PULL_TIMEOUT, check=False).returncode == 0:
            return OFFICIAL_BASE
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    tarball = CACHE_DIR / f"base-bookworm-{_base_key()}.tar"
    if not tarball.exists():
        _make_base_tarball(tarball)
    engine.run(
        "import",
        "--change",
        'CMD ["python3"]',
        "--change",
        "ENV LANG=C.UTF-8",
        str(tarball),
        reference,
        timeout=300,
    )
    return reference


# -- the project's image -----------------------------------------------------------------


@dataclass(frozen=True)
class BuiltImage:
    reference: str
    base: str
    built_now: bool  # False: taken from the cache


def project_image(engine: Engine) -> BuiltImage:
    """The image of deploy/Dockerfile for the current sources, built only when no image
    of the same inputs is in the engine's storage. Older test images are removed."""
    base = base_image(engine)
    can_run_or_skip(engine, base)
    reference = f"{IMAGE_REPOSITORY}:{image_key(base)}"
    if engine.image_exists(reference):
        return BuiltImage(reference, base, built_now=False)
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    log = CACHE_DIR / "last-build.log"
    result = subprocess.run(
        [
            engine.binary,
            "build",
            "--network",
            "host",
            "--build-arg",
            f"PYTHON_IMAGE={base}",
            "-f",
            str(DOCKERFILE),
            "-t",
            reference,
            str(REPO),
        ],
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    log.write_text(result.stdout + result.stderr)
    if result.returncode != 0:
        pytest.fail(
            f"building {DOCKERFILE.relative_to(REPO)} failed (log: {log}):\n{(result.stdout + result.stderr)[-4000:]}"
        )
    _remove_older_images(engine, keep=reference)
    return BuiltImage(reference, base, built_now=True)


def _remove_older_images(engine: Engine, keep: str) -> None:
    listed = engine.run("images", "--format", "{{.Repository}}:{{.Tag}}", IMAGE_REPOSITORY, check=False, timeout=60)
    for line in listed.stdout.split():
        if line.startswith(IMAGE_REPOSITORY + ":") and line != keep:
            # Never --force: an image another session's containers still run stays.
            engine.run("rmi", line, check=False, timeout=120)
    # The builder stages of earlier builds (untagged) are kept a few days: a build after a
    # change of the sources reuses their compiler layer.
    engine.run("image", "prune", "--force", "--filter", "until=72h", check=False, timeout=120)


if __name__ == "__main__":
    # `python -m tests.containers.engine`: the base made ahead of the tier. On a clean
    # machine debootstrap takes a minute or more of CPU; `.ci/run` starts this beside
    # `make check`, which leaves a core idle, instead of on the tier's worker in the
    # middle of the suite. Whatever happens here, the tier does what it always does.
    found, why = find_engine()
    if found is None:
        print(f"container base: not made here ({why})")
    else:
        try:
            print(f"container base: {base_image(found)}")
        except BaseException as exc:
            print(f"container base: not made ahead ({type(exc).__name__}: {str(exc)[-300:]})")
