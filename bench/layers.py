"""Where a request's time goes, without a server or a network: the ASGI apps called
in-process, one request after another, timed per layer (the bare framework, our
request middleware, each document path) and, for the token endpoint, the database and
Redis round trips and the signing cost of one refresh grant. Printed as Markdown;
`bench/run.py` appends it to RESULTS.md. Figures are microseconds of this process's
time per request, so they add up the way the server's CPU time does.

Usage: python -m bench.layers (needs the PostgreSQL and Redis of bench/stack.py).
"""

from __future__ import annotations

import asyncio
import collections
import os
import statistics
import sys
import time
import timeit
from typing import Any

import httpx
from litestar import Litestar

from bench.inputs import mint
from bench.stack import EMAIL, PASSWORD, RS_SECRET, in_process_settings, scratch_database
from courseschool.common.asgi import AppLifespan
from courseschool.common.logging import configure_logging
from tests.support.oauth_client import CALLBACK

ROUND_TRIPS: collections.Counter[str] = collections.Counter()


def _count_round_trips() -> None:
    """Wrap the drivers' single points of exit: one call is one round trip."""
    import asyncpg.connection as pg
    import redis.asyncio.connection as rc

    execute, send = pg.Connection._execute, rc.AbstractConnection.send_packed_command

    async def counted_execute(self: Any, *args: Any, **kwargs: Any) -> Any:
        ROUND_TRIPS["postgres"] += 1
        return await execute(self, *args, **kwargs)

    async def counted_send(self: Any, *args: Any, **kwargs: Any) -> Any:
        ROUND_TRIPS["redis"] += 1
        return await send(self, *args, **kwargs)

    pg.Connection._execute = counted_execute  # type: ignore[method-assign]
    rc.AbstractConnection.send_packed_command = counted_send  # type: ignore[method-assign]


def _scope(path: str) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1")],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
    }


async def per_request_us(app: Any, path: str, n: int = 5000, repeats: int = 5) -> float:
    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    statuses: list[int] = []

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    scope = _scope(path)
    runs = []
    for _ in range(repeats):
        started = time.perf_counter()
        for _ in range(n):
            await app(dict(scope), receive, send)
        runs.append((time.perf_counter() - started) / n * 1e6)
    assert set(statuses) == {200}, f"{path}: {collections.Counter(statuses)}"
    return min(runs)  # the least disturbed run


async def main() -> None:
    # Production's logging (a JSON line per request), rendered and written, but to /dev/null.
    sys.stderr = open(os.devnull, "w")  # noqa: SIM115
    configure_logging("info", "json")
    sys.stderr = sys.__stderr__
    _count_round_trips()
    from bench.ceiling import app as ceiling
    from bench.ceiling import ceiling as bare
    from courseschool.common.web import server_app, service_app
    from courseschool.platform.app import build
    from courseschool.platform.run import prepare

    lines: list[str] = []
    async with scratch_database("layers") as dsn:
        await prepare(dsn, demo_email=EMAIL, demo_password=PASSWORD, rs_secret=RS_SECRET)
        base = "http://127.0.0.1:8000"
        platform = build(in_process_settings(dsn, base))
        wrapped: Litestar = service_app("bench", route_handlers=[bare], ready_checks={})
        async with AppLifespan(ceiling), AppLifespan(wrapped), AppLifespan(platform):
            served = server_app(platform, platform.apps, "")  # as a server runs it
            rows = [
                ("bare Litestar endpoint (the ceiling app)", ceiling, "/ceiling"),
                ("the same endpoint in service_app (request id, log line, metrics)", wrapped, "/ceiling"),
                ("platform: discovery document, answered in front", served, "/.well-known/oauth-authorization-server"),
                ("platform: JWKS, answered in front", served, "/api/oauth/jwks"),
                ("platform: JWKS through the router, the middleware and its route", platform, "/api/oauth/jwks"),
            ]
            lines += [
                "### Per layer, in-process (no server, no network)",
                "",
                "| path | µs per request |",
                "|---|---:|",
            ]
            for label, app, path in rows:
                lines.append(f"| {label} | {await per_request_us(app, path):.1f} |")
            lines += ["", *await refresh_breakdown(platform, dsn, base)]
        lines += await statement_cost(dsn)
    print("\n".join(lines))


async def statement_cost(dsn: str, count: int = 3000) -> list[str]:
    """One small statement, one at a time, through the services' pool (a checkout and a
    release around it, as every storage call outside `common.db.held` does), through the
    pool inside a held block (the token endpoint's grants), and on a connection held
    throughout: what the pool costs per statement, in this thread's CPU time."""
    from courseschool.common.db import create_pool, held

    query = "SELECT $1::int + 1 AS a, now() AS b"
    pool = await create_pool(dsn, min_size=1, max_size=2)
    try:
        async with held(pool), pool.acquire() as connection:

            async def on_connection() -> None:
                await connection.fetchrow(query, 1)

            async def lent() -> None:
                await pool.fetchrow(query, 1)

            cost = {"held": 0.0, "lent": 0.0}
            for name, call in (("held", on_connection), ("lent", lent)):
                cost[name] = await _cpu_per_call(call, count)

        async def through_pool() -> None:
            await pool.fetchrow(query, 1)

        cost["pool"] = await _cpu_per_call(through_pool, count)
    finally:
        await pool.close()
    return [
        "### One PostgreSQL statement, in-process, one at a time",
        "",
        f"- Through the pool (checkout, statement, release): {cost['pool']:.0f} µs of this process's CPU; "
        f"through the pool inside `common.db.held` (the token endpoint's grants and revocation): "
        f"{cost['lent']:.0f} µs; on a connection held throughout: {cost['held']:.0f} µs.",
        "",
    ]


async def _cpu_per_call(call: Any, count: int) -> float:
    """The least of three runs of `count` calls, in µs of this thread's CPU per call."""
    runs = []
    for _ in range(3):
        started = time.thread_time()
        for _ in range(count):
            await call()
        runs.append((time.thread_time() - started) / count * 1e6)
    return min(runs)


async def refresh_breakdown(platform: Any, dsn: str, base: str, count: int = 600) -> list[str]:
    from courseschool.authz.storage.keys import KeyRing

    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=platform), base_url=base) as http:
        reg = (
            await http.post(
                "/api/oauth/register",
                json={"redirect_uris": [CALLBACK], "token_endpoint_auth_method": "client_secret_post"},
            )
        ).json()
        _, refreshes = await mint(dsn, reg, base, count)
        form = {"content-type": "application/x-www-form-urlencoded"}
        ROUND_TRIPS.clear()
        started, cpu = time.perf_counter(), time.process_time()
        for body in refreshes:
            response = await http.post("/api/oauth/token", content=body, headers=form)
            assert response.status_code == 200, response.text
        wall = (time.perf_counter() - started) / count * 1e3
        cpu = (time.process_time() - cpu) / count * 1e3
        ring: KeyRing = platform.default.state.authz.keys.ring
        claims = {"iss": base, "sub": "x", "aud": "y", "exp": 2**31, "iat": 0, "jti": "j" * 22, "scope": "openid"}
        sign_us = {
            alg: statistics.median(timeit.repeat(lambda a=alg: ring.sign_id_token(claims, a), number=200, repeat=5))
            / 200
            * 1e6
            for alg in ("ES256", "RS256")
        }
    trips = {k: v / count for k, v in ROUND_TRIPS.items()}
    return [
        "### One refresh grant, in-process, one at a time",
        "",
        f"- {wall:.2f} ms per request end to end, {cpu:.2f} ms of it on this process's CPU "
        "(the in-process HTTP client included).",
        f"- Round trips per request: {trips.get('postgres', 0):.1f} to PostgreSQL, "
        f"{trips.get('redis', 0):.1f} to Redis.",
        f"- Signing: ES256 access token {sign_us['ES256']:.0f} µs, RS256 ID token {sign_us['RS256']:.0f} µs.",
        "",
    ]


if __name__ == "__main__":
    asyncio.run(main())
