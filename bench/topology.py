"""The production topology section of a run: each service started with its `serve`
command (granian) behind the nginx gateway, its RSS idle and after load through the
gateway on its own paths."""

from __future__ import annotations

import tempfile
from pathlib import Path

from bench import shipped
from bench.harness import rss_mb, wrk
from bench.inputs import mint, owner_tokens
from bench.stack import KEK, RATES, redis_url, scratch_database


async def split_services(seconds: int) -> list[str]:
    """The production topology (tests/support/split.py: each service started with its `serve`
    command, granian, behind the nginx gateway): each service's RSS idle, then after load
    through the gateway on its own paths."""
    from tests.support.deployment import find_tool
    from tests.support.split import running_topology

    nginx = find_tool("nginx")
    if nginx is None:
        return ["- RSS per service: not measured (nginx is not installed).", ""]
    rates = {**RATES, "LOG_LEVEL": "info"}
    tmp = Path(tempfile.mkdtemp(prefix="cs-bench-split-"))
    async with scratch_database("bench_split") as dsn:
        with running_topology(
            dsn, redis_url(), KEK, tmp, nginx, overrides={"authz": rates}, python=str(shipped.python())
        ) as topology:
            idle = {svc: rss_mb(s.process) for svc, s in topology.services.items()}
            base = topology.base_url
            reg, tokens = await owner_tokens(base, "openid courses:read", topology.email, topology.password)
            _, refreshes = await mint(dsn, reg, base, seconds * 1500, email=topology.email)
            (tmp / "refresh.txt").write_text("\n".join(refreshes))
            load = [
                ("discovery", wrk(f"{base}/.well-known/oauth-authorization-server", seconds)),
                (
                    "resource-api",
                    wrk(
                        f"{base}/api/v1/courses?limit=20&published=true",
                        seconds,
                        script="bearer.lua",
                        env={"ACCESS_TOKEN": tokens["access_token"]},
                    ),
                ),
                (
                    "authz",
                    wrk(
                        f"{base}/api/oauth/token",
                        seconds,
                        script="bodies.lua",
                        env={"BODIES_FILE": str(tmp / "refresh.txt")},
                    ),
                ),
            ]
            loaded = {svc: rss_mb(s.process) for svc, s in topology.services.items()}
    return _services_table(seconds, load, idle, loaded)


def _services_table(
    seconds: int, load: list[tuple[str, dict[str, float]]], idle: dict[str, float], loaded: dict[str, float]
) -> list[str]:
    """Each service's throughput on its path, and its RSS idle and after the load."""
    paths = {"discovery": "AS metadata", "resource-api": "course list with a bearer token", "authz": "refresh grant"}
    out = [
        "## Each service on its own (the production topology)",
        "",
        "Three `serve` processes (granian, one worker each) behind the nginx gateway of "
        "deploy/nginx/nginx.conf, loaded through the gateway on one path each "
        f"({seconds} s, wrk -c32, unpinned: gateway, services, PostgreSQL and Redis share the cores).",
        "",
        "RSS is that of the service's granian process and its worker together.",
        "",
        "| service | loaded with | req/s | p99 ms | RSS idle MiB | RSS after load MiB |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for svc, result in load:
        out.append(
            f"| {svc} | {paths[svc]} | {result['rps']:.0f} | {result['p99']:.1f} | {idle[svc]:.0f} | "
            f"{loaded[svc]:.0f} |"
        )
    return [*out, ""]
