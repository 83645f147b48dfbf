"""`python -m courseschool.platform run`: the whole platform on one port, with embedded
PostgreSQL and Redis under DATA_DIR unless DATABASE_URL / REDIS_URL name real servers
(migrated, with the demo school), and development-sized abuse limits unless RATE_* say
otherwise. `running.json` in the data folder says where its embedded servers listen
while it serves (owner-only; `admin` reads it)."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import msgspec

from courseschool.common.logging import configure_logging
from courseschool.common.settings import BaseSettings, SettingsError, load_settings

from .mail_catcher import CAUGHT_FROM, MailCatcher
from .migrate import migrate_all
from .startup import StartUp, StartUpSignals


class PlatformSettings(BaseSettings, kw_only=True, frozen=True):
    data_dir: str = ".data"
    host: str = "127.0.0.1"
    port: int = 8000
    key_encryption_key: str | None = None
    demo_email: str = "owner@demo.school"
    demo_password: str = "course-school-demo"
    smtp_url: str | None = None  # a relay for the e-mail; unset: caught in DATA_DIR/mail/
    mail_from: str | None = None
    events_webhook_url: str | None = None  # the operator's receiver of security events (authz reads the rest)


RS_CLIENT_ID = "resource-api"
RUNNING = "running.json"  # in the data folder while `run` serves: where its embedded servers listen
KEK_FILE = "key-encryption-key"
ADMIN_LOG = "admin-cli.log"  # in the data folder: the log of `admin` (its audit records)

# `run` is for a developer's machine: a test loop that registers a client and takes
# tokens on every run must not meet the production limits (see services/authz/README.md).
DEVELOPMENT_LIMITS = {
    "RATE_REGISTER_PER_IP": "1000/3600",
    "RATE_TOKEN_PER_IP": "3000/60",
    "RATE_TOKEN_PER_CLIENT": "1200/60",
    "RATE_LOGIN_PER_IP": "300/300",
    "RATE_AUTHORIZE_PER_IP": "1200/60",
}


async def prepare(database_url: str, *, demo_email: str, demo_password: str, rs_secret: str) -> None:
    """The migration step, then the demo school."""
    from courseschool.common.db import create_pool

    from .demo import prepare_demo

    await migrate_all(database_url, rs_client_id=RS_CLIENT_ID, rs_client_secret=rs_secret)
    pool = await create_pool(database_url, min_size=1, max_size=2)
    try:
        await prepare_demo(pool, email=demo_email, password=demo_password)
    finally:
        await pool.close()


def _shown_password(settings: PlatformSettings) -> str:
    """The default demo password is printed; one an operator chose is not."""
    default = msgspec.structs.fields(PlatformSettings)
    chosen = next(f.default for f in default if f.name == "demo_password")
    return settings.demo_password if settings.demo_password == chosen else "(the DEMO_PASSWORD you set)"


def _metrics_command(settings: PlatformSettings, made: str) -> str:
    """How to read /metrics here: it asks for INTERNAL_TOKEN. One made for this run is
    printed (it opens nothing but the probes and /metrics: `run` refuses /internal at its
    front); one the operator set is not, like a DEMO_PASSWORD they chose."""
    host = "127.0.0.1" if settings.host in ("0.0.0.0", "::", "") else settings.host
    where = f"http://[{host}]:{settings.port}" if ":" in host else f"http://{host}:{settings.port}"
    token = "$INTERNAL_TOKEN" if settings.internal_token else made
    return f'curl -H "Authorization: Bearer {token}" {where}/metrics'


def running_servers(data_dir: Path) -> dict[str, str] | None:
    """What a live `run` on this data folder wrote at start; None if none is running."""
    import psutil

    try:
        found = msgspec.json.decode((data_dir / RUNNING).read_bytes(), type=dict[str, Any])
    except (OSError, msgspec.DecodeError):
        return None
    if not psutil.pid_exists(found.get("pid", -1)) or not found.get("database_url") or not found.get("redis_url"):
        return None
    return {"database_url": found["database_url"], "redis_url": found["redis_url"]}


def _write_running(data_dir: Path, database_url: str, redis_url: str) -> Path:
    """Owner-only: the embedded servers trust local connections."""
    path = data_dir / RUNNING
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(msgspec.json.encode({"pid": os.getpid(), "database_url": database_url, "redis_url": redis_url}))
    return path


def run_platform(args: argparse.Namespace) -> int:
    from .embedded import EmbeddedServers
    from .instance import InstanceRefused, claim

    settings = _settings(args)
    if settings is None:
        return 2
    configure_logging(settings.log_level, settings.log_format)
    data_dir = Path(settings.data_dir)
    try:  # before anything is started: another `run` on this data folder, a busy port
        instance = claim(data_dir, host=settings.host, port=settings.port, base_url=settings.base_url)
    except InstanceRefused as exc:
        print(f"courseschool.platform: {exc}", file=sys.stderr)
        return 1
    servers = EmbeddedServers(data_dir)
    signals = StartUpSignals()
    running: list[Path] = []
    catcher = MailCatcher(data_dir)
    try:
        _serve(settings, servers, signals, running, catcher)
    except KeyboardInterrupt:
        pass
    except InstanceRefused as exc:
        print(f"courseschool.platform: {exc}", file=sys.stderr)
        return 1
    finally:
        signals.ignore()
        for path in running:
            path.unlink(missing_ok=True)
        catcher.stop()
        servers.stop()
        instance.release()
    return 0


def _settings(args: argparse.Namespace) -> PlatformSettings | None:
    """The settings, the public origin following the port (--port or PORT) unless
    BASE_URL is set; None after saying what is wrong."""
    overrides: dict[str, Any] = {}
    if args.port is not None:
        overrides["port"] = args.port
    try:
        settings = load_settings(PlatformSettings, **overrides)
        if not os.environ.get("BASE_URL"):
            settings = load_settings(PlatformSettings, **overrides, base_url=f"http://127.0.0.1:{settings.port}")
    except SettingsError as exc:
        print(f"configuration error: {exc}", file=sys.stderr)
        return None
    return settings


def _serve(
    settings: PlatformSettings, servers: Any, signals: StartUpSignals, running: list[Path], catcher: MailCatcher
) -> None:
    """Start what is needed, then serve until stopped (`running`: the file to remove at
    stop; `catcher`: started unless SMTP_URL names a relay)."""
    # The embedded servers and the production server: for `run` only (the image has none).
    from courseschool.common.cli import serve_app
    from courseschool.common.jose import new_kek
    from courseschool.common.secrets import new_token

    from .embedded import read_or_create_secret
    from .instance import ensure_port_free

    data_dir = Path(settings.data_dir)
    limits = {name: os.environ.setdefault(name, value) for name, value in DEVELOPMENT_LIMITS.items()}
    start = StartUp()
    database_url, redis_url = _backing_servers(settings, servers, signals, start)
    kek = settings.key_encryption_key or read_or_create_secret(data_dir / KEK_FILE, new_kek)
    if not settings.database_url and not settings.redis_url:
        running.append(_write_running(data_dir, database_url, redis_url))
    rs_secret = new_token()
    with start.step("migrations and the demo school"):
        asyncio.run(
            prepare(
                database_url, demo_email=settings.demo_email, demo_password=settings.demo_password, rs_secret=rs_secret
            )
        )
    internal_token = settings.internal_token or new_token()
    shared = {
        "base_url": settings.base_url,
        "database_url": database_url,
        **redis_settings(settings, redis_url),
        "key_encryption_key": kek,
        "internal_token": internal_token,
        "log_level": settings.log_level,
        "log_format": settings.log_format,
        "rs_client_id": RS_CLIENT_ID,
        "rs_client_secret": rs_secret,
        "forwarded_allow_ips": settings.forwarded_allow_ips,
        **_mail(settings, catcher),
    }
    print(_banner(settings, internal_token, limits, catcher), flush=True)
    # The production server (granian, as `serve`): one worker process builds the app;
    # this process keeps the embedded servers and stops them once granian has stopped.
    ensure_port_free(settings.host, settings.port)  # again: taken while we started?
    start.announce_ready(settings.host, settings.port)
    serve_app(partial(_worker_app, shared), host=settings.host, port=settings.port, stop_on_hangup=True)


def redis_settings(settings: PlatformSettings, redis_url: str) -> dict[str, str]:
    """What the apps `run` builds are given of Redis: its URL (the one set, or the embedded
    server's) and every Sentinel setting as it was set."""
    return {
        "redis_url": redis_url,
        "redis_sentinel_master": settings.redis_sentinel_master or "",
        "redis_sentinels": settings.redis_sentinels,
        "redis_sentinel_username": settings.redis_sentinel_username or "",
        "redis_sentinel_password": settings.redis_sentinel_password or "",
        "redis_sentinel_tls": "true" if settings.redis_sentinel_tls else "false",
    }


def _backing_servers(
    settings: PlatformSettings, servers: Any, signals: StartUpSignals, start: StartUp
) -> tuple[str, str]:
    """PostgreSQL's and Redis's URLs: the settings', or embedded servers started here."""
    if settings.database_url:
        database_url = settings.database_url
    else:
        first = not (Path(settings.data_dir) / "postgres" / "PG_VERSION").exists()
        with signals.held(), start.step("embedded PostgreSQL", "first start: initdb" if first else ""):
            database_url = servers.start_postgres()
    if settings.redis_url:
        return database_url, settings.redis_url
    with signals.held(), start.step("embedded Redis"):
        return database_url, servers.start_redis()


def _mail(settings: PlatformSettings, catcher: MailCatcher) -> dict[str, str]:
    """Where the e-mail goes: the relay SMTP_URL names (the services read it and MAIL_FROM
    themselves), or the catcher, started here."""
    if settings.smtp_url:
        return {}
    return {"smtp_url": catcher.start(), "mail_from": settings.mail_from or CAUGHT_FROM}


def _banner(settings: PlatformSettings, internal_token: str, limits: dict[str, str], catcher: MailCatcher) -> str:
    data = "external servers" if settings.database_url else Path(settings.data_dir).resolve()
    mail = "sent through the relay SMTP_URL names" if settings.smtp_url else f"caught in {catcher.folder}/ (.eml files)"
    return (
        f"\n  Course School is running at {settings.base_url}\n"
        f"  Discovery: {settings.base_url}/.well-known/oauth-authorization-server\n"
        f"  Demo login: {settings.demo_email} / {_shown_password(settings)}\n"
        f"  Data: {data}\n"
        f"  Mail: {mail}\n"
        f"  Webhook: {_webhook(settings)}\n"
        f"  Metrics: {_metrics_command(settings, internal_token)}\n"
        f"  Administer it: .venv/bin/python -m courseschool.platform admin --help\n"
        f"  Development limits (LIMIT/SECONDS; production is stricter): "
        f"{', '.join(f'{k} {v}' for k, v in limits.items())}"
    )


def _webhook(settings: PlatformSettings) -> str:
    """Where security events go: the receiver's origin only (a path or query may hold
    the receiver's own secret, as many hook URLs do)."""
    if not settings.events_webhook_url:
        return "none (EVENTS_WEBHOOK_URL unset; security events stay in `admin audit list`)"
    parts = urlsplit(settings.events_webhook_url)
    host = f"[{parts.hostname}]" if ":" in (parts.hostname or "") else parts.hostname
    port = f":{parts.port}" if parts.port else ""
    return f"security events and new connections to {parts.scheme}://{host}{port}/… (signed)"


def _worker_app(shared: dict[str, str]) -> Any:
    """In granian's worker: the three apps behind the router, behind the proxy-headers
    middleware and the held documents (`common.web.server_app`); /healthz and /readyz
    open to anyone (a developer's and the tests' probe)."""
    from courseschool.common.web import server_app

    from .app import build

    configure_logging(shared["log_level"], shared["log_format"])
    router = build(shared, public_probes=True)
    return server_app(router, router.apps, shared["forwarded_allow_ips"])
