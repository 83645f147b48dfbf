"""The walkthrough at `/auth.md`, followed to the letter against the running platform.

Every ```sh block of the served document runs, in order, under `set -euo pipefail`,
in bash, so the variables one block sets carry into the next. The one step the
document leaves to a person (open the address in a browser, sign in, approve, copy
the redirect address into CALLBACK_URL) is played here by `Human`: the blocks before
it run in one bash, which leaves its variables and functions in a file (`declare -p`,
`declare -f`); the person approves; the blocks after it run in a second bash that
sources that file, as the reader's one shell keeps them.
The reader's redirect URI is replaced by the test's loopback callback server, the
way the document allows (`REDIRECT_URI` set beforehand wins); its DPoP step makes proofs
with the test's own Python, which has joserfc (`DPOP_PYTHON`, as the document allows).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import httpx

from ..support.oauth_client import Human, query_of, strip_query
from .conftest import CallbackServer, Platform

SH_BLOCK = re.compile(r"^```sh\n(.*?)^```$", re.M | re.S)
HUMAN_STEP = "\n## 4. Sign in and approve in the browser\n"
ASSIGNED = re.compile(r"^([A-Z][A-Z0-9_]*)=", re.M)
MARK = "@@walkthrough block {}@@"
BLOCK_TIMEOUT = 90.0


@dataclass
class Run:
    """What one bash process printed, block by block, and the variables after each block."""

    returncode: int
    stdout: dict[int, str]
    stderr: str
    variables: dict[int, dict[str, str]]

    def explain(self) -> str:
        last = max(self.stdout, default=0)
        return f"exit {self.returncode} in block {last}\n--- stdout:\n{self.stdout.get(last, '')}\n--- stderr:\n{self.stderr}"


def split_document(doc: str) -> tuple[list[str], list[str]]:
    """The sh blocks before the person's step and after it."""
    assert doc.count(HUMAN_STEP) == 1, "the document must name the person's step exactly once"
    head, tail = doc.split(HUMAN_STEP)
    before, after = SH_BLOCK.findall(head), SH_BLOCK.findall(tail)
    assert before and after
    return before, after


def run_blocks(
    blocks: list[str],
    *,
    first: int,
    workdir: Path,
    preamble: str,
    names: list[str],
    env: dict[str, str],
    dump: Path | None = None,
) -> Run:
    """Run `blocks` in one bash; after each, record the named variables as JSON."""
    snapshot = (
        "python3 -c 'import json, sys; print(json.dumps(dict(a.split(\"=\", 1) for a in sys.argv[1:])))' "
        + " ".join(f'"{n}=${{{n}-}}"' for n in names)
    )
    lines = ["set -euo pipefail", preamble]
    for number, block in enumerate(blocks, start=first):
        lines += [
            f"printf '\\n%s\\n' '{MARK.format(number)}'",
            f"printf '\\n%s\\n' '{MARK.format(number)}' >&2",
            block.rstrip("\n"),
            f"{snapshot} > {shlex.quote(str(workdir / f'vars-{number}.json'))}",
        ]
    if dump is not None:
        lines.append(f"declare -p {' '.join(names)} > {shlex.quote(str(dump))} 2>/dev/null || true")
        lines.append(
            f"declare -f >> {shlex.quote(str(dump))}"
        )  # the functions the blocks define, as a shell keeps them
    script = workdir / f"blocks-{first}.sh"
    script.write_text("\n".join(lines) + "\n")
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", str(script)],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=BLOCK_TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    stdout: dict[int, str] = {}
    parts = re.split(r"\n@@walkthrough block (\d+)@@\n", done.stdout)
    for number, text in zip(parts[1::2], parts[2::2], strict=False):
        stdout[int(number)] = text
    variables = {}
    for number in stdout:
        path = workdir / f"vars-{number}.json"
        if path.exists():
            variables[number] = json.loads(path.read_text())
    return Run(done.returncode, stdout, done.stderr, variables)


async def test_the_walkthrough_runs_as_written(
    platform: Platform, callback_server: CallbackServer, tmp_path: Path
) -> None:
    base = platform.base_url
    async with httpx.AsyncClient(timeout=15.0) as http:
        served = await http.get(f"{base}/auth.md")
    assert served.status_code == 200, served.text
    assert served.headers["content-type"] == "text/markdown; charset=utf-8"
    doc = served.text
    assert f'BASE_URL="{base}"' in doc
    before, after = split_document(doc)
    assert any('REDIRECT_URI="${REDIRECT_URI:-' in block for block in before)
    names = sorted({n for block in before + after for n in ASSIGNED.findall(block)} | {"CALLBACK_URL"})
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "LANG": "C.UTF-8",
        "REDIRECT_URI": callback_server.url,
        "DPOP_PYTHON": sys.executable,
    }

    # -- the blocks up to the person's step ---------------------------------------------
    dump = tmp_path / "variables.sh"
    first = await asyncio.to_thread(
        run_blocks, before, first=1, workdir=tmp_path, preamble="", names=names, env=env, dump=dump
    )
    assert first.returncode == 0, first.explain()
    assert sorted(first.stdout) == list(range(1, len(before) + 1))
    state = first.variables[len(before)]
    assert state["ISSUER"] == base and state["BASE_URL"] == base
    assert state["REDIRECT_URI"] == callback_server.url
    assert state["CLIENT_ID"] and state["CLIENT_ID"] in "".join(first.stdout.values())
    basic = next(text for text in first.stdout.values() if "HTTP Basic client authentication" in text)
    assert "HTTP Basic client authentication: HTTP 200" in basic, basic
    assert '"error":"invalid_client"' in basic  # the wrong secret
    assert "registered: My confidential tool with client_secret_basic" in basic
    assert "deleted: HTTP 204" in basic
    url = state["AUTHORIZATION_URL"]
    assert url in first.stdout[len(before)], "the block that builds the address must print it"
    params = query_of(url)
    assert strip_query(url) == f"{base}/oauth/authorize"
    assert params["code_challenge_method"] == "S256" and params["code_challenge"] == state["CODE_CHALLENGE"]
    assert params["redirect_uri"] == callback_server.url and params["client_id"] == state["CLIENT_ID"]
    assert params["state"] == state["STATE"] and params["resource"] == base

    # -- the person: open the address, sign in, approve; the browser lands on the loopback ----
    async with Human(base) as human:
        location = await human.authorize(url, email=platform.email, password=platform.password)
        assert strip_query(location) == callback_server.url
        await human.follow_to_callback(location)
    received = await callback_server.wait()
    assert received["iss"] == base and received["state"] == state["STATE"] and received["code"]

    # -- the blocks after it, in a new bash that picks up the variables --------------------
    preamble = f"source {shlex.quote(str(dump))}\nCALLBACK_URL={shlex.quote(location)}"
    number = len(before) + 1
    second = await asyncio.to_thread(
        run_blocks, after, first=number, workdir=tmp_path, preamble=preamble, names=names, env=env
    )
    assert second.returncode == 0, second.explain()
    assert sorted(second.stdout) == list(range(number, number + len(after)))
    out, seen = second.stdout, second.variables

    def first_block(pattern: str) -> int:
        """The number of the first block after the person's step whose text matches."""
        for n, block in enumerate(after, start=number):
            if re.search(pattern, block, re.M):
                return n
        raise AssertionError(f"no block matches {pattern!r}")

    code_block = first_block(r"^CODE=")
    assert seen[code_block]["CODE"] == received["code"]

    exchange = first_block(r"grant_type=authorization_code")
    tokens = seen[exchange]
    assert tokens["ACCESS_TOKEN"].count(".") == 2 and tokens["REFRESH_TOKEN"]
    assert "granted: openid profile email courses:read" in out[exchange]
    assert "id_token: yes" in out[exchange]

    api = first_block(r"/api/v1/courses\?limit=")
    courses = re.search(r"^(\d+) courses:$", out[api], re.M)
    assert courses and int(courses.group(1)) > 0, out[api]
    assert re.search(r"^- .+ \((published|draft)\)$", out[api], re.M), out[api]
    assert f'"email":"{platform.email}"' in out[api], "UserInfo did not name the person who signed in"
    assert re.search(r"^HTTP/\S+ 403", out[api], re.M), out[api]
    assert re.search(
        r'^www-authenticate: Bearer error="insufficient_scope".*scope="orders:read".*'
        rf'resource_metadata="{re.escape(base)}/.well-known/oauth-protected-resource"',
        out[api],
        re.M | re.I,
    ), out[api]

    refresh = first_block(r"grant_type=refresh_token")
    renewed = seen[refresh]
    assert renewed["REFRESH_TOKEN"] and renewed["REFRESH_TOKEN"] != tokens["REFRESH_TOKEN"], "no rotation"
    assert renewed["ACCESS_TOKEN"] != tokens["ACCESS_TOKEN"]
    assert "refreshed; granted: openid profile email courses:read" in out[refresh]

    # The optional DPoP step: the grant switches to DPoP at a refresh with a proof.
    bind = first_block(r"^DPOP_ACCESS_TOKEN=")
    assert "token_type: DPoP" in out[bind], out[bind]
    assert seen[bind]["REFRESH_TOKEN"] != renewed["REFRESH_TOKEN"]
    payload = seen[bind]["DPOP_ACCESS_TOKEN"].split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", claims["cnf"]["jkt"])
    use = first_block(r"Authorization: DPoP")
    assert re.search(r"^with DPoP: \d+ courses$", out[use], re.M), out[use]
    assert f'"email":"{platform.email}"' in out[use], out[use]
    assert re.search(r"^HTTP/\S+ 401", out[use], re.M), out[use]
    assert re.search(r'^www-authenticate: Bearer error="invalid_token".*DPoP algs=', out[use], re.M | re.I)
    assert "refresh without a proof: HTTP 400" in out[use], out[use]

    revoke = first_block(r"REVOCATION_ENDPOINT")
    assert "revocation: HTTP 200" in out[revoke], out[revoke]
    assert "after revocation: HTTP 401" in out[revoke], out[revoke]
    assert '"error":"invalid_token"' in out[revoke]

    # What the document promised holds outside it too: the grant is gone.
    async with httpx.AsyncClient(timeout=15.0) as http:
        reused = await http.post(
            f"{base}/api/oauth/token",
            data={
                "grant_type": "refresh_token",
                "refresh_token": renewed["REFRESH_TOKEN"],
                "client_id": state["CLIENT_ID"],
            },
        )
    assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
