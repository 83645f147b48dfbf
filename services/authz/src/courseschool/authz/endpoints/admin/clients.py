"""Clients, administrator-made integrations and grants."""

from __future__ import annotations

from typing import Any

from courseschool.common.errors import InvalidRequestError, fit_description
from courseschool.common.scopes import format_scope, parse_scope, unknown_scopes
from courseschool.common.secrets import digest, new_token

from ...protocol.redirect_uris import is_https_redirect_uri, is_loopback_redirect_uri
from ...protocol.registration import GRANT_TYPES, SECRET_METHODS
from ..registration import remove_client, remove_unused_clients
from .base import AdminBase, unknown


class ClientsAdmin(AdminBase):
    async def create_integration(
        self,
        *,
        name: str,
        redirect_uris: list[str],
        scope: str | None = None,
        refresh: bool = True,
        auth_method: str = "client_secret_post",
    ) -> dict[str, Any]:
        """A confidential client with fixed HTTPS callbacks: the "registered integration"
        the interface sends such clients to, or a resource server that introspects. Its
        secret is shown once; it sends it as the method says (RFC 6749 §2.3.1: in the form,
        or in an HTTP Basic header, which many resource-server libraries send)."""
        if auth_method not in SECRET_METHODS:
            raise InvalidRequestError(f"auth_method must be one of {', '.join(SECRET_METHODS)}")
        if not redirect_uris or not all(is_https_redirect_uri(u) or is_loopback_redirect_uri(u) for u in redirect_uris):
            raise InvalidRequestError("redirect URIs must be https (or loopback) without fragment or user-info")
        if not 0 < len(name) <= 200:
            raise InvalidRequestError("name must be 1 to 200 characters")
        if scope is not None:
            names = parse_scope(scope)
            if not names or unknown_scopes(names):
                raise InvalidRequestError(
                    f"unknown scope: {fit_description(' '.join(unknown_scopes(names))) or '(empty)'}"
                )
            scope = format_scope(names)
        secret = new_token()
        client = await self.c.clients.create(
            client_id=new_token(18),
            client_name=name,
            redirect_uris=redirect_uris,
            token_endpoint_auth_method=auth_method,
            grant_types=list(GRANT_TYPES) if refresh else ["authorization_code"],
            response_types=["code"],
            application_type="web",
            scope=scope,
            id_token_signed_response_alg="RS256",
            secret_hash=digest(secret),
            is_integration=True,
            now=self.c.clock.now(),
        )
        await self._audit("integration_created", client_id=client.client_id)
        return {**await self.client(client.client_id), "client_secret": secret}

    async def list_clients(self) -> list[dict[str, Any]]:
        return await self.c.admin_store.clients()

    async def client(self, client_id: str) -> dict[str, Any]:
        found = await self.c.admin_store.client(client_id)
        if found is None:
            raise unknown("client", client_id)
        return found

    async def disable_client(self, client_id: str) -> dict[str, Any]:
        await self.client(client_id)
        await self.c.admin_store.disable_client(client_id)
        ended = await self._end_grants(await self.c.admin_store.live_grants_of_client(client_id), "client_disabled")
        await self._audit("client_disabled", client_id=client_id, grants_ended=ended)
        return {**await self.client(client_id), "grants_ended": ended}

    async def delete_client(self, client_id: str) -> dict[str, Any]:
        await self.client(client_id)
        ended = await remove_client(self.c, client_id, reason="client_deleted")
        await self._audit("client_deleted", client_id=client_id, grants_ended=ended)
        return {"client_id": client_id, "deleted": True, "grants_ended": ended}

    async def delete_unused_clients(self) -> list[str]:
        return await remove_unused_clients(self.c)

    async def list_grants(
        self, *, user: str | None = None, client: str | None = None, include_revoked: bool = False
    ) -> list[dict[str, Any]]:
        return await self.c.admin_store.grants(user=user, client=client, include_revoked=include_revoked)

    async def revoke_grant(self, grant_id: str) -> dict[str, Any]:
        grant = await self.c.grants.get(grant_id)
        if grant is None:
            raise unknown("grant", grant_id)
        if grant.revoked:  # ended already (by anyone): nothing to do, nothing to record
            return {"id": grant_id, "revoked": False, "already_ended": True}
        await self.c.revoker.revoke_grant(grant_id, reason="revoked_by_admin")
        await self._audit("grant_revoked_by_admin", subject=grant.user_id, client_id=grant.client_id, grant_id=grant_id)
        return {"id": grant_id, "revoked": True}
