"""The recipes of auth.md's "In your own program", taken from the served document and run
as written: the platform's library (its browser opened through `BROWSER`, driven in
Chromium), Authlib and oauth4webapi (each prints the address, the person approves in
Chromium, the address the browser ended at is typed back). The README shows the same
library recipe."""

from __future__ import annotations

import asyncio
import re
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest

from ..client.kit import REPO, Kit, approve
from ..support.npm import npm_ci
from .conftest import Platform, create_person

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("npm-clients")]
SECTION = re.compile(r"^## In your own program\n(.*?)(?=^## )", re.M | re.S)
BLOCK = re.compile(r"^```(python|js)\n(.*?)^```$", re.M | re.S)
CLIENTS = REPO / "tests" / "clients"


async def recipes(platform: Platform) -> list[tuple[str, str]]:
    async with httpx.AsyncClient(timeout=15.0) as http:
        doc = (await http.get(f"{platform.base_url}/auth.md")).text
    found = SECTION.search(doc)
    assert found, "auth.md has no section 'In your own program'"
    blocks = BLOCK.findall(found.group(1))
    assert [language for language, _ in blocks] == ["python", "python", "js"], blocks
    return blocks


def test_the_readme_shows_the_library_recipe_of_auth_md() -> None:
    readme = (REPO / "README.md").read_text()
    template = (REPO / "services/discovery/src/courseschool/discovery/templates/auth.md").read_text()
    library = BLOCK.findall(SECTION.search(template).group(1))[0][1]  # type: ignore[union-attr]
    assert library.replace("{{ base_url }}", "http://127.0.0.1:8000") in readme


async def run_pasting(command: list[str], kit: Kit, page: Any, person: tuple[str, str], cwd: Path | None = None) -> str:
    """Run a recipe that prints `Open: <url>` and reads the final address on stdin."""
    env = dict(kit.env, PYTHONUNBUFFERED="1")
    process = await asyncio.create_subprocess_exec(
        *command,
        env=env,
        cwd=cwd,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None and process.stdin is not None
    line = (await asyncio.wait_for(process.stdout.readline(), 60)).decode()
    assert line.startswith("Open: "), line
    landed: list[str] = []
    page.on("request", lambda r: landed.append(r.url) if "/callback?" in r.url else None)
    await approve(page, line.removeprefix("Open: ").strip(), *person)
    for _ in range(100):
        if landed:
            break
        await asyncio.sleep(0.1)
    assert landed, "the browser did not end at the callback address"
    out, err = await asyncio.wait_for(process.communicate(landed[0].encode() + b"\n"), 60)
    assert process.returncode == 0, out.decode() + err.decode()
    return out.decode()


async def test_the_recipes_run_as_written(
    platform: Platform, browser: Any, database_url: str, redis_url: str, kek: str, tmp_path: Path
) -> None:
    person = create_person(database_url, redis_url, kek, name="Kit Reader", role="lecturer")
    library, authlib, js = (code for _, code in await recipes(platform))

    # The library: the browser opens (BROWSER hands the address over), the person approves.
    kit = Kit(tmp_path / "home")
    context = await browser.new_context()
    page = await context.new_page()
    import sys

    run = await asyncio.create_subprocess_exec(
        sys.executable, "-c", library, env=kit.env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    await approve(page, await kit.next_opened(), *person)
    out, err = await asyncio.wait_for(run.communicate(), 60)
    assert run.returncode == 0, err.decode()
    assert out.decode().startswith("["), out.decode()
    again = await asyncio.create_subprocess_exec(
        sys.executable, "-c", library, env=kit.env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    assert (await asyncio.wait_for(again.communicate(), 60))[0] == out, "the second run reuses the sign-in"
    assert len(kit.opened.read_text().splitlines()) == 1, "no browser the second time"

    # Authlib, as pasted.
    said = await run_pasting([sys.executable, "-c", authlib], kit, page, person)
    assert "Address the browser ended at: [" in said, said
    await context.close()

    # oauth4webapi, as pasted, where node is installed.
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are not installed: the oauth4webapi recipe needs Node 20 (tests/clients)")
    npm_ci(CLIENTS, CLIENTS / "node_modules" / "oauth4webapi" / "package.json")
    script = CLIENTS / f"recipe-{tmp_path.name}.mjs"
    script.write_text(js)
    context = await browser.new_context()
    try:
        said = await run_pasting(["node", str(script)], kit, await context.new_page(), person, cwd=CLIENTS)
    finally:
        script.unlink()
        await context.close()
    assert "school_id:" in said, said  # the courses, as node prints them
