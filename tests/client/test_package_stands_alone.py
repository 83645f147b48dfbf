"""libs/client is what tool authors install: it depends on httpx and keyring only
(cryptography for DPoP, an extra) and imports nothing of the platform's services; its
modules stay short enough to read."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib

from ..support.deployment import REPO

PACKAGE = REPO / "libs" / "client"
SOURCE = PACKAGE / "src" / "courseschool_client"


def test_it_declares_httpx_and_keyring_only() -> None:
    project = tomllib.loads((PACKAGE / "pyproject.toml").read_text())["project"]
    assert project["dependencies"] == ["httpx", "keyring"]
    assert project["optional-dependencies"] == {"dpop": ["cryptography"]}
    assert project["scripts"] == {"courseschool-client": "courseschool_client.cli:main"}
    assert (SOURCE / "py.typed").exists() and (PACKAGE / "README.md").exists()


def test_no_module_imports_the_services_and_each_is_under_300_lines() -> None:
    allowed = {"httpx", "keyring", "cryptography"} | set(sys.stdlib_module_names)
    for module in SOURCE.glob("*.py"):
        text = module.read_text()
        assert len(text.splitlines()) < 300, f"{module.name} is over 300 lines"
        for node in ast.walk(ast.parse(text)):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                assert name.split(".")[0] in allowed, f"{module.name} imports {name}"


def test_importing_it_loads_nothing_of_the_platform() -> None:
    probe = (
        "import sys, courseschool_client, courseschool_client.cli; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'courseschool'))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]", done.stdout
