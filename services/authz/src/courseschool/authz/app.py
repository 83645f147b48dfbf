"""The authorization server's app: its routes, and a lifespan that builds the
composition root (`components.Components`) over the pool and Redis, starts it and
closes it; each handler is given its family (families.py) by dependency injection."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from pathlib import Path

import httpx
from litestar import Litestar

from courseschool.common.clock import Clock, SystemClock
from courseschool.common.cors import ANY_ORIGIN, CLIENT_ORIGINS, CorsRules
from courseschool.common.db import Folders, backing_services
from courseschool.common.origins import ClientOrigins
from courseschool.common.outbound import default_tls
from courseschool.common.schema import SchemaCheck
from courseschool.common.web import forward_request_id, service_app

from .components import Components
from .settings import AuthzSettings
from .storage.client_metadata import PUBLIC_WEB, DocumentWeb
from .web import (
    account,
    account_links,
    admin,
    authorization,
    connected_apps,
    interaction,
    introspection,
    jwks,
    logout,
    pages,
    passkeys,
    registration,
    revocation,
    school_approvals,
    school_apps,
    school_people,
    security,
    signin,
    token,
    userinfo,
)
from .web.http import FAMILIES, MAX_BODY
from .web.internal import internal_router

MIGRATIONS = Path(__file__).parent / "migrations"

# Who may read what from another origin (common/cors.py); every other path (the pages,
# /oauth/authorize, introspection, /internal) is same-origin only.
CORS = CorsRules(
    paths={
        jwks.PATH: ANY_ORIGIN,
        "/api/oauth/register": CLIENT_ORIGINS,
        "/register": CLIENT_ORIGINS,
        "/api/oauth/token": CLIENT_ORIGINS,
        "/token": CLIENT_ORIGINS,
        "/api/oauth/revoke": CLIENT_ORIGINS,
        "/api/oauth/userinfo": CLIENT_ORIGINS,
    },
    prefixes={"/api/oauth/register/": CLIENT_ORIGINS},  # RFC 7592 client configuration
    registered=lambda scope: _client_origins(scope["app"]),
)


def _client_origins(app: Litestar) -> ClientOrigins | None:
    components: Components | None = app.state.get("authz")  # None before start-up
    return components.client_origins if components is not None else None


ROUTES = [
    registration.register,
    registration.read_registration,
    registration.update_registration,
    registration.delete_registration,
    authorization.authorize,
    authorization.authorize_fallback,
    interaction.interaction_page,
    interaction.login_submit,
    interaction.second_step_submit,
    interaction.passkey_submit,
    interaction.consent_submit,
    interaction.switch_user_submit,
    interaction.ask_submit,
    interaction.decision_page,
    logout.logout,
    signin.signin_page,
    signin.signin_submit,
    signin.second_step_page,
    signin.second_step_submit,
    signin.passkey_submit,
    signin.second_step_passkey_submit,
    connected_apps.ROUTER,
    pages.stylesheet,
    pages.local_time_script,
    pages.passkeys_script,
    token.token,
    revocation.revoke,
    introspection.introspect,
    userinfo.userinfo,
    jwks.jwks,
    school_apps.ROUTER,
    school_approvals.ROUTER,
    security.ROUTER,
    passkeys.ROUTER,
    security.SCHOOL_ROUTER,
    school_people.ROUTER,
    account.ROUTER,
    *account_links.ROUTES,
    admin.ADMIN_ROUTER,
]


def create_app(
    settings: AuthzSettings,
    *,
    clock: Clock | None = None,
    resource: httpx.AsyncClient | None = None,
    document_web: DocumentWeb = PUBLIC_WEB,
    migrations: Folders = MIGRATIONS,
) -> Litestar:
    """`resource` reaches the resource API's internal endpoints; by default over HTTP at
    RESOURCE_INTERNAL_URL, in the all-in-one process straight to its app. Client ID
    Metadata Documents are fetched from `document_web`: the public web, unless a test
    points it at a site of its own. `migrations`: the ones this code needs applied before
    it is ready (common/schema.py); a test adds its own to play the next release."""
    schema = SchemaCheck("authz", migrations)

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        # A client given by the caller stays the caller's; the one made here is closed
        # however the lifespan ends.
        reaching: AbstractAsyncContextManager[httpx.AsyncClient] = (
            nullcontext(resource)
            if resource is not None
            else httpx.AsyncClient(
                base_url=settings.resource_internal_url,
                event_hooks={"request": [forward_request_id]},
                timeout=3.0,
                verify=default_tls(),
            )
        )
        async with backing_services(settings, "authz") as (pool, redis), reaching as to_resource:
            await schema.at_start(pool)
            components = Components.build(
                settings, pool, redis, clock or SystemClock(), resource=to_resource, document_web=document_web
            )
            await components.start()
            app.state.authz = components
            try:
                yield
            finally:
                await components.close()

    async def check_postgres() -> None:
        await app.state.authz.pool.fetchval("SELECT 1")

    async def check_redis() -> None:
        await app.state.authz.redis.ping()

    app = service_app(
        "authz",
        route_handlers=[*ROUTES, internal_router(settings)],
        ready_checks={"postgres": check_postgres, "redis": check_redis, "schema": lambda: schema(app.state.authz.pool)},
        dependencies=FAMILIES,
        lifespan=[lifespan],
        request_max_body_size=MAX_BODY,
        held={jwks.PATH: lambda: jwks.current_jwks(app)},
        cors=CORS,
    )
    app.state.pages = pages.Pages(settings.issuer)
    return app
