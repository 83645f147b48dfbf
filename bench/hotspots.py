"""Where the token path's time goes on the production server: the all-in-one process on
granian (one worker, core 0, LOG_LEVEL=info) under wrk load (core 1) on one scenario
while py-spy samples the worker, then the functions that hold the most samples,
inclusive and self, printed as a table. The first step of any work on speed: the
bench says how fast, this says why.

Usage: python -m bench.hotspots [introspection|refresh|code|read|anonymous] [--seconds 10]
[--in-process | --breakdown]
(needs py-spy, `pip install py-spy`, and the PostgreSQL and Redis of bench/stack.py).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import importlib
import inspect
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.harness import LOAD_CORE, pinned
from bench.scenario import asgi_caller, request_bodies, scenario_server
from bench.stack import in_process_settings

ROOT = Path(__file__).resolve().parent.parent


def _worker(pid: int) -> int:
    """granian's worker: the server process's child (the process itself with no child)."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return int(children[0]) if children else pid


def _top(collapsed: Path, limit: int) -> list[str]:
    """Inclusive and self sample shares per function from py-spy's collapsed stacks."""
    inclusive: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    total = 0
    for line in collapsed.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        n = int(count)
        total += n
        frames = stack.split(";")
        for frame in set(frames):
            inclusive[frame] += n
        own[frames[-1]] += n
    out = [f"{total} samples", "", "| inclusive % | self % | function |", "|---:|---:|---|"]
    for frame, n in inclusive.most_common(limit):
        out.append(f"| {100 * n / total:.1f} | {100 * own[frame] / total:.1f} | {frame} |")
    out += ["", "Most self time:", "", "| self % | function |", "|---:|---|"]
    for frame, n in own.most_common(limit):
        out.append(f"| {100 * n / total:.1f} | {frame} |")
    return out


# The steps of a token request timed by --breakdown: (module, attribute, label). Each is
# patched where the code looks it up, so the wrapper is what runs.
STEPS = (
    ("courseschool.authz.web.http", "form_fields", "form parsing"),
    ("courseschool.common.ratelimit", "RateLimiter.hit", "rate limits (leases)"),
    ("courseschool.authz.endpoints.token", "authenticate_client", "client lookup and authentication"),
    ("courseschool.authz.storage.keys", "KeyRing.verify", "access token verification (remembered)"),
    ("courseschool.authz.storage.grants", "PgGrantStore.access_token_holder", "PostgreSQL: grant, user, revocation"),
    (
        "courseschool.authz.storage.grants",
        "PgGrantStore.get_refresh_token",
        "PostgreSQL: refresh token with grant, user",
    ),
    ("courseschool.authz.storage.grants", "PgGrantStore.rotate_refresh_token", "PostgreSQL: rotation"),
    ("courseschool.authz.storage.codes", "PgCodeStore.get", "PostgreSQL: code with grant, user"),
    ("courseschool.authz.storage.grants", "PgGrantStore.redeem_code", "PostgreSQL: redemption"),
    ("courseschool.authz.storage.keys", "KeyRing.sign_access_token", "access token signature (ES256)"),
    ("courseschool.authz.storage.keys", "KeyRing.sign_id_token", "ID token signature (RS256)"),
    ("courseschool.authz.protocol.retry_response", "seal", "sealing the answer for a retry"),
    ("courseschool.common.web", "request_line", "the request's log line"),
    ("courseschool.authz.web.token", "proof_target", "DPoP: the request's proof target"),
    ("courseschool.authz.endpoints.token", "proof_key", "DPoP: proof check (none sent)"),
    ("courseschool.authz.protocol.tokens", "access_token_claims", "claims of the tokens"),
    ("courseschool.authz.protocol.tokens", "id_token_claims", "claims of the tokens"),
    ("courseschool.authz.protocol.pkce", "verify", "PKCE verification"),
)


def _timed(steps: collections.Counter[str], label: str, fn: Any) -> Any:
    """`fn` counting this thread's CPU time under `label` (an await's wait is no CPU)."""
    if inspect.iscoroutinefunction(fn):

        async def timed_async(*args: Any, **kwargs: Any) -> Any:
            started = time.thread_time_ns()
            try:
                return await fn(*args, **kwargs)
            finally:
                steps[label] += time.thread_time_ns() - started

        return timed_async

    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.thread_time_ns()
        try:
            return fn(*args, **kwargs)
        finally:
            steps[label] += time.thread_time_ns() - started

    return timed


def _patch_steps(steps: collections.Counter[str]) -> None:
    for module_name, attribute, label in STEPS:
        owner: Any = importlib.import_module(module_name)
        *path, name = attribute.split(".")
        for part in path:
            owner = getattr(owner, part)
        setattr(owner, name, _timed(steps, label, getattr(owner, name)))


async def _in_process(
    dsn: str, base: str, url: str, wrk_env: dict[str, str], scenario: str, breakdown: bool = False
) -> str:
    """The same requests through the ASGI app in this process, one at a time, under
    cProfile (exact call counts and our own functions' cost, without the server) or,
    with `breakdown`, with the CPU time of each step of a token request (STEPS)."""
    import cProfile
    import io
    import pstats

    from courseschool.common.asgi import AppLifespan
    from courseschool.platform.app import build

    app = build(in_process_settings(dsn, base))
    bodies = request_bodies(scenario, wrk_env)
    call, statuses = asgi_caller(app, scenario, base, url, wrk_env)

    if breakdown:
        steps: collections.Counter[str] = collections.Counter()
        _patch_steps(steps)
        async with AppLifespan(app):
            for body in bodies[:50]:
                await call(body)
            steps.clear()
            started = time.thread_time_ns()
            for body in bodies[50:]:
                await call(body)
            total = time.thread_time_ns() - started
        n = len(bodies) - 50
        lines = [
            f"{scenario}: {n} requests in-process, one at a time, on uvloop; CPU µs per request of this thread",
            "",
            "| step | µs | share |",
            "|---|---:|---:|",
        ]
        for label, ns in steps.most_common():
            lines.append(f"| {label} | {ns / n / 1000:.0f} | {ns / total:.0%} |")
        rest = total - sum(steps.values())
        lines.append(
            f"| the rest: routing, middleware, Litestar's handler and response, loop | {rest / n / 1000:.0f} | "
            f"{rest / total:.0%} |"
        )
        lines.append(f"| whole request | {total / n / 1000:.0f} | 100% |")
        return f"statuses {dict(statuses)}\n" + "\n".join(lines)
    async with AppLifespan(app):
        for body in bodies[:50]:
            await call(body)
        profiler = cProfile.Profile()
        profiler.enable()
        for body in bodies[50:]:
            await call(body)
        profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("cumulative").print_stats(45)
    stats.sort_stats("tottime").print_stats(30)
    return f"statuses {dict(statuses)}\n" + out.getvalue()


async def profile(
    scenario: str, seconds: int, limit: int, keep: Path | None, in_process: bool = False, breakdown: bool = False
) -> str:
    async with scenario_server(scenario, codes=1500 * seconds) as s:
        if in_process or breakdown:
            return await _in_process(s.dsn, s.base, s.url, s.wrk_env, scenario, breakdown)
        collapsed = Path(tempfile.mkdtemp(prefix="cs-profile-")) / "stacks.txt"
        spy = subprocess.Popen(
            [
                str(Path(sys.executable).with_name("py-spy")),
                "record",
                "--pid",
                str(_worker(s.process.pid)),
                "--duration",
                str(seconds),
                "--rate",
                "250",
                "--format",
                "raw",
                "--output",
                str(collapsed),
                "--nonblocking",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        cmd = ["wrk", "-t1", "-c32", f"-d{seconds}s", "-s", str(ROOT / "bench" / "lua" / s.script), s.url]
        done = subprocess.run(
            pinned(cmd, LOAD_CORE), capture_output=True, text=True, env={**os.environ, **s.wrk_env}, check=False
        )
        spy.wait(seconds + 30)
        print(done.stdout)
        if keep is not None:
            shutil.copy(collapsed, keep)
        return "\n".join(_top(collapsed, limit))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", choices=["introspection", "refresh", "code", "read", "anonymous"])
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--limit", type=int, default=40)
    parser.add_argument("--in-process", action="store_true", help="cProfile the ASGI app in this process instead")
    parser.add_argument("--breakdown", action="store_true", help="CPU time per step of a request, in-process")
    parser.add_argument("--keep", type=Path, help="also write py-spy's collapsed stacks here (for a flame graph)")
    args = parser.parse_args()
    if args.breakdown:  # production's loop and log lines (JSON, to /dev/null here)
        import uvloop

        from courseschool.common.logging import configure_logging

        sys.stderr = open(os.devnull, "w")  # noqa: SIM115
        configure_logging("info", "json")
        sys.stderr = sys.__stderr__
        print(uvloop.run(profile(args.scenario, args.seconds, args.limit, args.keep, breakdown=True)))
        return
    print(asyncio.run(profile(args.scenario, args.seconds, args.limit, args.keep, args.in_process)))


if __name__ == "__main__":
    main()
