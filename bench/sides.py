"""The servers as the side-by-side scenarios see them (bench/sidebyside.py: Side): the
platform, with its PostgreSQL backends and its Redis; the peers (bench/peer.py), in memory
and on Redis. And the run's side-by-side section: the platform against both peers, whose
medians are the main table's token-path rows."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote, urlencode, urlsplit

from bench.cpu import Sample, backends_cpu_seconds, cpu_seconds, redis_pid, tree_sample
from bench.harness import rss_mb
from bench.inputs import mint_public, register_public
from bench.peer import PUBLIC_CLIENT as PEER_PUBLIC_CLIENT
from bench.peer import Peer, installed_versions, node_version
from bench.peer import ensure_installed as ensure_peer
from bench.peer import installed_version as installed_peer_version
from bench.results import Run
from bench.sidebyside import SCENARIOS, Side, side_by_side
from bench.sidebyside_report import ceiling, report
from bench.stack import RS_CLIENT_ID, RS_SECRET, redis_url


def redis_cpu(url: str) -> Callable[[], Sample]:
    """The CPU time of the Redis server at `url` (nothing when it is not on this machine)."""
    pid = redis_pid(url)
    return (lambda: tree_sample(pid)) if pid else dict


async def platform_side(process: subprocess.Popen[bytes], base: str, dsn: str, access_token: str) -> Side:
    """The platform as the side-by-side scenarios see it."""
    client_id = await register_public(base)
    return Side(
        name="platform",
        base=base,
        discovery_path="/.well-known/oauth-authorization-server",
        jwks_path="/api/oauth/jwks",
        token_path="/api/oauth/token",
        introspection_path="/api/oauth/introspect",
        client_id=quote(client_id, safe=""),
        mint_codes=lambda n: mint_public(dsn, client_id, base, "code", n),
        mint_refresh=lambda n: mint_public(dsn, client_id, base, "refresh", n),
        # The resource server's own client, made by the operator (prepare), as the resource
        # API uses it in introspection mode.
        introspection_body=urlencode({"token": access_token, "client_id": RS_CLIENT_ID, "client_secret": RS_SECRET}),
        rss=lambda: rss_mb(process),
        cpu=lambda: cpu_seconds(process),
        db_cpu=lambda: backends_cpu_seconds(urlsplit(dsn).path.lstrip("/")),
        redis_cpu=redis_cpu(redis_url()),
    )


def peer_side(peer: Peer) -> Side:
    return Side(
        name="peer-redis" if peer.redis_url else "peer",
        base=peer.base,
        discovery_path="/.well-known/oauth-authorization-server",
        jwks_path="/jwks",
        token_path="/token",
        introspection_path="/token/introspection",
        client_id=PEER_PUBLIC_CLIENT,
        mint_codes=lambda n: peer.mint("code", n),
        mint_refresh=lambda n: peer.mint("refresh", n),
        introspection_body="",
        rss=peer.rss,
        cpu=lambda: cpu_seconds(peer.process),
        redis_cpu=redis_cpu(peer.redis_url) if peer.redis_url else dict,
    )


async def compare_with_peer(run: Run, ours: Side, tmp: Path, seconds: int, rounds: int) -> None:
    """The side-by-side section; the platform's token-endpoint and introspection rows of
    the main table are its medians."""
    missing = ensure_peer()
    if missing:
        sys.exit(f"the peer server cannot run: {missing}")
    peers: list[Peer] = []
    try:
        # The shipped in-memory adapter, and the durable peer on the Redis the platform uses.
        peers.append(Peer(tmp / "peer.log"))
        peers.append(Peer(tmp / "peer-redis.log", redis_url=redis_url()))
        theirs = [peer_side(peer) for peer in peers]
        for side, peer in zip(theirs, peers, strict=True):
            side.introspection_body = await peer.introspection_body()
        result = await side_by_side(
            (ours, *theirs), tmp, seconds=seconds, rounds=rounds, log=lambda line: print(line, flush=True)
        )
    finally:
        for peer in peers:
            peer.stop()
    for scenario, label in (
        ("code", "token endpoint: authorization_code (public client, each pre-minted code once)"),
        ("refresh", f"token endpoint: refresh_token with rotation (public client, {result.lineages} lineages)"),
        ("introspection", "introspection (active JWT, the resource server's client)"),
    ):
        run.rows.append((label, result.median(scenario, "platform")))
    run.side_by_side = result
    provider = f"oidc-provider {installed_peer_version()} on Node {node_version().lstrip('v')}"
    labels = {
        "peer": f"{provider}, its shipped in-memory adapter (every model in the Node process)",
        "peer-redis": f"{provider}, the durable peer: our Redis adapter (bench/peer/redis_adapter.mjs, ioredis "
        f"{installed_versions()['ioredis']}; every model as JSON with its TTL, codes and refresh tokens consumed in "
        "place, grant ids indexed for revokeByGrantId) on the same Redis server as the platform's",
    }
    run.sections.append(report(result, "granian, one worker, LOG_LEVEL=info", labels))
    run.sections.append(ceiling(result))
    for scenario in SCENARIOS:
        if not result.valid(scenario):
            run.notes.append(f"INVALID: the {scenario} scenario had failed requests (see the side-by-side section).")
