"""Every way the shipped files start a server replaces a worker that dies: they run
`python -m courseschool.<service> serve` (granian with `respawn_failed_workers`,
common/cli.py) or granian's command line with `--respawn-failed-workers`; none runs
granian or uvicorn in another way. tests/faults/test_workers.py kills a worker of each
under load."""

from __future__ import annotations

import ast
import json
import re
import shlex
from typing import Any

import yaml

from ..support.deployment import COMPOSE, DEPLOY, REPO, documented_granian_commands

CLI = REPO / "libs" / "common" / "src" / "courseschool" / "common" / "cli.py"
SERVE = re.compile(r"^python -m courseschool\.(authz|resource_api|discovery) serve( |$)")


def _dockerfile_commands() -> list[list[str]]:
    text = (DEPLOY / "Dockerfile").read_text()
    return [json.loads(m.group(2)) for m in re.finditer(r"^(CMD|ENTRYPOINT) (\[.*\])$", text, re.M)]


def _compose_commands() -> list[list[str]]:
    services = yaml.safe_load(COMPOSE.read_text())["services"]
    return [[str(a) for a in s["command"]] for s in services.values() if isinstance(s.get("command"), list)]


def _containers(doc: Any) -> list[dict[str, Any]]:
    spec = (doc or {}).get("spec", {})
    template = spec.get("template") or spec.get("jobTemplate", {}).get("spec", {}).get("template") or {}
    pod = template.get("spec", {})
    return [*pod.get("containers", []), *pod.get("initContainers", [])]


def _k8s_commands() -> list[list[str]]:
    commands = []
    for path in sorted((DEPLOY / "k8s").rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            for container in _containers(doc):
                command = [*container.get("command", []), *container.get("args", [])]
                if command:
                    commands.append([str(a) for a in command])
    return commands


def _servers(commands: list[list[str]]) -> list[str]:
    """The commands that start an HTTP server of ours, as one line each."""
    lines = [shlex.join(c) for c in commands]
    return [line for line in lines if " serve" in line or "granian" in line or "uvicorn" in line]


def _respawns(line: str) -> bool:
    if SERVE.match(line):
        return True
    return line.startswith("granian ") and "--respawn-failed-workers" in shlex.split(line)


def test_every_shipped_server_command_replaces_a_dead_worker() -> None:
    for name, commands in {
        "Dockerfile": _dockerfile_commands(),
        "compose.yaml": _compose_commands(),
        "k8s": _k8s_commands(),
    }.items():
        servers = _servers(commands)
        assert servers, f"{name}: no server command found"
        assert all(_respawns(line) for line in servers), (name, servers)


def test_the_documented_granian_command_line_replaces_a_dead_worker() -> None:
    commands = documented_granian_commands()
    assert commands and all("--respawn-failed-workers" in command for command in commands), commands


def test_serve_runs_granian_with_failed_workers_respawned() -> None:
    """The one place `serve` and `run` build granian's server."""
    tree = ast.parse(CLI.read_text())
    serve_app = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "serve_app")
    servers = [n for n in ast.walk(serve_app) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "_Server"]
    assert len(servers) == 1
    options = {k.arg: k.value for k in servers[0].keywords}
    assert isinstance(options["respawn_failed_workers"], ast.Constant)
    assert options["respawn_failed_workers"].value is True


def test_platform_readme_documents_the_respawning_command() -> None:
    readme = (REPO / "platform" / "README.md").read_text()
    assert "--respawn-failed-workers" in readme
