"""What the client kit's end-to-end tests share: the CLI run as a tool author's user runs
it (its own home folder, a keyring backend of the tests or the file), and the person at
Chromium who signs in and approves."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..support.deployment import REPO

TIMEOUT = 60.0
KEYRING_BACKEND = "tests.client.keyring_backend.FileBackedKeyring"


@dataclass
class Kit:
    """One user's computer: the client's folder, its keyring, what its browser was asked to open."""

    home: Path
    keyring: bool = True
    env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # home is made by the library itself (0700), on its first write
        self.opened = self.home.parent / f"{self.home.name}-opened.txt"
        self.keyring_file = self.home.parent / f"{self.home.name}-keyring.json"
        self.env = {k: v for k, v in os.environ.items() if k not in ("PYTHON_KEYRING_BACKEND", "BROWSER")}
        self.env.update(
            COURSESCHOOL_CLIENT_HOME=str(self.home),
            OPENED_URLS=str(self.opened),
            BROWSER=f"{sys.executable} {REPO / 'tests' / 'client' / 'open_url.py'} %s",
            PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
            TEST_KEYRING_FILE=str(self.keyring_file),
        )
        if self.keyring:
            self.env["PYTHON_KEYRING_BACKEND"] = KEYRING_BACKEND
        else:
            self.env["COURSESCHOOL_STORAGE"] = "file"

    def run(self, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "courseschool_client", "-v", *args],
            env=self.env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )

    async def start(self, *args: str) -> asyncio.subprocess.Process:
        return await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "courseschool_client",
            "-v",
            *args,
            env=self.env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )

    async def next_opened(self, seen: int = 0) -> str:
        """The next address the program asked the browser to open."""
        for _ in range(int(TIMEOUT * 10)):
            lines = self.opened.read_text().splitlines() if self.opened.exists() else []
            if len(lines) > seen:
                return lines[seen]
            await asyncio.sleep(0.1)
        raise AssertionError("the program opened no browser")


async def approve(page: Any, url: str, email: str, password: str, *, button: str = "Allow") -> None:
    """The person: open the address, sign in when asked, answer the consent page."""
    from playwright.async_api import expect

    await page.goto(url)
    password_field = page.get_by_label("Password")
    allow = page.get_by_role("button", name=button)
    await expect(password_field.or_(allow)).to_be_visible()
    if await password_field.count():
        await page.get_by_label("Email").fill(email)
        await password_field.fill(password)
        await page.get_by_role("button", name="Sign in").click()
    allowed_before = page.locator("details.group summary", has_text="Allowed before")
    await expect(allow).to_be_visible()
    if await allowed_before.count():
        await allowed_before.click()
    await allow.click()


class Person:
    """The browser opener the library takes (`webbrowser.open` by default), played by a
    person at Chromium: each address the program asks to open is signed in and approved
    on one page; `asked` lists the addresses. Called from the library's thread."""

    def __init__(self, page: Any, email: str, password: str) -> None:
        self.page, self.email, self.password = page, email, password
        self.asked: list[str] = []
        self._loop = asyncio.get_running_loop()

    def __call__(self, url: str) -> bool:
        self.asked.append(url)
        asyncio.run_coroutine_threadsafe(approve(self.page, url, self.email, self.password), self._loop)
        return True

    async def login(self, base_url: str, kit: Kit, **options: Any) -> Any:
        """`CourseSchool.login` as a tool calls it, tokens kept in the kit's file, this
        person approving (`openid courses:read` unless `scope` is given)."""
        from courseschool_client import CourseSchool

        options = {"scope": "openid courses:read", "storage": "file", "folder": kit.home, **options}
        return await asyncio.to_thread(CourseSchool.login, base_url, open_browser=self, **options)


@contextlib.asynccontextmanager
async def person_at(browser: Any, email: str, password: str) -> AsyncIterator[Person]:
    """A person at a browser context of their own, closed afterwards."""
    context = await browser.new_context()
    try:
        yield Person(await context.new_page(), email, password)
    finally:
        await context.close()
