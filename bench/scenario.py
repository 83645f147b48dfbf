"""One token-path scenario made ready for a profiler (bench/hotspots.py) or a lever's
measurement (bench/levers.py): the all-in-one server on granian over a scratch database,
wrk's script and inputs for it, the request bodies wrk would send, and a caller that
sends them straight into the ASGI app."""

from __future__ import annotations

import collections
import contextlib
import subprocess
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urlencode

from bench.harness import start, stop
from bench.inputs import claims, mint_public, owner_tokens, register_public
from bench.stack import (
    EMAIL,
    PASSWORD,
    RS_CLIENT_ID,
    RS_SECRET,
    platform_env,
    redis_url,
    scratch_database,
    server_command,
)
from tests.support.net import free_port


def refresh_body(token: str, client_id: str) -> str:
    return urlencode({"grant_type": "refresh_token", "refresh_token": token, "client_id": client_id})


def request_bodies(scenario: str, wrk_env: dict[str, str]) -> list[str]:
    """The request bodies wrk would send, each once (the reads send none)."""
    if scenario == "introspection":
        return [Path(wrk_env["BODY_FILE"]).read_text().strip()] * 2000
    if scenario == "refresh":
        return [refresh_body(t, wrk_env["CLIENT_ID"]) for t in Path(wrk_env["TOKENS_FILE"]).read_text().split()]
    if scenario == "code":
        return Path(wrk_env["BODIES_FILE"]).read_text().split()[:2000]
    return [""] * 5000  # the reads: GET, the token (if any) in the header


def asgi_caller(
    app: Any, scenario: str, base: str, url: str, wrk_env: dict[str, str]
) -> tuple[Callable[[str], Awaitable[bytes]], collections.Counter[int]]:
    """A call of the scenario's request with a body, straight into the ASGI app (no
    server, no socket), giving back the response's body; and the statuses counted."""
    path, _, query = url.removeprefix(base).partition("?")
    method = "POST" if scenario in ("introspection", "refresh", "code") else "GET"
    headers = [(b"host", b"127.0.0.1")]
    if method == "POST":
        headers.append((b"content-type", b"application/x-www-form-urlencoded"))
    elif wrk_env.get("ACCESS_TOKEN"):
        headers.append((b"authorization", f"Bearer {wrk_env['ACCESS_TOKEN']}".encode()))
    statuses: collections.Counter[int] = collections.Counter()

    async def call(body: str) -> bytes:
        sent = bytearray()

        async def receive() -> dict[str, object]:
            return {"type": "http.request", "body": body.encode(), "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                statuses[int(message["status"])] += 1
            elif message["type"] == "http.response.body":
                sent.extend(message.get("body", b""))

        await app(
            {
                "type": "http",
                "asgi": {"version": "3.0"},
                "http_version": "1.1",
                "method": method,
                "scheme": "http",
                "path": path,
                "raw_path": path.encode(),
                "query_string": query.encode(),
                "root_path": "",
                "headers": headers,
                "client": ("127.0.0.1", 5000),
                "server": ("127.0.0.1", 8000),
            },
            receive,
            send,
        )
        return bytes(sent)

    return call, statuses


class Scenario(NamedTuple):
    """A scenario's server (the all-in-one on granian, over a scratch database) and what
    loads it: the URL, wrk's script and its environment."""

    dsn: str
    base: str
    url: str
    script: str
    wrk_env: dict[str, str]
    process: subprocess.Popen[bytes]


@contextlib.asynccontextmanager
async def scenario_server(scenario: str, *, codes: int, refresh_lineages: int = 256) -> AsyncIterator[Scenario]:
    tmp = Path(tempfile.mkdtemp(prefix="cs-profile-"))
    from courseschool.platform.run import prepare

    async with scratch_database("profile") as dsn:
        await prepare(dsn, demo_email=EMAIL, demo_password=PASSWORD, rs_secret=RS_SECRET)
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        env = platform_env(dsn, redis_url(), port, "jwt", tmp / "data")
        process = start(server_command("granian", port), env, f"{base}/readyz", tmp / "server.log")
        try:
            _reg, tokens = await owner_tokens(base, "openid courses:read")
            client_id = await register_public(base)
            if scenario == "introspection":
                body = tmp / "body.txt"
                body.write_text(
                    urlencode({"token": tokens["access_token"], "client_id": RS_CLIENT_ID, "client_secret": RS_SECRET})
                    + "\n"
                )
                script, url, wrk_env = "introspect.lua", f"{base}/api/oauth/introspect", {"BODY_FILE": str(body)}
            elif scenario == "refresh":
                lines = await mint_public(dsn, client_id, base, "refresh", refresh_lineages)
                (tmp / "refresh.txt").write_text("\n".join(lines) + "\n")
                script, url = "refresh.lua", f"{base}/api/oauth/token"
                wrk_env = {"TOKENS_FILE": str(tmp / "refresh.txt"), "CLIENT_ID": client_id}
            elif scenario == "code":
                lines = await mint_public(dsn, client_id, base, "code", codes)
                (tmp / "codes.txt").write_text("\n".join(lines) + "\n")
                script, url, wrk_env = "once.lua", f"{base}/api/oauth/token", {"BODIES_FILE": str(tmp / "codes.txt")}
            elif scenario == "read":
                script, url = "bearer.lua", f"{base}/api/v1/courses?limit=20&published=true"
                wrk_env = {"ACCESS_TOKEN": tokens["access_token"]}
            else:  # anonymous: the public catalogue, as the bench reads it
                school = claims(tokens["access_token"])["school_id"]
                script, url = "bearer.lua", f"{base}/api/v1/courses?limit=20&published=true&school={school}"
                wrk_env = {"ACCESS_TOKEN": ""}
            yield Scenario(dsn, base, url, script, wrk_env, process)
        finally:
            stop(process)
