"""Finding 21: deploy/compose.yaml publishes the gateway on the host's loopback only, and
the placeholder secrets the deployment files ship (compose's "change-me" defaults, the
dev overlay's secrets.example.env) stop every service with a configuration error (exit
2) unless DEV=1, which compose passes only from the shell and only the dev overlay sets."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from typing import Any

import pytest
import yaml

from courseschool.authz.settings import AuthzSettings
from courseschool.common.jose import new_kek
from courseschool.common.settings import BaseSettings, SettingsError, is_placeholder, load_settings
from courseschool.discovery.settings import DiscoverySettings
from courseschool.platform.__main__ import MigrateSettings
from courseschool.resource_api.settings import ResourceSettings

from ..support.deployment import COMPOSE, DEPLOY
from ..support.net import free_port

SETTINGS: dict[str, type[BaseSettings]] = {
    "authz": AuthzSettings,
    "resource-api": ResourceSettings,
    "discovery": DiscoverySettings,
    "migrate": MigrateSettings,
}
SECRETS_EXAMPLE = DEPLOY / "k8s" / "overlays" / "dev" / "secrets.example.env"
_VARIABLE = re.compile(r"\$\{([A-Z_]+):-([^}]*)\}")


def _as_compose_runs_it(value: Any, shell: dict[str, str]) -> str:
    """`${NAME:-default}` resolved as compose does against the shell's environment."""
    return _VARIABLE.sub(lambda m: shell.get(m.group(1)) or m.group(2), str(value))


def _environment(service: str, shell: dict[str, str]) -> dict[str, str]:
    compose = yaml.safe_load(COMPOSE.read_text())
    raw = compose["services"][service].get("environment") or {}
    return {key: _as_compose_runs_it(value, shell) for key, value in raw.items()}


def _example_env() -> dict[str, str]:
    lines = [line for line in SECRETS_EXAMPLE.read_text().splitlines() if line and not line.startswith("#")]
    return dict(line.split("=", 1) for line in lines)


def test_compose_publishes_the_gateway_on_loopback_only():
    compose = yaml.safe_load(COMPOSE.read_text())
    published = {name: s["ports"] for name, s in compose["services"].items() if "ports" in s}
    assert list(published) == ["gateway"]
    (mapping,) = published["gateway"]
    assert _as_compose_runs_it(mapping, {}) == "127.0.0.1:8000:8000"


@pytest.mark.parametrize("service", SETTINGS)
def test_compose_placeholders_stop_each_service_unless_dev(service):
    env = _environment(service, {})  # an empty shell: every default applies
    assert env["DEV"] == "0", "the demo mode comes from the shell only"
    shipped = {key for key, value in env.items() if is_placeholder(value)}
    assert shipped, f"{service}: compose gives it no placeholder?"
    with pytest.raises(SettingsError) as refused:
        load_settings(SETTINGS[service], env)
    assert all(name in str(refused.value) for name in shipped), (shipped, str(refused.value))
    assert "DEV=1" in str(refused.value)
    assert load_settings(SETTINGS[service], _environment(service, {"DEV": "1"})).dev is True


def test_real_secrets_start_without_dev():
    shell = {
        "POSTGRES_PASSWORD": secrets.token_urlsafe(24),
        "INTERNAL_TOKEN": secrets.token_urlsafe(32),
        "KEY_ENCRYPTION_KEY": new_kek(),
        "ADMIN_TOKEN": secrets.token_urlsafe(32),
        "RS_CLIENT_SECRET": secrets.token_urlsafe(32),
    }
    for service, cls in SETTINGS.items():
        env = _environment(service, shell)
        assert not any(is_placeholder(v) for v in env.values()), service
        assert load_settings(cls, env).dev is False


def test_the_dev_overlays_example_secrets_are_refused_without_dev():
    example = _example_env()
    with pytest.raises(SettingsError) as refused:
        load_settings(AuthzSettings, example)
    for name in ("DATABASE_URL", "KEY_ENCRYPTION_KEY", "INTERNAL_TOKEN", "ADMIN_TOKEN"):
        assert name in str(refused.value)
    with pytest.raises(SettingsError, match="RS_CLIENT_SECRET"):
        load_settings(ResourceSettings, example)
    assert load_settings(AuthzSettings, {**example, "DEV": "1"}).dev is True
    # Only the dev overlay turns the demo mode on; the base and prod leave it off.
    dev = yaml.safe_load((DEPLOY / "k8s" / "overlays" / "dev" / "kustomization.yaml").read_text())
    (config,) = dev["configMapGenerator"]
    assert "DEV=1" in config["literals"]
    for path in ("k8s/base/kustomization.yaml", "k8s/overlays/prod/kustomization.yaml"):
        assert "DEV=" not in (DEPLOY / path).read_text(), path


@pytest.mark.parametrize(
    ("command", "service"),
    [
        (["-m", "courseschool.authz", "serve", "--host", "127.0.0.1"], "authz"),
        (["-m", "courseschool.resource_api", "serve", "--host", "127.0.0.1"], "resource-api"),
        (["-m", "courseschool.platform", "migrate"], "migrate"),
    ],
)
def test_a_service_started_with_compose_placeholders_exits_2(command, service, tmp_path):
    env = {k: v for k, v in os.environ.items() if k.upper() not in {"DEV", "DATABASE_URL", "REDIS_URL"}}
    env.update(_environment(service, {}))
    env.update(REDIS_URL="redis://127.0.0.1:9/0")  # never reached: the settings are refused first
    port = ["--port", str(free_port())] if "serve" in command else []
    done = subprocess.run(
        [sys.executable, *command, *port], env=env, capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert done.returncode == 2, (done.stdout[-2000:], done.stderr[-2000:])
    assert done.stderr.startswith("configuration error:") and "change-me" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
