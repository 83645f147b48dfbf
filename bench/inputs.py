"""What the scenarios send, made before they run: a confidential client and its tokens
through the real pages, single-use authorization codes and refresh tokens written through
our grant store (one bench user per grant), a public client, and the interactive flow's
latency."""

from __future__ import annotations

import asyncio
import base64
import statistics
import time
import uuid
from urllib.parse import urlencode

import asyncpg
import httpx

from bench.stack import EMAIL, PASSWORD
from courseschool.authz.protocol.models import Grant
from courseschool.authz.storage.grants import PgGrantStore
from courseschool.common.secrets import new_token
from tests.support.oauth_client import CALLBACK, code_flow, s256

GRANTS_PER_APP = 10  # the setting's default: the bench's grants are one per user, far below it


async def owner_tokens(base: str, scope: str, email: str = EMAIL, password: str = PASSWORD) -> tuple[dict, dict]:
    """A confidential client's registration and its first tokens, through the real pages."""
    return await code_flow(base, email, password, scope, token_endpoint_auth_method="client_secret_post")


_BENCH_USERS = """
INSERT INTO authz_users (id, school_id, email, email_canonical, email_verified, name, preferred_username, role,
    password_hash)
SELECT gen_random_uuid(), o.school_id, e, e, true, 'Bench user', 'bench', 'owner', o.password_hash
FROM authz_users o, (SELECT 'bench-' || $2 || '-' || g || '@example.test' AS e FROM generate_series(1, $3) g) AS n
WHERE o.email_canonical = $1
RETURNING id::text, school_id::text
"""


async def bench_users(pool: asyncpg.Pool, email: str, count: int) -> list[tuple[str, str]]:
    """`count` new owners of the bench owner's school, one per minted grant: a code exchange
    replaces the same user's earlier grants of the same client (one lineage per app install
    and user), so inputs that share a user would end each other."""
    rows = await pool.fetch(_BENCH_USERS, email, uuid.uuid4().hex[:12], count)
    return [(r["id"], r["school_id"]) for r in rows]


async def pending_grant(
    grants: PgGrantStore, client_id: str, user: tuple[str, str], base: str, code: str, challenge: str, now: int
) -> Grant:
    """An approved grant and its unredeemed code, as the consent step writes them."""
    user_id, school_id = user
    return await grants.create_with_code(
        client_id=client_id,
        user_id=user_id,
        school_id=school_id,
        scope="openid courses:read",
        resource=base,
        auth_time=now,
        code=code,
        redirect_uri=CALLBACK,
        code_challenge=challenge,
        nonce=None,
        code_expires_at=now + 3600,
        now=now,
        created_from="127.0.0.1",
    )


async def mint(dsn: str, reg: dict, base: str, count: int, email: str = EMAIL) -> tuple[list[str], list[str]]:
    """Pre-minted single-use authorization codes and refresh tokens, as form bodies."""
    pool = await asyncpg.create_pool(dsn, min_size=1, max_size=4)
    grants = PgGrantStore(pool)
    users = iter(await bench_users(pool, email, count * 2))
    verifier = "v" * 64
    challenge = s256(verifier)
    now = int(time.time())
    codes: list[str] = []
    refreshes: list[str] = []

    async def one() -> None:
        code, refresh = new_token(), new_token()
        grant = await pending_grant(grants, reg["client_id"], next(users), base, code, challenge, now)
        codes.append(
            urlencode(
                {
                    "grant_type": "authorization_code",
                    "code": code,
                    "redirect_uri": CALLBACK,
                    "code_verifier": verifier,
                    "client_id": reg["client_id"],
                    "client_secret": reg["client_secret"],
                }
            )
        )
        other_code = new_token()
        grant2 = await pending_grant(grants, reg["client_id"], next(users), base, other_code, challenge, now)
        await grants.redeem_code(
            code=other_code,
            refresh_token=refresh,
            scope=grant2.scope,
            resource=base,
            now=now,
            grants_per_app=GRANTS_PER_APP,
        )
        refreshes.append(
            urlencode(
                {
                    "grant_type": "refresh_token",
                    "refresh_token": refresh,
                    "client_id": reg["client_id"],
                    "client_secret": reg["client_secret"],
                }
            )
        )
        del grant

    for start_at in range(0, count, 4):
        await asyncio.gather(*(one() for _ in range(min(4, count - start_at))))
    await pool.close()
    return codes, refreshes


async def mint_public(dsn: str, client_id: str, base: str, kind: str, count: int, email: str = EMAIL) -> list[str]:
    """Single-use inputs for a public client, each on a grant of its own, written through
    our grant store: `code` gives token-endpoint form bodies (PKCE S256), `refresh` the
    refresh token a code redemption recorded (the head of a new lineage)."""
    verifier = "v" * 64
    challenge = s256(verifier)
    now = int(time.time())
    out: list[str] = []
    async with asyncpg.create_pool(dsn, min_size=1, max_size=8) as pool:
        grants = PgGrantStore(pool)
        users = iter(await bench_users(pool, email, count))

        async def one() -> str:
            code = new_token()
            grant = await pending_grant(grants, client_id, next(users), base, code, challenge, now)
            if kind == "code":
                return urlencode(
                    {
                        "grant_type": "authorization_code",
                        "code": code,
                        "redirect_uri": CALLBACK,
                        "code_verifier": verifier,
                        "client_id": client_id,
                    }
                )
            refresh = new_token()
            await grants.redeem_code(
                code=code,
                refresh_token=refresh,
                scope=grant.scope,
                resource=base,
                now=now,
                grants_per_app=GRANTS_PER_APP,
            )
            return refresh

        for start_at in range(0, count, 8):
            out += await asyncio.gather(*(one() for _ in range(min(8, count - start_at))))
    return out


async def flow_latency(base: str, runs: int) -> float:
    """Seconds from registration to the first API call, through the real pages."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        _reg, tokens = await owner_tokens(base, "courses:read")
        async with httpx.AsyncClient(timeout=30) as http:
            response = await http.get(
                f"{base}/api/v1/courses", headers={"Authorization": f"Bearer {tokens['access_token']}"}
            )
            assert response.status_code == 200
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def claims(token: str) -> dict:
    import msgspec

    payload = token.split(".")[1]
    return msgspec.json.decode(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


async def register_public(base: str) -> str:
    """A public client of the flows (dynamic registration, PKCE, no secret)."""
    async with httpx.AsyncClient(timeout=30) as http:
        reg = (
            await http.post(
                f"{base}/api/oauth/register",
                json={"client_name": "Bench CLI", "redirect_uris": [CALLBACK], "token_endpoint_auth_method": "none"},
            )
        ).json()
    return reg["client_id"]
