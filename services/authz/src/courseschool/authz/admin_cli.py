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
from collections.abc import Iterator
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

from .admin_commands import parser
from .components import AdminComponents
from .endpoints.admin import AdminService
from .settings import AuthzSettings


class AdminCliSettings(AuthzSettings, kw_only=True, frozen=True):
    # Where the command's log goes: a file (appended to, made owner-only), or "-" for
    # standard error (a container whose standard error is collected). Unset: admin-cli.log
    # in the user's state folder ($XDG_STATE_HOME/courseschool, ~/.local/state/courseschool).
    admin_log_file: str | None = None


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
    redis = create_redis(settings.redis_url, settings.redis_sentinel)
    # Administration only: no signing key is loaded (nor made) to add a school.
    components = AdminComponents.build(settings, pool, redis, SystemClock())
    try:
        components.start()
        source = f"{getpass.getuser()}@{socket.gethostname()}"
        return await args.action(AdminService(components.administration, actor="admin-cli", source=source), args)
    finally:
        await components.close()
        await redis.aclose()
        await pool.close()


def main(argv: list[str], *, prog: str | None = None, missing: str | None = None) -> int:
    """`missing`: what to say when the servers are not known (the caller knows better)."""
    args = (parser(prog) if prog else parser()).parse_args(argv)
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
    return _print(_json(result) if args.json else _text(result))


def _print(result: str) -> int:
    """The result on standard output. A reader that stopped reading (`| head -1`, a pager
    quit early) is not a failure of the command, whose work is done: no traceback, and
    standard output pointed at /dev/null so that the flush at exit raises nothing either."""
    try:
        print(result)
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
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
