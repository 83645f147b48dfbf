"""`python -m courseschool.authz admin ...`: the administrator's command line, over
the same service layer as the admin API. `--help` on every command; `--json` for
machine-readable output. Reads DATABASE_URL, REDIS_URL and KEY_ENCRYPTION_KEY, and
ADMIN_LOG_FILE.

It prints its result and nothing else: its log (the audit record of every action, and
any warning) goes to a file, and the record to the store (`audit list`) as well."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import getpass
import os
import socket
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

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
from .protocol.registration import SECRET_METHODS
from .settings import AuthzSettings

ROLES = ["owner", "admin", "lecturer", "student"]

Action = Callable[[AdminService, argparse.Namespace], Awaitable[Any]]


class AdminCliSettings(AuthzSettings, kw_only=True, frozen=True):
    # Where the command's log goes: a file (appended to, made owner-only), or "-" for
    # standard error (a container whose standard error is collected). Unset: admin-cli.log
    # in the user's state folder ($XDG_STATE_HOME/courseschool, ~/.local/state/courseschool).
    admin_log_file: str | None = None


EXAMPLES = """examples:
  schools create --slug riverside --name "Riverside Academy"
  users create --school riverside --email ana@riverside.example --name "Ana Lima" --role owner
  printf '%s\\n' "$NEW_PASSWORD" | users reset-password ana@riverside.example --password-stdin
  users set-role ana@riverside.example lecturer
  integrations create --name CRM --redirect-uri https://crm.example.com/callback
  grants list --user ana@riverside.example
  keys rotate --alg ES256
  audit list --since 2026-11-01 --action user_role_set
  --json clients list

Every time is ISO 8601 in UTC. Every action is an audit event (actor admin-cli)."""


def _parser(prog: str = "python -m courseschool.authz admin") -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(
        prog=prog,
        description="Administer the platform: schools, people, clients, grants, trusted domains, signing keys.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    root.add_argument("--json", action="store_true", help="print JSON instead of text (for scripts)")
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
    p.add_argument("--slug", required=True, help="the school's short name in URLs, such as riverside")
    p.add_argument("--name", required=True, help="the school's name as people see it")

    users = groups.add_parser("users", help="people of the schools").add_subparsers(dest="command", required=True)
    p = command(users, "list", "list users", lambda a, n: a.list_users(school=n.school))
    p.add_argument("--school", help="only this school (slug or id)")
    p = command(
        users,
        "create",
        "create a user (a password is generated and printed unless given)",
        lambda a, n: a.create_user(school=n.school, email=n.email, name=n.name, role=n.role, password=_password(n)),
    )
    p.add_argument("--school", required=True, help="the user's school (slug or id)")
    p.add_argument("--email", required=True, help="the sign-in email")
    p.add_argument("--name", required=True, help="the name people see")
    p.add_argument("--role", required=True, choices=ROLES, help="what the user may grant apps (caps their scopes)")
    _password_options(p)
    for name, help_text, method in (
        ("show", "show a user", "user"),
        ("disable", "disable a user and end their grants", "disable_user"),
        ("enable", "enable a user", "enable_user"),
    ):
        p = command(users, name, help_text, _by_name(method, "user"))
        p.add_argument("user", help="the user's id or email")
    p = command(
        users,
        "set-role",
        "change a user's role (grants holding a write scope the new role lacks end)",
        lambda a, n: a.set_role(n.user, n.role),
    )
    p.add_argument("user", help="the user's id or email")
    p.add_argument("role", choices=ROLES, help="the new role")
    p = command(
        users,
        "reset-password",
        "set a new password (generated and printed unless given); ends the user's sessions and grants",
        lambda a, n: a.reset_password(n.user, _password(n)),
    )
    p.add_argument("user", help="the user's id or email")
    _password_options(p)

    integrations = groups.add_parser("integrations", help="registered integrations (fixed https callbacks)")
    sub = integrations.add_subparsers(dest="command", required=True)
    p = command(
        sub,
        "create",
        "create a confidential client with fixed callbacks; prints its secret once",
        lambda a, n: a.create_integration(
            name=n.name,
            redirect_uris=n.redirect_uri,
            scope=n.scope,
            refresh=not n.no_refresh,
            auth_method=n.auth_method,
        ),
    )
    p.add_argument("--name", required=True, help="the name the consent page shows as verified")
    p.add_argument("--redirect-uri", action="append", required=True, help="an https callback; repeat for several")
    p.add_argument("--scope", help="the most it may ask for (space-separated)")
    p.add_argument("--no-refresh", action="store_true", help="no refresh tokens")
    p.add_argument(
        "--auth-method",
        choices=SECRET_METHODS,
        default="client_secret_post",
        help="how it sends its secret: in the form (default) or as HTTP Basic",
    )

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
        p.add_argument("client_id", help="the client's id")

    grants = groups.add_parser("grants", help="grants").add_subparsers(dest="command", required=True)
    p = command(
        grants,
        "list",
        "list live grants (one per sign-in), newest first: the app's name, where it was approved "
        "(address and browser) and when a token was last issued",
        lambda a, n: a.list_grants(user=n.user, client=n.client, include_revoked=n.all),
    )
    p.add_argument("--user", help="only this user's (id or email)")
    p.add_argument("--client", help="only this client's (its id)")
    p.add_argument("--all", action="store_true", help="include revoked grants")
    p = command(
        grants, "revoke", "revoke a grant (its tokens stop working at once)", lambda a, n: a.revoke_grant(n.grant_id)
    )
    p.add_argument("grant_id", help="the grant's id, from grants list")

    domains = groups.add_parser("domains", help="trusted domains (metadata documents with https callbacks)")
    sub = domains.add_subparsers(dest="command", required=True)
    command(sub, "list", "list trusted domains", lambda a, _: a.list_domains())
    for name, help_text, method in (
        ("trust", "let metadata documents on HOST list https callbacks on HOST", "trust_domain"),
        ("untrust", "hold metadata documents on HOST to loopback callbacks again", "untrust_domain"),
    ):
        p = command(sub, name, help_text, _by_name(method, "host"))
        p.add_argument("host", help="a host name, such as apps.example.com")

    audit = groups.add_parser("audit", help="the record of events: admin actions, sign-ins, consents, security")
    sub = audit.add_subparsers(dest="command", required=True)
    p = command(
        sub,
        "list",
        "list events, newest first: what, who, from where, which client and school, when",
        lambda a, n: a.list_actions(
            kind=n.kind,
            user=n.user,
            client=n.client,
            school=n.school,
            action=n.event,
            since=n.since,
            until=n.until,
            before=n.before,
            limit=n.limit,
        ),
    )
    p.add_argument("--kind", choices=["admin", "user", "security"], help="only events of this kind")
    p.add_argument("--user", help="only events of this user (id or email)")
    p.add_argument("--client", help="only events of this client (its id)")
    p.add_argument("--school", help="only events at this school (slug or id)")
    p.add_argument(
        "--action", dest="event", help="only this action, such as refresh_reused, login_failed or user_role_set"
    )
    p.add_argument("--since", help="only from this ISO 8601 date or time on (UTC unless it says), e.g. 2026-11-01")
    p.add_argument("--until", help="only before this ISO 8601 date or time")
    p.add_argument("--before", type=int, help="the next page: only events older than this id (the last one shown)")
    p.add_argument("--limit", type=int, default=100, help="at most this many (1 to 500; default 100)")

    keys = groups.add_parser("keys", help="signing keys").add_subparsers(dest="command", required=True)
    command(keys, "list", "list signing keys", lambda a, _: a.list_keys())
    p = command(
        keys,
        "rotate",
        "publish a next key and say when it starts signing (with --immediate, sign with it now)",
        lambda a, n: a.rotate_key(n.alg, immediate=n.immediate),
    )
    p.add_argument("--alg", required=True, choices=["ES256", "RS256"], help="which key to rotate")
    p.add_argument(
        "--immediate",
        action="store_true",
        help="sign with the new key now (a compromised key): tokens of clients that cached the old key set "
        "fail until they fetch the JWKS again",
    )
    return root


def _password_options(parser: argparse.ArgumentParser) -> None:
    given = parser.add_mutually_exclusive_group()
    given.add_argument("--password", help="the password (visible in the shell's history: prefer --password-stdin)")
    given.add_argument("--password-stdin", action="store_true", help="read the password from the first line of stdin")


def _password(args: argparse.Namespace) -> str | None:
    if not args.password_stdin:
        return args.password
    line = sys.stdin.readline().rstrip("\r\n")
    if not line:
        raise PlatformError("--password-stdin: the first line of standard input is empty")
    return line


def _by_name(method: str, argument: str) -> Action:
    """The action that calls AdminService.<method> with the parsed <argument>."""

    def action(admin: AdminService, args: argparse.Namespace) -> Awaitable[Any]:
        return getattr(admin, method)(getattr(args, argument))

    return action


# Every value printed may hold what a client chose (its name): control characters are
# escaped, so no ANSI sequence reaches the terminal and only our own newlines break lines.


def _shown(value: Any) -> str:
    if isinstance(value, dict | list):
        value = msgspec.json.encode(value).decode()
    return escape_hidden(str(value))


def _text(value: Any) -> str:
    if isinstance(value, list):
        return "\n".join(_line(v) for v in value) or "(none)"
    if isinstance(value, dict):
        lines = []
        for key, item in value.items():
            if isinstance(item, list) and item and all(isinstance(i, dict) for i in item):
                lines += [f"{_shown(key)}:", *(f"  {_line(i)}" for i in item)]
            else:
                lines.append(f"{_shown(key)}: {_shown(item)}")
        return "\n".join(lines)
    return _shown(value)


def _line(item: Any) -> str:
    if not isinstance(item, dict):
        return _shown(item)
    return "  ".join(f"{_shown(k)}={_shown(v)}" for k, v in item.items() if v not in (None, "", [], {}))


def _json(value: Any) -> str:
    """JSON escapes C0 controls itself; DEL, C1 controls (U+009B is a CSI) and bidirectional
    overrides it leaves as they are: written as \\u escapes, the document is the same."""
    return escape_hidden(msgspec.json.encode(value).decode(), json=True)


async def _run(args: argparse.Namespace, settings: AdminCliSettings) -> Any:
    assert settings.database_url and settings.redis_url
    pool = await create_pool(settings.database_url, min_size=1, max_size=2)
    redis = create_redis(settings.redis_url)
    components = Components.build(settings, pool, redis, SystemClock())
    try:
        await components.keys.start()
        components.events.start()
        source = f"{getpass.getuser()}@{socket.gethostname()}"
        return await args.action(AdminService(components, actor="admin-cli", source=source), args)
    finally:
        await components.events.stop()
        if components.webhook is not None:  # the running servers deliver what the CLI recorded
            await components.webhook.stop()
        await components.client_cache.close()
        await redis.aclose()
        await pool.close()


def main(argv: list[str], *, prog: str | None = None, missing: str | None = None) -> int:
    """`missing`: what to say when the servers are not known (the caller knows better)."""
    args = (_parser(prog) if prog else _parser()).parse_args(argv)
    try:
        settings = load_settings(AdminCliSettings)
        if not settings.database_url or not settings.redis_url or not settings.key_encryption_key:
            raise SettingsError(missing or "DATABASE_URL, REDIS_URL and KEY_ENCRYPTION_KEY are required")
    except SettingsError as exc:
        print(f"configuration error: {_shown(exc)}", file=sys.stderr)
        return 2
    with _log_stream(settings.admin_log_file) as log:
        configure_logging("warning", "json", stream=log)
        try:
            result = asyncio.run(_run(args, settings))
        except PlatformError as exc:
            # The administrator's own terminal: the log-only detail too (a reference as typed).
            said = exc.description or exc.error
            print(f"error: {_shown(said)}{f' ({_shown(exc.detail)})' if exc.detail else ''}", file=sys.stderr)
            return 1
    print(_json(result) if args.json else _text(result))
    return 0


def _default_log_file() -> Path:
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "courseschool" / "admin-cli.log"


@contextlib.contextmanager
def _log_stream(setting: str | None) -> Iterator[TextIO]:
    """The command's log file, opened for appending (owner-only when made here). One
    that cannot be opened (no home, a read-only file system) leaves the records on
    standard error, said once: they are never dropped."""
    if setting == "-":
        yield sys.stderr
        return
    try:
        path = Path(setting) if setting else _default_log_file()
    except RuntimeError:  # no home to be found (a user without one, HOME unset)
        print("log: no home folder for admin-cli.log; set ADMIN_LOG_FILE", file=sys.stderr)
        yield sys.stderr
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    except OSError as exc:
        print(f"log: cannot write {_shown(path)} ({_shown(exc.strerror)}); set ADMIN_LOG_FILE", file=sys.stderr)
        yield sys.stderr
        return
    with os.fdopen(fd, "a", buffering=1) as stream:
        yield stream
