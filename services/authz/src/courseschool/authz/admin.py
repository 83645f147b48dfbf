"""Administration: the one service layer behind both the internal admin API and the
command line. Every action is an audit event; disabling a user or a client ends their
grants at once (recorded in Postgres, published to the resource servers)."""

from __future__ import annotations

import re
from typing import Any

from courseschool.common.errors import ConflictError, InvalidRequestError, NotFoundError
from courseschool.common.logging import audit
from courseschool.common.scopes import ROLES, format_scope, parse_scope, unknown_scopes
from courseschool.common.secrets import digest, new_token

from .passwords import hash_password
from .protocol.redirect_uris import is_https_redirect_uri, is_loopback_redirect_uri
from .protocol.registration import GRANT_TYPES
from .service import AuthzService
from .storage.admin import PgAdminStore

_SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


class AdminService:
    def __init__(self, authz: AuthzService, *, actor: str = "admin") -> None:
        self.authz = authz
        self.store = PgAdminStore(authz.pool)
        self.actor = actor

    def _audit(self, event: str, **fields: Any) -> None:
        audit(event, actor=self.actor, **fields)

    # -- schools and users ----------------------------------------------------------

    async def list_schools(self) -> list[dict[str, Any]]:
        return await self.store.schools()

    async def create_school(self, *, slug: str, name: str) -> dict[str, Any]:
        if not _SLUG.match(slug) or len(slug) > 60 or not 0 < len(name) <= 200:
            raise InvalidRequestError("slug must be lower-case words joined by '-', name 1 to 200 characters")
        if await self.store.school(slug):
            raise ConflictError(f"a school with the slug {slug} exists")
        school = await self.store.create_school(slug, name)
        self._audit("school_created", subject=school["id"], slug=slug)
        return school

    async def list_users(self, *, school: str | None = None) -> list[dict[str, Any]]:
        return await self.store.users(school)

    async def user(self, ref: str) -> dict[str, Any]:
        found = await self.store.user(ref)
        if found is None:
            raise NotFoundError(f"no user {ref}")
        return found

    async def create_user(
        self, *, school: str, email: str, name: str, role: str, password: str | None = None
    ) -> dict[str, Any]:
        found = await self.store.school(school)
        if found is None:
            raise NotFoundError(f"no school {school}")
        self._check_role(role)
        if not _EMAIL.match(email) or len(email) > 320 or not 0 < len(name) <= 200:
            raise InvalidRequestError("a valid email and a name of 1 to 200 characters are needed")
        if await self.store.user(email):
            raise ConflictError(f"a user with the email {email} exists")
        secret = password or new_token(12)
        _check_password(secret)
        user = await self.authz.users.create(
            school_id=found["id"], email=email, name=name, preferred_username=email.split("@")[0], role=role,
            password_hash=hash_password(secret),
        )
        self._audit("user_created", subject=user.id, role=role, school=found["slug"])
        out = await self.user(user.id)
        return {**out, "password": secret} if password is None else out

    async def set_role(self, ref: str, role: str) -> dict[str, Any]:
        self._check_role(role)
        user = await self.user(ref)
        await self.store.set_role(user["id"], role)
        self._audit("user_role_set", subject=user["id"], role=role)
        return await self.user(user["id"])

    async def disable_user(self, ref: str) -> dict[str, Any]:
        """The user can no longer sign in; their sessions and grants end now."""
        user = await self.user(ref)
        await self.store.set_disabled(user["id"], True)
        ended = await self._end_grants(await self.store.live_grants_of_user(user["id"]), "user_disabled")
        self._audit("user_disabled", subject=user["id"], grants_ended=ended)
        return {**await self.user(user["id"]), "grants_ended": ended}

    async def enable_user(self, ref: str) -> dict[str, Any]:
        user = await self.user(ref)
        await self.store.set_disabled(user["id"], False)
        self._audit("user_enabled", subject=user["id"])
        return await self.user(user["id"])

    async def reset_password(self, ref: str, password: str | None = None) -> dict[str, Any]:
        user = await self.user(ref)
        secret = password or new_token(12)
        _check_password(secret)
        await self.authz.users.set_password_hash(user["id"], hash_password(secret))
        self._audit("password_reset", subject=user["id"])
        return {"id": user["id"], "email": user["email"], **({"password": secret} if password is None else {})}

    # -- clients and integrations ---------------------------------------------------

    async def create_integration(
        self, *, name: str, redirect_uris: list[str], scope: str | None = None, refresh: bool = True
    ) -> dict[str, Any]:
        """A confidential client with fixed HTTPS callbacks: the "registered integration"
        the interface sends such clients to. Its secret is shown once."""
        if not redirect_uris or not all(is_https_redirect_uri(u) or is_loopback_redirect_uri(u) for u in redirect_uris):
            raise InvalidRequestError("redirect URIs must be https (or loopback) without fragment or user-info")
        if not 0 < len(name) <= 200:
            raise InvalidRequestError("name must be 1 to 200 characters")
        if scope is not None:
            names = parse_scope(scope)
            if not names or unknown_scopes(names):
                raise InvalidRequestError(f"unknown scope: {' '.join(unknown_scopes(names)) or '(empty)'}")
            scope = format_scope(names)
        secret = new_token()
        client = await self.authz.clients.create(
            client_id=new_token(18), client_name=name, redirect_uris=redirect_uris,
            token_endpoint_auth_method="client_secret_post",
            grant_types=list(GRANT_TYPES) if refresh else ["authorization_code"], response_types=["code"],
            application_type="web", scope=scope, id_token_signed_response_alg="RS256", secret_hash=digest(secret),
            is_integration=True, now=self.authz.clock.now(),
        )
        self._audit("integration_created", client_id=client.client_id)
        return {**await self.client(client.client_id), "client_secret": secret}

    async def list_clients(self) -> list[dict[str, Any]]:
        return await self.store.clients()

    async def client(self, client_id: str) -> dict[str, Any]:
        found = await self.store.client(client_id)
        if found is None:
            raise NotFoundError(f"no client {client_id}")
        return found

    async def disable_client(self, client_id: str) -> dict[str, Any]:
        await self.client(client_id)
        await self.store.disable_client(client_id)
        ended = await self._end_grants(await self.store.live_grants_of_client(client_id), "client_disabled")
        self._audit("client_disabled", client_id=client_id, grants_ended=ended)
        return {**await self.client(client_id), "grants_ended": ended}

    async def delete_client(self, client_id: str) -> dict[str, Any]:
        await self.client(client_id)
        ended = await self._end_grants(await self.store.live_grants_of_client(client_id), "client_deleted")
        await self.store.delete_client(client_id)
        self._audit("client_deleted", client_id=client_id, grants_ended=ended)
        return {"client_id": client_id, "deleted": True, "grants_ended": ended}

    async def delete_unused_clients(self) -> list[str]:
        return await self.authz.remove_unused_clients()

    # -- grants and keys ------------------------------------------------------------

    async def list_grants(
        self, *, user: str | None = None, client: str | None = None, include_revoked: bool = False
    ) -> list[dict[str, Any]]:
        return await self.store.grants(user=user, client=client, include_revoked=include_revoked)

    async def revoke_grant(self, grant_id: str) -> dict[str, Any]:
        grant = await self.authz.grants.get(grant_id)
        if grant is None:
            raise NotFoundError(f"no grant {grant_id}")
        await self.authz.revoker.revoke_grant(grant_id, reason="revoked_by_admin")
        self._audit("grant_revoked_by_admin", subject=grant.user_id, client_id=grant.client_id, grant_id=grant_id)
        return {"id": grant_id, "revoked": True}

    async def list_keys(self) -> list[dict[str, Any]]:
        return [
            {"kid": k.kid, "alg": k.alg, "state": k.state, "created_at": k.created_at,
             "activated_at": k.activated_at, "retired_at": k.retired_at}
            for k in await self.authz.keys.list()
        ]

    async def rotate_key(self, alg: str, *, immediate: bool = False) -> dict[str, Any]:
        if alg not in ("ES256", "RS256"):
            raise InvalidRequestError("alg must be ES256 or RS256")
        done = await self.authz.keys.rotate_now(alg, immediate=immediate)
        await self.authz.maintain_keys()
        self._audit("signing_key_rotation", alg=alg, immediate=immediate, steps=done)
        return {"alg": alg, "steps": done, "keys": await self.list_keys()}

    # -- helpers --------------------------------------------------------------------

    async def _end_grants(self, grant_ids: list[str], reason: str) -> int:
        for grant_id in grant_ids:
            await self.authz.revoker.revoke_grant(grant_id, reason=reason)
        return len(grant_ids)

    @staticmethod
    def _check_role(role: str) -> None:
        if role not in ROLES:
            raise InvalidRequestError(f"role must be one of {', '.join(ROLES)}")


def _check_password(password: str) -> None:
    if not 10 <= len(password) <= 1024:
        raise InvalidRequestError("a password must be 10 to 1024 characters")
