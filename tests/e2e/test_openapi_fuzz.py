"""The merged /openapi.json, fuzzed by schemathesis against a running platform of its
own (its own database, so the generated writes and deletes touch nothing else): no
5xx, and no response that contradicts the document."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from ..support.infra import temporary_database
from ..support.oauth_client import owner_token
from .conftest import Platform, running_platform

CHECKS = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance"


@pytest.fixture(scope="module")
async def fuzz_platform(postgres_admin_url, redis_url, kek, tmp_path_factory) -> AsyncIterator[Platform]:
    async with temporary_database(postgres_admin_url) as url:
        with running_platform(url, redis_url, kek, tmp_path_factory.mktemp("fuzz-platform")) as running:
            yield running


async def test_fuzzing_the_openapi_document_finds_no_5xx_and_no_contradiction(
    fuzz_platform: Platform, tmp_path: Path
) -> None:
    token = await owner_token(fuzz_platform.base_url, fuzz_platform.email, fuzz_platform.password)
    command = [
        str(Path(sys.executable).with_name("st")),
        "run",
        f"{fuzz_platform.base_url}/openapi.json",
        "--checks",
        CHECKS,
        "--max-examples",
        "5",
        "--generation-deterministic",
        "--request-timeout",
        "10",
        "--header",
        f"Authorization: Bearer {token}",
        "--exclude-path",
        "/api/oauth/revoke",
    ]
    result = await asyncio.to_thread(
        subprocess.run,
        command,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "NO_COLOR": "1"},
        cwd=tmp_path,
    )
    failures = result.stdout.split("FAILURES")[-1].split("SUMMARY")[0]
    report = failures[:6000] + result.stdout[-1500:] + result.stderr[-1000:]
    assert result.returncode == 0, report  # schemathesis exits non-zero on any failed check
    counts = re.search(r"(\d+) generated, (\d+) passed", result.stdout)
    assert counts and counts.group(1) == counts.group(2) and int(counts.group(1)) > 500, report
