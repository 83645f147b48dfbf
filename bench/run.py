"""The benchmark suite (`make bench`): wrk on loopback against the platform started with
its production server settings on real PostgreSQL and Redis, every figure also given
as a ratio to the framework ceiling measured in the same run. Bounded in time.

Usage: python bench/run.py [--seconds 5] [--repeats 3]; writes bench/RESULTS.md.
Needs wrk (Debian) and a PostgreSQL and Redis (BENCH_DATABASE_URL / BENCH_REDIS_URL,
default: the machine's servers on 127.0.0.1).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import hashlib
import os
import re
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlencode

import asyncpg
import httpx
import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from courseschool.authz.storage.grants import PgGrantStore  # noqa: E402
from courseschool.common.jose import new_kek  # noqa: E402
from courseschool.common.secrets import new_token  # noqa: E402
from tests.e2e.support import Human, query_of  # noqa: E402
from tests.infra import with_database  # noqa: E402

PG = os.environ.get("BENCH_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
REDIS = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/3")
EMAIL, PASSWORD = "bench-owner@example.test", "bench password for the owner"
CALLBACK = "http://127.0.0.1:9/callback"
CORES = os.cpu_count() or 1


@contextlib.asynccontextmanager
async def scratch_database(prefix: str) -> AsyncIterator[str]:
    """A database of its own on the bench server, dropped afterwards."""
    admin = await asyncpg.connect(PG)
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    await admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield with_database(PG, name)
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pinned(cmd: list[str], core: int) -> list[str]:
    return ["taskset", "-c", str(core), *cmd] if shutil.which("taskset") and CORES > 1 else cmd


def start(cmd: list[str], env: dict[str, str], url: str, log: Path) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(pinned(cmd, 0), env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=1).status_code < 500:
                return process
        except httpx.HTTPError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError(f"did not start: {log.read_text()[-2000:]}")


def wrk(url: str, seconds: int, *, script: str | None = None, env: dict[str, str] | None = None,
        connections: int = 32) -> dict[str, float]:
    cmd = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency", url]
    if script:
        cmd[1:1] = ["-s", str(ROOT / "bench" / "lua" / script)]
    out = subprocess.run(pinned(cmd, 1 if CORES > 1 else 0), capture_output=True, text=True,
                         env={**os.environ, **(env or {})}, timeout=seconds + 30).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    total = int(re.search(r"(\d+) requests in", out).group(1))
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {"rps": rps, "p50": _ms(out, "50%"), "p99": _ms(out, "99%"),
            "errors": (int(bad.group(1)) / total) if bad and total else 0.0}


def _ms(out: str, label: str) -> float:
    value, unit = re.search(rf"{label}\s+([\d.]+)(us|ms|s)", out).groups()
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def median_of(runs: list[dict[str, float]]) -> dict[str, float]:
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


async def owner_tokens(base: str, scope: str, email: str = EMAIL, password: str = PASSWORD) -> tuple[dict, dict]:
    async with httpx.AsyncClient(timeout=30) as http:
        reg = (await http.post(f"{base}/api/oauth/register", json={
            "redirect_uris": [CALLBACK], "token_endpoint_auth_method": "client_secret_post"})).json()
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        url = f"{base}/oauth/authorize?" + urlencode({
            "response_type": "code", "client_id": reg["client_id"], "redirect_uri": CALLBACK, "scope": scope,
            "code_challenge": challenge, "code_challenge_method": "S256"})
        async with Human(base) as human:
            code = query_of(await human.authorize(url, email=email, password=password))["code"]
        tokens = (await http.post(f"{base}/api/oauth/token", data={
            "grant_type": "authorization_code", "code": code, "redirect_uri": CALLBACK, "code_verifier": verifier,
            "client_id": reg["client_id"], "client_secret": reg["client_secret"]})).json()
    return reg, tokens


async def mint(dsn: str, reg: dict, base: str, count: int, email: str = EMAIL) -> tuple[list[str], list[str]]:
    """Pre-minted single-use authorization codes and refresh tokens, as form bodies."""
    pool = await asyncpg.create_pool(dsn, min_size=1, max_size=4)
    grants = PgGrantStore(pool)
    user_id, school_id = await pool.fetchrow(
        "SELECT id::text, school_id::text FROM authz_users WHERE email = $1", email)
    verifier = "v" * 64
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    now = int(time.time())
    codes: list[str] = []
    refreshes: list[str] = []

    async def one() -> None:
        code, refresh = new_token(), new_token()
        grant = await grants.create_with_code(
            client_id=reg["client_id"], user_id=user_id, school_id=school_id, scope="openid courses:read",
            resource=base, auth_time=now, code=code, redirect_uri=CALLBACK, code_challenge=challenge, nonce=None,
            code_expires_at=now + 3600, now=now)
        codes.append(urlencode({"grant_type": "authorization_code", "code": code, "redirect_uri": CALLBACK,
                                "code_verifier": verifier, "client_id": reg["client_id"],
                                "client_secret": reg["client_secret"]}))
        other_code = new_token()
        grant2 = await grants.create_with_code(
            client_id=reg["client_id"], user_id=user_id, school_id=school_id, scope="openid courses:read",
            resource=base, auth_time=now, code=other_code, redirect_uri=CALLBACK, code_challenge=challenge,
            nonce=None, code_expires_at=now + 3600, now=now)
        await grants.redeem_code(code=other_code, refresh_token=refresh, scope=grant2.scope, resource=base, now=now)
        refreshes.append(urlencode({"grant_type": "refresh_token", "refresh_token": refresh,
                                    "client_id": reg["client_id"], "client_secret": reg["client_secret"]}))
        del grant

    for start_at in range(0, count, 4):
        await asyncio.gather(*(one() for _ in range(min(4, count - start_at))))
    await pool.close()
    return codes, refreshes


async def flow_latency(base: str, runs: int) -> float:
    """Seconds from registration to the first API call, through the real pages."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        reg, tokens = await owner_tokens(base, "courses:read")
        async with httpx.AsyncClient(timeout=30) as http:
            response = await http.get(f"{base}/api/v1/courses",
                                      headers={"Authorization": f"Bearer {tokens['access_token']}"})
            assert response.status_code == 200
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _claims(token: str) -> dict:
    import msgspec

    payload = token.split(".")[1]
    return msgspec.json.decode(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def rss_mb(process: subprocess.Popen[bytes]) -> float:
    proc = psutil.Process(process.pid)
    procs = [proc, *proc.children(recursive=True)]
    return sum(p.memory_info().rss for p in procs if p.is_running()) / 2**20


KEK = new_kek()


def platform_env(dsn: str, redis: str, port: int, mode: str, data: Path) -> dict[str, str]:
    return {**os.environ, "DATABASE_URL": dsn, "REDIS_URL": redis, "KEY_ENCRYPTION_KEY": KEK,
            "DEMO_EMAIL": EMAIL, "DEMO_PASSWORD": PASSWORD, "LOG_LEVEL": "info", "LOG_FORMAT": "json",
            "DATA_DIR": str(data), "TOKEN_VALIDATION": mode, "BASE_URL": f"http://127.0.0.1:{port}",
            "RATE_REGISTER_PER_IP": "100000/60", "RATE_TOKEN_PER_IP": "1000000/60",
            "RATE_TOKEN_PER_CLIENT": "1000000/60", "RATE_LOGIN_PER_IP": "100000/60",
            "INTERNAL_TOKEN": INTERNAL, "RS_CLIENT_ID": "resource-api", "RS_CLIENT_SECRET": RS_SECRET}


RS_SECRET = new_token()
INTERNAL = new_token()


def server_command(server: str, port: int, app: str = "courseschool.platform.asgi:app") -> list[str]:
    if server == "granian":
        return [str(Path(sys.executable).with_name("granian")), "--interface", "asgi", "--host", "127.0.0.1",
                "--port", str(port), "--no-ws", "--log-level", "warning", app]
    return [sys.executable, "-m", "uvicorn", app, "--host", "127.0.0.1", "--port", str(port),
            "--log-level", "warning", "--no-access-log"]


async def bench(seconds: int, repeats: int, server: str = "granian", only: str = "") -> str:
    tmp = Path(tempfile.mkdtemp(prefix="cs-bench-"))
    rows: list[tuple[str, dict[str, float]]] = []
    notes: list[str] = []

    def measure(name: str, url: str, *, env: dict[str, str] | None = None, **kw: object) -> dict[str, float]:
        """`{n}` in an env value becomes the repeat's number: single-use bodies are never reused."""
        runs = [
            wrk(url, seconds, env={k: v.replace("{n}", str(n)) for k, v in (env or {}).items()}, **kw)  # type: ignore[arg-type]
            for n in range(repeats)
        ]
        result = median_of(runs)
        rows.append((name, result))
        print(f"{name}: {result['rps']:.0f} req/s, p50 {result['p50']:.2f} ms, p99 {result['p99']:.2f} ms", flush=True)
        return result

    port = free_port()
    ceiling = start(server_command(server, port, "bench.ceiling:app"), {**os.environ, "PYTHONPATH": str(ROOT)},
                    f"http://127.0.0.1:{port}/ceiling", tmp / "ceiling.log")
    try:
        measure("framework ceiling (bare endpoint)", f"http://127.0.0.1:{port}/ceiling")
    finally:
        ceiling.terminate()
        ceiling.wait(10)

    from courseschool.platform.__main__ import prepare

    async with scratch_database("bench") as dsn:
        await prepare(dsn, demo_email=EMAIL, demo_password=PASSWORD, rs_secret=RS_SECRET)
        for mode in ("jwt", "introspection") if not only else ("jwt",):
            port = free_port()
            base = f"http://127.0.0.1:{port}"
            env = platform_env(dsn, REDIS, port, mode, tmp / mode)
            process = start(server_command(server, port), env, f"{base}/readyz", tmp / f"{mode}.log")
            try:
                idle = rss_mb(process)
                reg, tokens = await owner_tokens(base, "openid courses:read")
                token_env = {"ACCESS_TOKEN": tokens["access_token"]}
                courses = f"{base}/api/v1/courses?limit=20"
                if only:  # a short comparison of servers
                    measure("discovery: /.well-known/oauth-authorization-server",
                            f"{base}/.well-known/oauth-authorization-server")
                    measure("resource read, bearer token (JWT mode)", f"{courses}&published=true",
                            script="bearer.lua", env=token_env)
                elif mode == "jwt":
                    measure("discovery: /.well-known/oauth-authorization-server",
                            f"{base}/.well-known/oauth-authorization-server")
                    measure("JWKS", f"{base}/api/oauth/jwks")
                    school = _claims(tokens["access_token"])["school_id"]
                    anon = measure("resource read, anonymous (same query)", f"{courses}&published=true&school={school}",
                                   script="bearer.lua", env={"ACCESS_TOKEN": ""})
                    authed = measure("resource read, bearer token (JWT mode)", f"{courses}&published=true",
                                     script="bearer.lua", env=token_env)
                    notes.append(f"Token check cost in JWT mode: {100 * (1 - authed['rps'] / anon['rps']):.1f}% "
                                 "of an anonymous read's throughput.")
                    per_run = seconds * 700  # more than the token endpoint answers in one run
                    codes, refreshes = await mint(dsn, reg, base, per_run * repeats)
                    for n in range(repeats):
                        part = slice(n * per_run, (n + 1) * per_run)
                        (tmp / f"codes-{n}.txt").write_text("\n".join(codes[part]))
                        (tmp / f"refresh-{n}.txt").write_text("\n".join(refreshes[part]))
                    measure("token endpoint: authorization_code (pre-minted codes)", f"{base}/api/oauth/token",
                            script="bodies.lua", env={"BODIES_FILE": str(tmp / "codes-{n}.txt")})
                    measure("token endpoint: refresh_token (pre-minted tokens)", f"{base}/api/oauth/token",
                            script="bodies.lua", env={"BODIES_FILE": str(tmp / "refresh-{n}.txt")})
                    rs = (await httpx.AsyncClient().post(f"{base}/api/oauth/register", json={
                        "redirect_uris": [CALLBACK], "token_endpoint_auth_method": "client_secret_post"})).json()
                    (tmp / "introspect.txt").write_text(urlencode({
                        "token": tokens["access_token"], "client_id": rs["client_id"],
                        "client_secret": rs["client_secret"]}))
                    measure("introspection", f"{base}/api/oauth/introspect", script="bodies.lua",
                            env={"BODIES_FILE": str(tmp / "introspect.txt")})
                    latency = await flow_latency(base, 5)
                    notes.append(f"Full interactive flow (register, authorize, sign in, consent, token, first API "
                                 f"call), median of 5: {latency * 1000:.0f} ms.")
                else:
                    authed = measure("resource read, bearer token (introspection mode, warm)",
                                     f"{courses}&published=true", script="bearer.lua", env=token_env)
                    anon_rps = next(r for n, r in rows if n.startswith("resource read, anonymous"))["rps"]
                    notes.append(f"Token check cost in introspection mode: {100 * (1 - authed['rps'] / anon_rps):.1f}% "
                                 "of an anonymous read's throughput.")
                loaded = rss_mb(process)
                notes.append(f"RSS of the all-in-one process ({mode} mode): {idle:.0f} MiB idle, "
                             f"{loaded:.0f} MiB after load.")
            finally:
                process.terminate()
                process.wait(20)
    ceiling_rps = rows[0][1]["rps"]
    lines = [
        "# Benchmark results", "",
        f"One run of `make bench` on this machine ({CORES} cores; server pinned to core 0, wrk to core 1; "
        f"PostgreSQL and Redis unpinned), wrk -t1 -c32, {seconds} s per scenario, median of {repeats}. The "
        f"all-in-one process (the three apps behind the path router) on {server}, one worker, LOG_LEVEL=info "
        "(a JSON line per request, as in production), against real PostgreSQL and Redis.", "",
        "| scenario | req/s | ratio to ceiling | p50 ms | p99 ms | non-2xx |", "|---|---:|---:|---:|---:|---:|",
    ]
    for label, r in rows:
        lines.append(f"| {label} | {r['rps']:.0f} | {r['rps'] / ceiling_rps:.2f} | {r['p50']:.2f} | "
                     f"{r['p99']:.2f} | {100 * r['errors']:.1f}% |")
    lines += ["", *[f"- {n}" for n in notes], ""]
    if not only:
        lines += targets(rows, ceiling_rps)
    return "\n".join(lines)


async def split_services(seconds: int) -> list[str]:
    """The production topology (tests/split.py: each service started with its `serve`
    command, granian, behind the nginx gateway): each service's RSS idle, then after load
    through the gateway on its own paths."""
    from tests.deployment import find_tool
    from tests.split import running_topology

    nginx = find_tool("nginx")
    if nginx is None:
        return ["- RSS per service: not measured (nginx is not installed).", ""]
    rates = {"RATE_TOKEN_PER_IP": "1000000/60", "RATE_TOKEN_PER_CLIENT": "1000000/60", "LOG_LEVEL": "info"}
    tmp = Path(tempfile.mkdtemp(prefix="cs-bench-split-"))
    async with scratch_database("bench_split") as dsn:
        with running_topology(dsn, REDIS, KEK, tmp, nginx, overrides={"authz": rates}) as topology:
            idle = {svc: rss_mb(s.process) for svc, s in topology.services.items()}
            base = topology.base_url
            reg, tokens = await owner_tokens(base, "openid courses:read", topology.email, topology.password)
            _, refreshes = await mint(dsn, reg, base, seconds * 1500, email=topology.email)
            (tmp / "refresh.txt").write_text("\n".join(refreshes))
            load = [
                ("discovery", wrk(f"{base}/.well-known/oauth-authorization-server", seconds)),
                ("resource-api", wrk(f"{base}/api/v1/courses?limit=20&published=true", seconds, script="bearer.lua",
                                     env={"ACCESS_TOKEN": tokens["access_token"]})),
                ("authz", wrk(f"{base}/api/oauth/token", seconds, script="bodies.lua",
                              env={"BODIES_FILE": str(tmp / "refresh.txt")})),
            ]
            loaded = {svc: rss_mb(s.process) for svc, s in topology.services.items()}
    paths = {"discovery": "AS metadata", "resource-api": "course list with a bearer token",
             "authz": "refresh grant"}
    out = ["## Each service on its own (the production topology)", "",
           "Three `serve` processes (granian, one worker each) behind the nginx gateway of "
           "deploy/nginx/nginx.conf, loaded through the gateway on one path each "
           f"({seconds} s, wrk -c32, unpinned: gateway, services, PostgreSQL and Redis share the cores).", "",
           "RSS is that of the service's granian process and its worker together.", "",
           "| service | loaded with | req/s | p99 ms | RSS idle MiB | RSS after load MiB |",
           "|---|---|---:|---:|---:|---:|"]
    for svc, result in load:
        out.append(f"| {svc} | {paths[svc]} | {result['rps']:.0f} | {result['p99']:.1f} | {idle[svc]:.0f} | "
                   f"{loaded[svc]:.0f} |")
    return [*out, ""]


def targets(rows: list[tuple[str, dict[str, float]]], ceiling_rps: float) -> list[str]:
    """The benchmark issue's targets, checked against this run's figures."""
    rps = {label: r["rps"] for label, r in rows}

    def find(prefix: str) -> float:
        return next(v for k, v in rps.items() if k.startswith(prefix))

    anon = find("resource read, anonymous")
    checks = [
        ("token check at most 15% of an anonymous read (JWT mode)",
         1 - find("resource read, bearer token (JWT") / anon, lambda v: v <= 0.15, "{:.1%}"),
        ("token check at most 25% of an anonymous read (introspection mode, warm)",
         1 - find("resource read, bearer token (introspection") / anon, lambda v: v <= 0.25, "{:.1%}"),
        ("discovery document at 90% or more of the ceiling", find("discovery") / ceiling_rps, lambda v: v >= 0.9,
         "{:.0%}"),
        ("JWKS at 90% or more of the ceiling", find("JWKS") / ceiling_rps, lambda v: v >= 0.9, "{:.0%}"),
        ("refresh grant at 10% or more of the ceiling", find("token endpoint: refresh") / ceiling_rps,
         lambda v: v >= 0.10, "{:.1%}"),
    ]
    out = ["## Against the targets of the benchmark issue", "", "| target | measured | met |", "|---|---:|---|"]
    out += [f"| {name} | {fmt.format(value)} | {'yes' if ok(value) else 'no'} |" for name, value, ok, fmt in checks]
    return [*out, ""]


def layers() -> str:
    """bench/layers.py in a process of its own (it wraps the database drivers to count)."""
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "layers.py")], capture_output=True, text=True,
                          timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"bench/layers.py failed:\n{done.stderr[-3000:]}")
    return done.stdout


# Text after this line in RESULTS.md is written by hand (the analysis of the figures)
# and kept when `make bench` rewrites the figures above it.
ANALYSIS_MARK = "<!-- analysis: written by hand, kept by bench/run.py -->"


def write_report(path: Path, report: str) -> None:
    kept = ""
    if path.exists() and ANALYSIS_MARK in path.read_text():
        kept = path.read_text().split(ANALYSIS_MARK, 1)[1]
    path.write_text(f"{report.rstrip()}\n\n{ANALYSIS_MARK}{kept or chr(10)}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(ROOT / "bench" / "RESULTS.md"))
    parser.add_argument("--server", choices=["uvicorn", "granian"], default="granian",
                        help="granian is what `serve` runs in production")
    parser.add_argument("--compare", action="store_true", help="only the scenarios that compare servers")
    args = parser.parse_args()
    if not shutil.which("wrk"):
        sys.exit("wrk is not installed (Debian: apt-get install wrk)")
    report = asyncio.run(bench(args.seconds, args.repeats, args.server, "compare" if args.compare else ""))
    if not args.compare:
        report += "\n" + "\n".join(asyncio.run(split_services(args.seconds)))
        report += "\n## Where the time goes\n\n" + layers()
    write_report(Path(args.out), report)
    print(report)


if __name__ == "__main__":
    main()
