"""The walkthrough as a reader pastes it into a shell (no `set -e`), when the server
refuses: a code used after it expired. The block of step 6 prints the server's error
(`invalid_grant: the authorization code has expired`), not Python tracebacks, and sets
no token. After a failed browser step, every later block says in one line that it did
nothing."""

from __future__ import annotations

import asyncio
import re
import shlex
import subprocess
from pathlib import Path

import httpx

from ..support.oauth_client import Human, discover, query_of, register, s256
from .conftest import Platform, running_platform
from .test_walkthrough import SH_BLOCK, split_document

REDIRECT = "http://127.0.0.1:53682/callback"


def _block(doc: str, heading: str) -> str:
    """The first sh block under the `## <heading>` section."""
    section = doc.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return SH_BLOCK.findall(section)[0]


async def test_an_expired_code_shows_the_servers_error_in_step_6(
    database_url: str, redis_url: str, kek: str, tmp_path: Path
) -> None:
    with running_platform(database_url, redis_url, kek, tmp_path, extra_env={"CODE_TTL": "1"}) as platform:
        async with httpx.AsyncClient(timeout=15.0) as http:
            doc = (await http.get(f"{platform.base_url}/auth.md")).text
            meta = await discover(http, platform.base_url)
            reg = await register(http, meta, REDIRECT)
        verifier = "v" * 50
        challenge = s256(verifier)
        url = str(
            httpx.URL(
                meta["authorization_endpoint"],
                params={
                    "response_type": "code",
                    "client_id": reg["client_id"],
                    "redirect_uri": REDIRECT,
                    "scope": "openid",
                    "code_challenge": challenge,
                    "code_challenge_method": "S256",
                },
            )
        )
        async with Human(platform.base_url) as human:
            location = await human.authorize(url, email=platform.email, password=platform.password)
        await asyncio.sleep(2.5)  # past CODE_TTL
        script = "\n".join(
            [
                _block(doc, "1. Discover"),
                f"CLIENT_ID={shlex.quote(reg['client_id'])}",
                f"CODE={shlex.quote(query_of(location)['code'])}",
                f"CODE_VERIFIER={shlex.quote(verifier)}",
                _block(doc, "6. Exchange the code for tokens"),
                'echo "ACCESS_TOKEN=[${ACCESS_TOKEN-}]"',
            ]
        )
        done = await asyncio.to_thread(
            subprocess.run,
            ["bash", "--noprofile", "--norc", "-c", script],  # as pasted: no set -e
            capture_output=True,
            text=True,
            timeout=60,
            env={"PATH": "/usr/bin:/bin", "REDIRECT_URI": REDIRECT, "HOME": str(tmp_path)},
        )
    said = done.stdout + done.stderr
    assert "the server answered: invalid_grant: the authorization code has expired" in said, said
    assert "Traceback" not in said, said
    assert len(re.findall("the server answered", said)) == 1, said  # the block stops at the first error
    assert "ACCESS_TOKEN=[]" in done.stdout


async def test_after_a_failed_browser_step_each_later_block_stops_with_one_line(
    platform: Platform, tmp_path: Path
) -> None:
    """Issue 38 (from 9): after a failed browser step (the person chose Deny), step 5 said
    "code received (0 characters)" and the later blocks printed Python tracebacks. Step 5
    says why it has no code; each later block says, in one line, that it did nothing."""
    async with httpx.AsyncClient(timeout=15.0) as http:
        doc = (await http.get(f"{platform.base_url}/auth.md")).text
    before, after = split_document(doc)
    denied = (
        'CALLBACK_URL="$REDIRECT_URI?error=access_denied&error_description=the+user+denied+the+request'
        "&state=$STATE&iss=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=\"\"))'"
        ' "$ISSUER")"'
    )
    script = "\n".join([before[0], 'CLIENT_ID="a-registered-client"', before[-1], denied, *after])
    done = await asyncio.to_thread(
        subprocess.run,
        ["bash", "--noprofile", "--norc", "-c", script],  # as pasted: no set -e
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "REDIRECT_URI": REDIRECT, "HOME": str(tmp_path)},
    )
    after_url = done.stdout.split(platform.base_url + "/oauth/authorize?", 1)[1].split("\n", 1)[1]
    said = [line for line in (after_url + done.stderr).splitlines() if line.strip()]
    assert said[0] == "authorization failed: access_denied: the user denied the request", said
    assert said[1:] == [
        f"skipped: {name} is not set; an earlier step failed or was not run (its message says why)"
        for name in ("CODE", "ACCESS_TOKEN", "REFRESH_TOKEN", "REFRESH_TOKEN", "DPOP_ACCESS_TOKEN", "REFRESH_TOKEN")
    ], said
    assert len(after) == 7  # step 5, 6, 7, 8, the two of 9, 10: each said one line
