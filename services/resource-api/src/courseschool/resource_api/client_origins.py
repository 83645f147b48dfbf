"""The registered origins browsers may call this API from, beyond loopback
(common/cors.py): the authorization server owns clients, so it is asked
(`GET /internal/client-origins`, with INTERNAL_TOKEN), at most once a second and at
least every half minute while origins ask; what it last said is kept when it does not
answer. Without INTERNAL_TOKEN only loopback origins are answered."""

from __future__ import annotations

import httpx
import msgspec

from courseschool.common.origins import CLIENT_ORIGINS_PATH, ClientOriginList, ClientOrigins


def client_origins(authz: httpx.AsyncClient, internal_token: str | None) -> ClientOrigins:
    async def load() -> frozenset[str]:
        if not internal_token:
            return frozenset()
        response = await authz.get(
            CLIENT_ORIGINS_PATH, headers={"Authorization": f"Bearer {internal_token}"}, timeout=3.0
        )
        response.raise_for_status()
        return frozenset(msgspec.json.decode(response.content, type=ClientOriginList).origins)

    return ClientOrigins(load)
