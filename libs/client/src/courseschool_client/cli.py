"""`courseschool-client` (or `python -m courseschool_client`): login, token, status, logout.

    courseschool-client login https://school.example --scope "openid profile courses:read"
    curl -H "Authorization: Bearer $(courseschool-client token https://school.example)" ...

The base URL may come from `COURSESCHOOL_URL` instead. Messages go to stderr; only
`token` writes to stdout (the token, nothing else). Exit status 0, or 1 with a sentence
that says what to do."""

from __future__ import annotations

import argparse
import base64
import json
import logging
import os
import sys
import time
from datetime import UTC, datetime
from typing import Any

from .discovery import normalise
from .errors import ClientError, StoreCorrupted
from .session import CourseSchool
from .store import Storage, open_store


def _claims(jwt: str) -> dict[str, Any]:
    """The payload of a JWT access token, for display only (not verified, not relied on)."""
    try:
        payload = jwt.split(".")[1]
        return dict(json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))))
    except (IndexError, ValueError):
        return {}


def login(args: argparse.Namespace) -> int:
    session = CourseSchool.login(
        args.base_url,
        scope=args.scope,
        force=True,
        no_browser=args.no_browser,
        storage=args.storage,
        dpop=args.dpop,
        client_name=args.client_name,
    )
    print(f"Signed in to {session.record.base_url} with: {session.record.scope}", file=sys.stderr)
    print(f"Kept in {session.store.where}.", file=sys.stderr)
    return 0


def token(args: argparse.Namespace) -> int:
    session = CourseSchool.stored(args.base_url, storage=args.storage)
    print(session.access_token())
    return 0


def status(args: argparse.Namespace) -> int:
    session = CourseSchool.stored(args.base_url, storage=args.storage)
    access = session.access_token()
    who = session.userinfo()
    record = session.record
    left = max(0, int(record.expires_at - time.time()))
    expiry = datetime.fromtimestamp(record.expires_at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    school = _claims(access).get("school_id", "")
    lines = {
        "platform": record.base_url,
        "signed in as": " ".join(filter(None, [who.get("name"), f"<{who['email']}>" if who.get("email") else None]))
        or who.get("sub", "(identity not granted)"),
        "school": school or "(not in the token)",
        "scopes": record.scope,
        "token type": record.token_type,
        "access token expires": f"{expiry} (in {left // 60} min {left % 60} s; refreshed when needed)",
        "kept in": session.store.where,
    }
    if args.json:
        print(json.dumps({k.replace(" ", "_"): v for k, v in lines.items()} | {"sub": who.get("sub")}))
    else:
        width = max(map(len, lines))
        for name, value in lines.items():
            print(f"{name:<{width}}  {value}")
    return 0


def logout(args: argparse.Namespace) -> int:
    try:
        session = CourseSchool.stored(args.base_url, storage=args.storage)
    except StoreCorrupted as damaged:
        base_url = normalise(args.base_url)
        open_store(args.storage).delete(base_url)
        print(f"{damaged}.\nForgotten; it could not be revoked: end it on {base_url}/oauth/apps.", file=sys.stderr)
        return 0
    session.logout()
    print(f"Signed out of {session.record.base_url}: the sign-in is revoked and forgotten.", file=sys.stderr)
    return 0


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="courseschool-client", description="Sign in to a Course School.")
    top.add_argument("-v", "--verbose", action="store_true", help="say each step on stderr (never a token)")
    commands = top.add_subparsers(dest="command", required=True)
    default_url = os.environ.get("COURSESCHOOL_URL")

    def command(name: str, help: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help, description=help)
        sub.add_argument("base_url", nargs="?" if default_url else None, default=default_url, help="the school's URL")
        sub.add_argument(
            "--storage",
            choices=["auto", "keyring", "file"],
            default=os.environ.get("COURSESCHOOL_STORAGE", "auto"),
            help="where the sign-in is kept: the OS keyring when there is one (auto), or a 0600 file",
        )
        return sub

    sign_in = command("login", "sign in through the browser and keep the sign-in")
    sign_in.add_argument("--scope", help="space-separated scopes (default: the API's basic set, read only)")
    sign_in.add_argument(
        "--no-browser", action="store_true", help="print the address to open anywhere; paste back where it ends"
    )
    sign_in.add_argument("--dpop", action="store_true", help="bind the tokens to a key of this computer (RFC 9449)")
    sign_in.add_argument("--client-name", default="Course School command-line client", help="the name people see")
    sign_in.set_defaults(run=login)
    command("token", "print a fresh access token (refreshed first if needed)").set_defaults(run=token)
    state = command("status", "who is signed in, at which school, with which scopes, until when")
    state.add_argument("--json", action="store_true")
    state.set_defaults(run=status)
    command("logout", "revoke the sign-in and forget it").set_defaults(run=logout)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(name)s: %(message)s", stream=sys.stderr
    )
    logging.getLogger("httpx").setLevel(logging.WARNING)  # its request lines would show codes in URLs
    storage: Storage = args.storage
    args.storage = storage
    try:
        return int(args.run(args))
    except ClientError as problem:
        print(f"courseschool-client: {problem}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
