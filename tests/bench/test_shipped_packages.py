"""The bench serves from the packages the image ships (bench/shipped.py): the same
four packages' declared dependencies as deploy/Dockerfile installs, and no
development-only package among them."""

from __future__ import annotations

import re
from pathlib import Path

from bench import shipped

ROOT = Path(__file__).resolve().parents[2]


def test_the_bench_installs_what_the_image_installs() -> None:
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text()
    copied = set(re.findall(r"^COPY (\S+)/pyproject\.toml ", dockerfile, flags=re.MULTILINE))
    assert copied == set(shipped.SERVICES)
    names = {re.split(r"[<>=!~\[; ]", requirement)[0].lower() for requirement in shipped.declared()}
    assert {"litestar", "granian", "asyncpg", "redis", "joserfc", "uvloop"} <= names
    assert not names & {"pydantic", "pytest", "uvicorn", "schemathesis", "playwright"}
