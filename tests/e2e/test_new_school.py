"""A school an administrator creates exists everywhere at once: in the all-in-one and in
the production topology, its owner signs in through the real pages, the token reads
and writes the school's data, the anonymous catalogue finds the school by its slug,
and another new school's token sees none of it.

The authorization server owns schools; the resource API learns of one on first use
(resource_api/schools.py). Nothing here writes to the resource API's tables by hand."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ..support.deployment import nginx_or_skip
from ..support.infra import temporary_database_blocking
from ..support.oauth_client import code_flow
from ..support.split import Topology, running_topology

PASSWORD = "a new school's owner password"
SCOPE = "openid school:read courses:read courses:write"


def _admin(env: dict[str, str], *args: str) -> dict[str, str]:
    """The operator's command line, as the README shows it."""
    result = subprocess.run(
        [sys.executable, "-m", "courseschool.authz", "admin", "--json", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _new_school(env: dict[str, str], name: str) -> tuple[str, str]:
    """A school and its owner, made with the admin command line: (slug, owner email)."""
    slug = f"school-{uuid.uuid4().hex[:8]}"
    email = f"owner@{slug}.example.test"
    _admin(env, "schools", "create", "--slug", slug, "--name", name)
    _admin(
        env,
        "users",
        "create",
        "--school",
        slug,
        "--email",
        email,
        "--name",
        f"Owner of {name}",
        "--role",
        "owner",
        "--password",
        PASSWORD,
    )
    return slug, email


async def _owner_token(base_url: str, email: str) -> str:
    """Register a loopback client, sign in through the pages as the owner, allow, exchange."""
    _, tokens = await code_flow(base_url, email, PASSWORD, SCOPE, client_name="New school CLI")
    assert "courses:write" in tokens["scope"].split()
    return tokens["access_token"]


async def _the_new_school_works_everywhere(base_url: str, admin_env: dict[str, str]) -> None:
    slug, email = _new_school(admin_env, "Harbour Academy")
    other_slug, other_email = _new_school(admin_env, "Hill School")
    token = await _owner_token(base_url, email)
    other = await _owner_token(base_url, other_email)
    auth = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=base_url, timeout=15.0) as api:
        school = await api.get("/api/v1/school", headers=auth)
        assert school.status_code == 200, school.text
        assert school.json()["name"] == "Harbour Academy"
        made = await api.post(
            "/api/v1/courses", headers=auth, json={"title": "Knots for Sailors", "slug": "knots", "published": True}
        )
        assert made.status_code == 201, made.text
        course = made.json()

        catalogue = await api.get("/api/v1/courses", params={"school": slug})
        assert catalogue.status_code == 200, catalogue.text
        assert [c["id"] for c in catalogue.json()["items"]] == [course["id"]]

        theirs = {"Authorization": f"Bearer {other}"}
        assert (await api.get(f"/api/v1/courses/{course['id']}", headers=theirs)).status_code == 404
        listed = await api.get("/api/v1/courses", params={"school": slug}, headers=theirs)
        assert listed.status_code == 200 and listed.json()["items"] == []
        assert (await api.get("/api/v1/school", headers=theirs)).json()["name"] == "Hill School"
        other_catalogue = await api.get("/api/v1/courses", params={"school": other_slug})
        assert other_catalogue.status_code == 200 and other_catalogue.json()["items"] == []
        unknown = await api.get("/api/v1/courses", params={"school": "no-such-school"})
        assert unknown.status_code == 404


def _child_env(**values: str) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "PYTHONPATH", "VIRTUAL_ENV")}
    return {**keep, "LOG_FORMAT": "json", **values}


async def test_admin_created_school_works_in_the_all_in_one(platform, database_url, redis_url, kek) -> None:
    env = _child_env(DATABASE_URL=database_url, REDIS_URL=redis_url, KEY_ENCRYPTION_KEY=kek, BASE_URL=platform.base_url)
    await _the_new_school_works_everywhere(platform.base_url, env)


@pytest.fixture(scope="module")
def split_topology(postgres_admin_url, redis_url, kek, tmp_path_factory) -> Iterator[Topology]:
    """The production topology (three `serve` processes behind nginx) on a database of its own."""
    nginx = nginx_or_skip()
    with temporary_database_blocking(postgres_admin_url) as database_url:
        folder: Path = tmp_path_factory.mktemp("new-school-split")
        with running_topology(database_url, redis_url, kek, folder, nginx) as topology:
            yield topology


async def test_admin_created_school_works_in_the_split_topology(split_topology: Topology) -> None:
    await _the_new_school_works_everywhere(split_topology.base_url, split_topology.services["authz"].env)
