"""The peer server of the side-by-side figures: bench/peer/server.mjs on oidc-provider,
the version pinned in bench/package.json and bench/package-lock.json, installed by the
bench itself (`npm ci` in bench/ when node_modules is missing or holds another version).
Two stores: oidc-provider's shipped in-memory adapter, and the durable peer, our Redis
adapter (bench/peer/redis_adapter.mjs) on a Redis server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from urllib.parse import urlencode

import httpx

from bench.harness import ROOT, rss_mb, start, stop
from courseschool.common.secrets import new_token
from tests.support.net import free_port

BENCH = ROOT / "bench"
PUBLIC_CLIENT, RS_CLIENT = "bench-public", "bench-rs"


def pinned_versions() -> dict[str, str]:
    return dict(json.loads((BENCH / "package.json").read_text())["dependencies"])


def installed_versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in pinned_versions():
        manifest = BENCH / "node_modules" / name / "package.json"
        out[name] = json.loads(manifest.read_text())["version"] if manifest.exists() else None
    return out


def pinned_version() -> str:
    return pinned_versions()["oidc-provider"]


def installed_version() -> str | None:
    return installed_versions()["oidc-provider"]


def installed() -> bool:
    """Whether bench/node_modules holds every pinned package at its pinned version."""
    return installed_versions() == pinned_versions()


def node_version() -> str:
    return subprocess.run(["node", "--version"], capture_output=True, text=True, check=True).stdout.strip()


def ensure_installed() -> str | None:
    """None when the peer can run, else why not."""
    if not shutil.which("node") or not shutil.which("npm"):
        return "Node.js and npm are not installed (Debian: apt-get install nodejs npm)"
    if not installed():
        done = subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund"], cwd=BENCH, capture_output=True, text=True, timeout=900
        )
        if done.returncode != 0:
            return f"npm ci failed in bench/: {done.stderr.strip()[-500:]}"
    if not installed():
        return f"bench/node_modules holds {installed_versions()}, not {pinned_versions()}"
    return None


class Peer:
    """One peer process (pinned to the server core unless `core` says otherwise). With
    `redis_url` it is the durable peer: its models in that Redis, under a key prefix of its
    own that stop() deletes (only those keys: the database may be shared)."""

    def __init__(self, log: Path, *, core: int | None = 0, redis_url: str | None = None) -> None:
        self.port = free_port()
        self.redis_url = redis_url
        self.prefix = f"bench-peer:{new_token()[:12]}:"
        self.base = f"http://127.0.0.1:{self.port}"
        self.rs_secret = new_token()
        self._mint_token = new_token()
        env = {
            **os.environ,
            "NODE_ENV": "production",
            "PEER_PORT": str(self.port),
            "PEER_RS_SECRET": self.rs_secret,
            "BENCH_MINT_TOKEN": self._mint_token,
            "PEER_STORE": "redis" if redis_url else "memory",
            **({"PEER_REDIS_URL": redis_url, "PEER_REDIS_PREFIX": self.prefix} if redis_url else {}),
        }
        self.process = start(
            ["node", str(BENCH / "peer" / "server.mjs")],
            env,
            f"{self.base}/.well-known/oauth-authorization-server",
            log,
            core=core,
            cwd=BENCH,
        )

    def stop(self) -> None:
        stop(self.process)
        if self.redis_url:
            self.forget()

    def forget(self) -> int:
        """Delete this peer's keys from its Redis (SCAN by its prefix); how many."""
        import redis

        assert self.redis_url, "only the durable peer keeps keys in Redis"
        client = redis.Redis.from_url(self.redis_url)
        deleted = 0
        try:
            batch: list[bytes] = []
            for key in client.scan_iter(match=f"{self.prefix}*", count=1000):
                batch.append(key)
                if len(batch) >= 1000:
                    deleted += client.unlink(*batch)
                    batch = []
            if batch:
                deleted += client.unlink(*batch)
        finally:
            client.close()
        return deleted

    @property
    def store(self) -> str:
        return "redis" if self.redis_url else "memory"

    def rss(self) -> float:
        return rss_mb(self.process)

    async def mint(self, kind: str, count: int) -> list[str]:
        """`code`: token-endpoint form bodies; `refresh`: refresh tokens; each its own grant."""
        async with httpx.AsyncClient(timeout=600) as http:
            answer = await http.post(
                f"{self.base}/__bench/mint",
                params={"kind": kind, "count": count},
                headers={"Authorization": f"Bearer {self._mint_token}"},
            )
            answer.raise_for_status()
        lines = answer.text.split()
        assert len(lines) == count, f"peer minted {len(lines)} of {count}"
        return lines

    async def introspection_body(self) -> str:
        """An active opaque access token (from a real code exchange, for the resource
        server that introspects) and the confidential client that asks about it."""
        (code,) = await self.mint("introspect-code", 1)
        async with httpx.AsyncClient(timeout=30) as http:
            tokens = (
                await http.post(
                    f"{self.base}/token", content=code, headers={"Content-Type": "application/x-www-form-urlencoded"}
                )
            ).json()
        return urlencode({"token": tokens["access_token"], "client_id": RS_CLIENT, "client_secret": self.rs_secret})
