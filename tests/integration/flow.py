"""Drives the authorization-code flow through the real endpoints and pages, as a
client and a person in a browser would."""

from __future__ import annotations

import functools
import re
import secrets
import uuid
from typing import Any
from urllib.parse import urlencode

import asyncpg
import httpx

from courseschool.authz.passwords import hash_password, hasher
from courseschool.authz.storage.users import PgUserStore

from ..conftest import PASSWORD_COST
from ..support.oauth_client import pkce_pair, query_of

BASE_URL = "http://127.0.0.1:8000"
REDIRECT_URI = "http://127.0.0.1:53682/callback"
PASSWORD = "correct horse battery staple"
_CSRF = re.compile(r'name="csrf" value="([^"]+)"')


@functools.cache
def password_hash() -> str:
    """PASSWORD hashed once per process (argon2id at the parameters the tests' apps are
    set to, tests/conftest.PASSWORD_COST): every person a test makes stores this same
    genuine hash, and signing in still verifies it the way the server always does."""
    return hash_password(PASSWORD, hasher(**{k.removeprefix("password_"): v for k, v in PASSWORD_COST.items()}))


def csrf_of(html: str) -> str:
    """The CSRF token a page's forms carry ("" when it has none)."""
    match = _CSRF.search(html)
    return match.group(1) if match else ""


class Flow:
    def __init__(self, client: httpx.AsyncClient, pool: asyncpg.Pool, redis: Any) -> None:
        self.client = client
        self.pool = pool
        self.redis = redis
        self.users = PgUserStore(pool)

    async def school(self, slug: str = "acme") -> str:
        return await self.users.upsert_school(slug=slug, name=f"{slug.title()} School")

    async def user(self, role: str = "owner", *, school: str | None = None, email: str | None = None) -> dict[str, str]:
        school_id = school or await self.school()
        email = email or f"{role}-{uuid.uuid4().hex[:8]}@example.test"
        user = await self.users.create(
            school_id=school_id,
            email=email,
            name=f"A {role.title()}",
            preferred_username=email.split("@")[0],
            role=role,
            password_hash=password_hash(),
        )
        return {"id": user.id, "email": email, "password": PASSWORD, "school_id": school_id}

    async def register(self, **metadata: Any) -> dict[str, Any]:
        body = {"client_name": "Test CLI", "redirect_uris": [REDIRECT_URI], **metadata}
        response = await self.client.post("/api/oauth/register", json=body)
        assert response.status_code == 201, response.text
        return response.json()

    async def integration(self, name: str = "Resource server", **options: Any) -> dict[str, Any]:
        """A confidential client an administrator made (the admin use case), shaped like a
        registration response."""
        from courseschool.authz.endpoints.admin import AdminService

        admin = AdminService(self.client.app.state.authz.administration)  # type: ignore[attr-defined]
        return await admin.create_integration(name=name, redirect_uris=[REDIRECT_URI], **options)

    def authorize_params(self, reg: dict[str, Any], challenge: str, **extra: str) -> dict[str, str]:
        params = {
            "response_type": "code",
            "client_id": reg["client_id"],
            "redirect_uri": reg["redirect_uris"][0],
            "scope": "openid profile email courses:read",
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": secrets.token_urlsafe(8),
        }
        params.update(extra)
        return params

    async def start(self, params: dict[str, str]) -> httpx.Response:
        return await self.client.get("/oauth/authorize?" + urlencode(params))

    async def page(self, location: str) -> tuple[httpx.Response, str]:
        response = await self.client.get(location)
        return response, csrf_of(response.text)

    async def login(self, interaction: str, user: dict[str, str], *, password: str | None = None) -> httpx.Response:
        _, csrf = await self.page(interaction)
        return await self.client.post(
            f"{interaction}/login",
            data={"csrf": csrf, "email": user["email"], "password": password or user["password"]},
        )

    async def consent(self, interaction: str, decision: str = "approve") -> httpx.Response:
        _, csrf = await self.page(interaction)
        return await self.client.post(f"{interaction}/consent", data={"csrf": csrf, "decision": decision})

    async def authorize(
        self, reg: dict[str, Any], user: dict[str, str] | None, *, decision: str = "approve", **extra: str
    ) -> tuple[dict[str, str], str, dict[str, str]]:
        """Run authorize -> login (when needed) -> consent; return (callback query, verifier, params)."""
        verifier, challenge = pkce_pair()
        params = self.authorize_params(reg, challenge, **extra)
        start = await self.start(params)
        assert start.status_code == 303, start.text
        interaction = start.headers["location"]
        assert interaction.startswith("/oauth/interaction/"), interaction
        page, _ = await self.page(interaction)
        if 'action="' + interaction + '/login"' in page.text:
            assert user is not None
            done = await self.login(interaction, user)
            assert done.status_code == 303
        final = await self.consent(interaction, decision)
        assert final.status_code == 303, final.text
        return query_of(final.headers["location"]), verifier, params

    async def token(self, **form: str) -> httpx.Response:
        return await self.client.post("/api/oauth/token", data=form)

    async def exchange(self, reg: dict[str, Any], code: str, verifier: str, /, **extra: str) -> httpx.Response:
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": reg["redirect_uris"][0],
            "client_id": reg["client_id"],
            "code_verifier": verifier,
            **extra,
        }
        if "client_secret" in reg and "client_secret" not in extra:
            form["client_secret"] = reg["client_secret"]
        return await self.token(**form)

    async def tokens(
        self, reg: dict[str, Any] | None = None, user: dict[str, str] | None = None, **extra: str
    ) -> dict[str, Any]:
        reg = reg or await self.register()
        user = user or await self.user()
        callback, verifier, _ = await self.authorize(reg, user, **extra)
        response = await self.exchange(reg, callback["code"], verifier)
        assert response.status_code == 200, response.text
        return response.json()

    async def redis_keys(self) -> int:
        """Pending interactions stored (none may be left by a refused request)."""
        return len([k async for k in self.redis.scan_iter(match="authz:interaction:*")])

    async def count(self, table: str) -> int:
        return await self.pool.fetchval(f"SELECT count(*) FROM {table}")


class Lifecycle:
    """Calls of a client after its first tokens: refresh, revoke, introspect."""

    def __init__(self, flow: Flow) -> None:
        self.flow = flow

    async def refresh(self, reg: dict[str, Any], refresh_token: str, /, **extra: str) -> httpx.Response:
        form = {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": reg["client_id"], **extra}
        if "client_secret" in reg and "client_secret" not in extra:
            form["client_secret"] = reg["client_secret"]
        return await self.flow.token(**form)

    async def revoke(self, reg: dict[str, Any], token: str, /, **extra: str) -> httpx.Response:
        form = {"token": token, "client_id": reg["client_id"], **extra}
        if "client_secret" in reg and "client_secret" not in extra:
            form["client_secret"] = reg["client_secret"]
        return await self.flow.client.post("/api/oauth/revoke", data=form)

    async def introspect(self, rs: dict[str, Any], token: str) -> dict[str, Any]:
        response = await self.flow.client.post(
            "/api/oauth/introspect",
            data={"token": token, "client_id": rs["client_id"], "client_secret": rs["client_secret"]},
        )
        assert response.status_code == 200, response.text
        assert response.headers["cache-control"] == "no-store"
        return response.json()

    async def userinfo_status(self, access_token: str) -> int:
        response = await self.flow.client.get(
            "/api/oauth/userinfo", headers={"Authorization": f"Bearer {access_token}"}
        )
        return response.status_code
