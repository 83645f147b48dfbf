"""Sign-in attempts as the security tests make them: from a chosen caller address,
with the page fetched first (its CSRF token), the POST sent when the test says."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import msgspec

from courseschool.authz.settings import AuthzSettings

from .conftest import AppClient
from .flow import BASE_URL, Flow, pkce_pair


def with_settings(base: AuthzSettings, **changes: object) -> AuthzSettings:
    return AuthzSettings(**{**msgspec.structs.asdict(base), **changes})


@asynccontextmanager
async def from_address(client: AppClient, flow: Flow, ip: str) -> AsyncIterator[Flow]:
    """A browser at `ip` (the address the web layer sees), on the same app."""
    transport = httpx.ASGITransport(app=client.app, client=(ip, 40000))
    async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as browser:
        yield Flow(browser, flow.pool, flow.redis)


class Attempt:
    """One sign-in page, opened; `send` posts its form."""

    def __init__(self, flow: Flow, interaction: str, csrf: str) -> None:
        self.flow, self.interaction, self.csrf = flow, interaction, csrf

    @classmethod
    async def open(cls, flow: Flow, reg: dict[str, Any]) -> Attempt:
        _, challenge = pkce_pair()
        start = await flow.start(flow.authorize_params(reg, challenge))
        assert start.status_code == 303, start.text
        _, csrf = await flow.page(start.headers["location"])
        return cls(flow, start.headers["location"], csrf)

    async def send(self, email: str, password: str) -> httpx.Response:
        return await self.flow.client.post(
            f"{self.interaction}/login", data={"csrf": self.csrf, "email": email, "password": password}
        )


async def try_sign_in(flow: Flow, reg: dict[str, Any], email: str, password: str) -> httpx.Response:
    return await (await Attempt.open(flow, reg)).send(email, password)


def signed_in(response: httpx.Response) -> bool:
    """The answer to a sign-in POST opened a login session."""
    return response.status_code == 303 and any(name.endswith("cs_session") for name in response.cookies)


async def lock_keys(flow: Flow) -> list[str]:
    """What the sign-in lockout holds in Redis (failures, locks, waits)."""
    return [k.decode() async for k in flow.redis.scan_iter(match="authz:login*")]
