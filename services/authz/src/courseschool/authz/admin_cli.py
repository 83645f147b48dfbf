"""`python -m courseschool.authz admin ...`: the administrator's command line, over
the same service layer as the admin API. `--help` on every command; `--json` for
machine-readable output. Reads DATABASE_URL, REDIS_URL and KEY_ENCRYPTION_KEY."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from courseschool.common.clock import SystemClock
from courseschool.common.db import create_pool
from courseschool.common.errors import PlatformError
from courseschool.common.logging import configure_logging
from courseschool.common.redis import create_redis
from courseschool.common.settings import SettingsError, load_settings
from courseschool.common.text import escape_hidden

from .components import Components
from .endpoints.admin import AdminService
from .settings import AuthzSettings

Action = Callable[[AdminService, argparse.Namespace], Awaitable[Any]]


def _parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="python -m courseschool.authz admin", description="Administer the platform.")
    root.add_argument("--json", action="store_true", help="print JSON instead of text")
    groups = root.add_subparsers(dest="group", required=True, metavar="GROUP")

    def command(
        group: argparse._SubParsersAction, name: str, help_text: str, action: Action
    ) -> argparse.ArgumentParser:
        parser = group.add_parser(name, help=help_text, description=help_text)
        parser.set_defaults(action=action)
        return parser

    schools = groups.add_parser("schools", help="schools").add_subparsers(dest="command", required=True)
    command(schools, "list", "list schools", lambda a, _: a.list_schools())
    p = command(schools, "create", "create a school", lambda a, n: a.create_school(slug=n.slug, name=n.name))
    p.add_argument("--slug", required=True)
    p.add_argument("--name", required=True)

    users = groups.add_parser("users", help="people of the schools").add_subparsers(dest="command", required=True)
    p = command(users, "list", "list users", lambda a, n: a.list_users(school=n.school))
    p.add_argument("--school", help="slug or id")
    p = command(
        users,
        "create",
        "create a user (a password is generated unless given)",
        lambda a, n: a.create_user(school=n.school, email=n.email, name=n.name, role=n.role, password=n.password),
    )
    p.add_argument("--school", required=True)
    p.add_argument("--email", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--role", required=True, choices=["owner", "admin", "lecturer", "student"])
    p.add_argument("--password")
    for name, help_text, method in (
        ("show", "show a user", "user"),
        ("disable", "disable a user and end their grants", "disable_user"),
        ("enable", "enable a user", "enable_user"),
    ):
        p = command(users, name, help_text, _by_name(method, "user"))
        p.add_argument("user", help="id or email")
    p = command(users, "set-role", "change a user's role", lambda a, n: a.set_role(n.user, n.role))
    p.add_argument("user", help="id or email")
    p.add_argument("role", choices=["owner", "admin", "lecturer", "student"])
    p = command(
        users,
        "reset-password",
        "set a new password (generated unless given)",
        lambda a, n: a.reset_password(n.user, n.password),
    )
    p.add_argument("user", help="id or email")
    p.add_argument("--password")

    integrations = groups.add_parser("integrations", help="registered integrations (fixed https callbacks)")
    sub = integrations.add_subparsers(dest="command", required=True)
    p = command(
        sub,
        "create",
        "create a confidential client with fixed callbacks; prints its secret once",
        lambda a, n: a.create_integration(
            name=n.name, redirect_uris=n.redirect_uri, scope=n.scope, refresh=not n.no_refresh
        ),
    )
    p.add_argument("--name", required=True)
    p.add_argument("--redirect-uri", action="append", required=True, help="repeat for several")
    p.add_argument("--scope", help="the most it may ask for (space-separated)")
    p.add_argument("--no-refresh", action="store_true", help="no refresh tokens")

    clients = groups.add_parser("clients", help="clients").add_subparsers(dest="command", required=True)
    command(clients, "list", "list clients", lambda a, _: a.list_clients())
    command(
        clients,
        "prune",
        "remove registered and metadata-document clients that never completed a grant",
        lambda a, _: a.delete_unused_clients(),
    )
    for name, help_text, method in (
        ("show", "show a client", "client"),
        ("disable", "disable a client and end its grants", "disable_client"),
        ("delete", "delete a client and end its grants", "delete_client"),
    ):
        p = command(clients, name, help_text, _by_name(method, "client_id"))
        p.add_argument("client_id")

    grants = groups.add_parser("grants", help="grants").add_subparsers(dest="command", required=True)
    p = command(
        grants,
        "list",
        "list live grants",
        lambda a, n: a.list_grants(user=n.user, client=n.client, include_revoked=n.all),
    )
    p.add_argument("--user", help="id or email")
    p.add_argument("--client")
    p.add_argument("--all", action="store_true", help="include revoked grants")
    p = command(grants, "revoke", "revoke a grant", lambda a, n: a.revoke_grant(n.grant_id))
    p.add_argument("grant_id")

    domains = groups.add_parser("domains", help="trusted domains (metadata documents with https callbacks)")
    sub = domains.add_subparsers(dest="command", required=True)
    command(sub, "list", "list trusted domains", lambda a, _: a.list_domains())
    for name, help_text, method in (
        ("trust", "let metadata documents on HOST list https callbacks on HOST", "trust_domain"),
        ("untrust", "hold metadata documents on HOST to loopback callbacks again", "untrust_domain"),
    ):
        p = command(sub, name, help_text, _by_name(method, "host"))
        p.add_argument("host", help="a host name, such as apps.example.com")

    keys = groups.add_parser("keys", help="signing keys").add_subparsers(dest="command", required=True)
    command(keys, "list", "list signing keys", lambda a, _: a.list_keys())
    p = command(
        keys,
        "rotate",
        "publish a next key (with --immediate, sign with it now)",
        lambda a, n: a.rotate_key(n.alg, immediate=n.immediate),
    )
    p.add_argument("--alg", required=True, choices=["ES256", "RS256"])
    p.add_argument("--immediate", action="store_true")
    return root


def _by_name(method: str, argument: str) -> Action:
    """The action that calls AdminService.<method> with the parsed <argument>."""

    def action(admin: AdminService, args: argparse.Namespace) -> Awaitable[Any]:
        return getattr(admin, method)(getattr(args, argument))

    return action


# Every value printed may hold what a client chose (its name): control characters are
# escaped, so no ANSI sequence reaches the terminal and only our own newlines break lines.


def _shown(value: Any) -> str:
    return escape_hidden(str(value))


def _text(value: Any) -> str:
    if isinstance(value, list):
        return "\n".join(_line(v) for v in value) or "(none)"
    if isinstance(value, dict):
        return "\n".join(f"{_shown(k)}: {_shown(v)}" for k, v in value.items())
    return _shown(value)


def _line(item: Any) -> str:
    if not isinstance(item, dict):
        return _shown(item)
    return "  ".join(f"{_shown(k)}={_shown(v)}" for k, v in item.items() if v not in (None, "", []))


def _json(value: Any) -> str:
    """JSON escapes C0 controls itself; DEL, C1 controls (U+009B is a CSI) and bidirectional
    overrides it leaves as they are: written as \\u escapes, the document is the same."""
    return escape_hidden(msgspec.json.encode(value).decode(), json=True)


async def _run(args: argparse.Namespace, settings: AuthzSettings) -> Any:
    assert settings.database_url and settings.redis_url
    pool = await create_pool(settings.database_url, min_size=1, max_size=2)
    redis = create_redis(settings.redis_url)
    try:
        components = Components.build(settings, pool, redis, SystemClock())
        await components.keys.start()
        return await args.action(AdminService(components, actor="admin-cli"), args)
    finally:
        await redis.aclose()
        await pool.close()


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    try:
        settings = load_settings(AuthzSettings)
        if not settings.database_url or not settings.redis_url or not settings.key_encryption_key:
            raise SettingsError("DATABASE_URL, REDIS_URL and KEY_ENCRYPTION_KEY are required")
    except SettingsError as exc:
        print(f"configuration error: {_shown(exc)}", file=sys.stderr)
        return 2
    configure_logging("warning", "json")
    try:
        result = asyncio.run(_run(args, settings))
    except PlatformError as exc:
        print(f"error: {_shown(exc.description or exc.error)}", file=sys.stderr)
        return 1
    print(_json(result) if args.json else _text(result))
    return 0
