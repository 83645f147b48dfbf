"""One lever of the token path, measured alone: is the CPU a request costs smaller with
it than without? The same requests go through the all-in-one ASGI app in this process,
one at a time on uvloop (no server, no socket), in batches that alternate the product
as it is ("on") with the lever taken out ("off": the code as it was before the lever,
patched in where the product looks it up). Every batch is timed by this thread's CPU
clock, so a machine busy with other work slows both sides alike and waiting for
PostgreSQL counts nothing; the order flips every round. PostgreSQL's own CPU is not in
the figure: a lever that moves work into the database is judged by `make bench`.

Usage: python -m bench.levers LEVER [--rounds 9] [--batch 200]; LEVER one of LEVERS.
Needs what bench/hotspots.py needs (the PostgreSQL and Redis of bench/stack.py).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import importlib
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import msgspec
import uvloop
from litestar import Request, Response, post

from bench.scenario import asgi_caller, refresh_body, request_bodies, scenario_server
from bench.stack import in_process_settings
from courseschool.authz.endpoints.introspection import introspect_token
from courseschool.authz.endpoints.token import exchange_token
from courseschool.authz.web import introspection, token
from courseschool.authz.web.http import TokensDep, client_ip, multi
from courseschool.common.answers import NO_STORE
from courseschool.common.errors import InvalidRequestError
from courseschool.common.web import no_store_json, proof_target


class Lever(NamedTuple):
    what: str
    scenarios: tuple[str, ...]
    module: str  # where the product looks the lever up
    attribute: str
    off: Callable[[Any], Any]  # the lever taken out, given the product's own
    at_build: bool = False  # looked up when the app is built: one app each side, alternated


def _framework_routes(routes: list[Any]) -> list[Any]:
    """The form endpoints as they were before `form_post`: the framework's POST routes,
    its request object and form parser, a dependency for the family, its response."""

    async def form_params(request: Request[Any, Any, Any]) -> dict[str, list[str]]:
        content_type = request.headers.get("content-type", "")
        if content_type.split(";")[0].strip().lower() != "application/x-www-form-urlencoded":
            raise InvalidRequestError("the request body must be application/x-www-form-urlencoded")
        return multi((await request.form()).multi_items())

    @post(["/api/oauth/token", "/token"], status_code=200)
    async def framework_token(request: Request[Any, Any, Any], tokens: TokensDep) -> Response[bytes]:
        dpop = proof_target(request.scope, tokens.settings.base_url)
        form, authorization = await form_params(request), request.headers.get("authorization")
        response = await exchange_token(tokens, form, ip=client_ip(request), authorization=authorization, dpop=dpop)
        headers = {**NO_STORE, **await tokens.dpop.nonce_header(dpop)}
        return Response(msgspec.json.encode(response), media_type="application/json", headers=headers)

    @post("/api/oauth/introspect", status_code=200)
    async def framework_introspect(request: Request[Any, Any, Any], tokens: TokensDep) -> Response[bytes]:
        form, authorization = await form_params(request), request.headers.get("authorization")
        return no_store_json(await introspect_token(tokens, form, ip=client_ip(request), authorization=authorization))

    swapped = {token.token: framework_token, introspection.introspect: framework_introspect}
    return [swapped.get(route, route) for route in routes]


LEVERS = {
    "held": Lever(
        "the grant's statements over one checkout (common.db.held), against a checkout per statement",
        ("refresh", "code"),
        "courseschool.authz.endpoints.token",
        "held",
        lambda _held: lambda _pool: contextlib.nullcontext(),
    ),
    "form_post": Lever(
        "the form endpoints as raw routes (web/http.py form_post), against the framework's POST routes",
        ("refresh", "code", "introspection"),
        "courseschool.authz.app",
        "ROUTES",
        _framework_routes,
        at_build=True,
    ),
}


class Inputs:
    """Single-use inputs handed out one per request: codes once each; refresh tokens as
    lineages, each rotated into the token its answer carries."""

    def __init__(self, scenario: str, bodies: list[str], client_id: str) -> None:
        self._scenario, self._client_id = scenario, client_id
        self._bodies = bodies
        self._next = 0

    def take(self) -> tuple[int, str]:
        n = self._next
        self._next += 1
        if self._scenario in ("refresh", "introspection"):  # lineages; the same token each time
            return n % len(self._bodies), self._bodies[n % len(self._bodies)]
        return n, self._bodies[n]

    def answered(self, slot: int, reply: bytes) -> None:
        if self._scenario == "refresh":
            token = msgspec.json.decode(reply)["refresh_token"]
            self._bodies[slot] = refresh_body(token, self._client_id)


async def measure(lever_name: str, scenario: str, rounds: int, batch: int) -> list[str]:
    from courseschool.common.asgi import AppLifespan
    from courseschool.platform.app import build

    lever = LEVERS[lever_name]
    owner = importlib.import_module(lever.module)
    on = getattr(owner, lever.attribute)
    off = lever.off(on)
    codes = batch * (2 * rounds + 1) + 50
    async with scenario_server(scenario, codes=codes) as s:
        apps = {"on": build(in_process_settings(s.dsn, s.base))}
        if lever.at_build:  # the "off" app built with the lever taken out
            setattr(owner, lever.attribute, off)
            try:
                apps["off"] = build(in_process_settings(s.dsn, s.base))
            finally:
                setattr(owner, lever.attribute, on)
        callers = {side: asgi_caller(app, scenario, s.base, s.url, s.wrk_env) for side, app in apps.items()}
        statuses = collections.Counter[int]()
        every_code = scenario == "code"  # request_bodies stops at 2,000
        bodies = (
            Path(s.wrk_env["BODIES_FILE"]).read_text().split() if every_code else request_bodies(scenario, s.wrk_env)
        )
        inputs = Inputs(scenario, bodies, s.wrk_env.get("CLIENT_ID", ""))

        def take(side: str) -> Callable[[str], Any]:
            """The side's caller; a lever looked up per request is patched in for it."""
            if not lever.at_build:
                setattr(owner, lever.attribute, on if side == "on" else off)
            return callers[side if side in callers else "on"][0]

        async def run_batch(call: Callable[[str], Any], count: int) -> float:
            started = time.thread_time_ns()
            for _ in range(count):
                slot, body = inputs.take()
                inputs.answered(slot, await call(body))
            return (time.thread_time_ns() - started) / count / 1000

        found: dict[str, list[float]] = {"on": [], "off": []}
        try:
            async with contextlib.AsyncExitStack() as running:
                for app in apps.values():
                    await running.enter_async_context(AppLifespan(app))
                for side in ("on", "off"):  # warm-up, not counted
                    await run_batch(take(side), 25)
                for n in range(rounds):
                    for side in ("on", "off") if n % 2 == 0 else ("off", "on"):
                        found[side].append(await run_batch(take(side), batch))
        finally:
            setattr(owner, lever.attribute, on)
            for _call, counted in callers.values():
                statuses.update(counted)
    assert set(statuses) == {200}, f"every request must succeed: {dict(statuses)}"
    on_us, off_us = statistics.median(found["on"]), statistics.median(found["off"])
    ratios = [a / b for a, b in zip(found["on"], found["off"], strict=True)]
    return [
        f"| {lever_name} | {scenario} | {on_us:.0f} | {off_us:.0f} | {off_us - on_us:+.0f} "
        f"| {(on_us - off_us) / off_us:+.1%} | {statistics.median(ratios):.3f} |"
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lever", choices=sorted(LEVERS))
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--batch", type=int, default=200)
    args = parser.parse_args()
    from courseschool.common.logging import configure_logging

    sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - production's JSON lines, to nowhere
    configure_logging("info", "json")
    sys.stderr = sys.__stderr__
    lever = LEVERS[args.lever]
    lines = [
        f"Lever `{args.lever}`: {lever.what}. In-process, one request at a time, {args.rounds} rounds of "
        f"{args.batch} requests per side, alternated; CPU µs per request of this thread, medians of rounds.",
        "",
        "| lever | scenario | on µs | off µs | saved µs | on vs off | median of rounds' on/off |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for scenario in lever.scenarios:
        lines += uvloop.run(measure(args.lever, scenario, args.rounds, args.batch))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
