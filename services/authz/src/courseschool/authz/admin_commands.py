"""The admin command line's grammar: every group and command of
`python -m courseschool.authz admin`, its help, and the `AdminService` call each makes
(`admin_cli.py` runs them and prints the result)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from courseschool.common.errors import PlatformError

from .endpoints.admin import AdminService
from .protocol.registration import SECRET_METHODS

ROLES = ["owner", "admin", "lecturer", "student"]

Action = Callable[[AdminService, argparse.Namespace], Awaitable[Any]]
Groups = argparse._SubParsersAction


EXAMPLES = """examples:
  schools create --slug riverside --name "Riverside Academy"
  users invite --school riverside --email ana@riverside.example --name "Ana Lima" --role owner
  printf '%s\\n' "$NEW_PASSWORD" | users reset-password ana@riverside.example --password-stdin
  users set-role ana@riverside.example lecturer
  integrations create --name CRM --redirect-uri https://crm.example.com/callback
  grants list --user ana@riverside.example
  keys rotate --alg ES256
  audit list --since 2026-11-01 --action user_role_set
  --json clients list

Every time is ISO 8601 in UTC. Every action is an audit event (actor admin-cli)."""


def parser(prog: str = "python -m courseschool.authz admin") -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(
        prog=prog,
        description="Administer the platform: schools, people, clients, grants, trusted domains, signing keys.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    root.add_argument("--json", action="store_true", help="print JSON instead of text (for scripts)")
    groups = root.add_subparsers(dest="group", required=True, metavar="GROUP")
    for add in (_schools, _users, _integrations, _clients, _grants, _domains, _audit, _keys):
        add(groups)
    return root


def _group(groups: Groups, name: str, help_text: str) -> Groups:
    """A group of commands (`schools`, `users`, ...), each named after it."""
    return groups.add_parser(name, help=help_text).add_subparsers(dest="command", required=True)


def _command(group: Groups, name: str, help_text: str, action: Action) -> argparse.ArgumentParser:
    command = group.add_parser(name, help=help_text, description=help_text)
    command.set_defaults(action=action)
    return command


def _commands_on(group: Groups, argument: tuple[str, str], *commands: tuple[str, str, str]) -> None:
    """Commands (name, help, AdminService method) that act on the one thing `argument`
    names (its name, its help)."""
    name_of, help_of = argument
    for name, help_text, method in commands:
        _command(group, name, help_text, _by_name(method, name_of)).add_argument(name_of, help=help_of)


def _schools(groups: Groups) -> None:
    """Schools: list, create."""
    schools = _group(groups, "schools", "schools")
    _command(schools, "list", "list schools", lambda a, _: a.list_schools())
    p = _command(schools, "create", "create a school", lambda a, n: a.create_school(slug=n.slug, name=n.name))
    p.add_argument("--slug", required=True, help="the school's short name in URLs, such as riverside")
    p.add_argument("--name", required=True, help="the school's name as people see it")


def _users(groups: Groups) -> None:
    """The people of the schools: list, create, invite, show, disable, enable, reset-second-factors,
    set-role, reset-password."""
    users = _group(groups, "users", "people of the schools")
    p = _command(users, "list", "list users", lambda a, n: a.list_users(school=n.school))
    p.add_argument("--school", help="only this school (slug or id)")
    p = _command(
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
    p = _command(
        users,
        "invite",
        "create a user without a password and e-mail them a single-use link (valid INVITATION_TTL, "
        "48 hours by default) where they choose one; again for someone invited who has not: a new link",
        lambda a, n: a.invite_user(school=n.school, email=n.email, name=n.name, role=n.role),
    )
    p.add_argument("--school", required=True, help="the user's school (slug or id)")
    p.add_argument("--email", required=True, help="the sign-in email, where the invitation goes")
    p.add_argument("--name", required=True, help="the name people see")
    p.add_argument("--role", required=True, choices=ROLES, help="what the user may grant apps (caps their scopes)")
    _commands_on(
        users,
        ("user", "the user's id or email"),
        ("show", "show a user", "user"),
        ("disable", "disable a user and end their grants", "disable_user"),
        ("enable", "enable a user", "enable_user"),
        (
            "reset-second-factors",
            "forget the user's authenticator app and recovery codes (they sign in with their password again); "
            "ends their sessions and tells them by e-mail",
            "reset_second_factors",
        ),
    )
    p = _command(
        users,
        "set-role",
        "change a user's role (grants holding a write scope the new role lacks end)",
        lambda a, n: a.set_role(n.user, n.role),
    )
    p.add_argument("user", help="the user's id or email")
    p.add_argument("role", choices=ROLES, help="the new role")
    p = _command(
        users,
        "reset-password",
        "set a new password (generated and printed unless given); ends the user's sessions and grants",
        lambda a, n: a.reset_password(n.user, _password(n)),
    )
    p.add_argument("user", help="the user's id or email")
    _password_options(p)


def _integrations(groups: Groups) -> None:
    """Integrations: confidential clients with fixed https callbacks."""
    sub = _group(groups, "integrations", "registered integrations (fixed https callbacks)")
    p = _command(
        sub,
        "create",
        "create a confidential client with fixed callbacks; prints its secret once",
        _by_options("create_integration", "name", "scope", "refresh", "auth_method", redirect_uris="redirect_uri"),
    )
    p.add_argument("--name", required=True, help="the name the consent page shows as verified")
    p.add_argument("--redirect-uri", action="append", required=True, help="an https callback; repeat for several")
    p.add_argument("--scope", help="the most it may ask for (space-separated)")
    p.add_argument("--no-refresh", dest="refresh", action="store_false", help="no refresh tokens")
    p.add_argument(
        "--auth-method",
        choices=SECRET_METHODS,
        default="client_secret_post",
        help="how it sends its secret: in the form (default) or as HTTP Basic",
    )


def _clients(groups: Groups) -> None:
    """Clients: list, prune, show, disable, delete."""
    clients = _group(groups, "clients", "clients")
    _command(clients, "list", "list clients", lambda a, _: a.list_clients())
    _command(
        clients,
        "prune",
        "remove registered and metadata-document clients that never completed a grant",
        lambda a, _: a.delete_unused_clients(),
    )
    _commands_on(
        clients,
        ("client_id", "the client's id"),
        ("show", "show a client", "client"),
        ("disable", "disable a client and end its grants", "disable_client"),
        ("delete", "delete a client and end its grants", "delete_client"),
    )


def _grants(groups: Groups) -> None:
    """Grants (one per sign-in): list, revoke."""
    grants = _group(groups, "grants", "grants")
    p = _command(
        grants,
        "list",
        "list live grants (one per sign-in), newest first: the app's name, where it was approved "
        "(address and browser) and when a token was last issued",
        _by_options("list_grants", "user", "client", include_revoked="all"),
    )
    p.add_argument("--user", help="only this user's (id or email)")
    p.add_argument("--client", help="only this client's (its id)")
    p.add_argument("--all", action="store_true", help="include revoked grants")
    _commands_on(
        grants,
        ("grant_id", "the grant's id, from grants list"),
        ("revoke", "revoke a grant (its tokens stop working at once)", "revoke_grant"),
    )


def _domains(groups: Groups) -> None:
    """Trusted domains: hosts whose metadata documents may list https callbacks."""
    sub = _group(groups, "domains", "trusted domains (metadata documents with https callbacks)")
    _command(sub, "list", "list trusted domains", lambda a, _: a.list_domains())
    _commands_on(
        sub,
        ("host", "a host name, such as apps.example.com"),
        ("trust", "let metadata documents on HOST list https callbacks on HOST", "trust_domain"),
        ("untrust", "hold metadata documents on HOST to loopback callbacks again", "untrust_domain"),
    )


def _audit(groups: Groups) -> None:
    """The record of events."""
    sub = _group(groups, "audit", "the record of events: admin actions, sign-ins, consents, security")
    p = _command(
        sub,
        "list",
        "list events, newest first: what, who, from where, which client and school, when",
        # `action` is the command's own default (set_defaults): the option's is `event`.
        _by_options(
            "list_actions", "kind", "user", "client", "school", "since", "until", "before", "limit", action="event"
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


def _keys(groups: Groups) -> None:
    """Signing keys: list, rotate."""
    keys = _group(groups, "keys", "signing keys")
    _command(keys, "list", "list signing keys", lambda a, _: a.list_keys())
    p = _command(
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


def _by_options(method: str, *same: str, **renamed: str) -> Action:
    """The action that calls AdminService.<method> with keywords from the parsed
    options: those named as the keyword (`same`), and `keyword="option"` (`renamed`)."""
    names = {**{name: name for name in same}, **renamed}

    def action(admin: AdminService, args: argparse.Namespace) -> Awaitable[Any]:
        return getattr(admin, method)(**{keyword: getattr(args, option) for keyword, option in names.items()})

    return action
