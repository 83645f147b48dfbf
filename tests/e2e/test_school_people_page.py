"""Issue 40 item 5 in real Chromium: a school's owner invites a lecturer from the school's
people page (/oauth/school/people), sees the invitation listed, is refused an address of
the school's people with the form kept, and the invited lecturer follows the e-mailed
link (caught by the platform's mail catcher, as `make run` keeps it), chooses a password
and is signed in. Each state of the page is looked at (both themes, desktop and phone
width: contrast, axe-core, focus, screenshots) by `look` from test_pages_look.py."""

from __future__ import annotations

import secrets
from typing import Any

import pytest

from .conftest import Platform
from .test_pages_look import VIEWPORTS, _admin, _mailed_link, _sign_in, axe_source, device, look, lowest  # noqa: F401

pytestmark = pytest.mark.browser


async def test_an_owner_invites_a_lecturer_who_signs_up_through_the_link(
    platform: Platform,
    device: tuple[str, Any],  # noqa: F811
    browser: Any,
    lowest: dict,  # noqa: F811
    database_url: str,
    redis_url: str,
    kek: str,
) -> None:
    from playwright.async_api import expect

    width, ctx = device
    slug = f"people-{width}-{secrets.token_hex(3)}"
    _admin(database_url, redis_url, kek, "schools", "create", "--slug", slug, "--name", "Riverside Academy")
    owner, password = f"owner-{secrets.token_hex(4)}@example.test", secrets.token_urlsafe(18)
    _admin(
        database_url,
        redis_url,
        kek,
        *("users", "create", "--school", slug, "--email", owner, "--name", "Olga Owner", "--role", "owner"),
        f"--password={password}",
    )

    page = await ctx.new_page()
    await page.goto(f"{platform.base_url}/oauth/school/security")
    await _sign_in(page, owner, password)
    await page.get_by_role("link", name="Invite people").click()
    await expect(page.get_by_role("heading", name="Invite people to Riverside Academy")).to_be_visible()
    await expect(page.locator("#role-owner")).to_have_count(0)
    await look(page, "school-people", width, lowest)

    invited = f"lecturer-{width}-{secrets.token_hex(3)}@example.test"
    await page.get_by_label("Their e-mail address").fill(invited)
    await page.get_by_label("Their name").fill("Lin Lecturer")
    await page.locator("#role-lecturer").check()
    await page.get_by_role("button", name="Send the invitation").click()
    await expect(page.get_by_role("status")).to_contain_text("The invitation is on its way")
    row = page.get_by_role("row").filter(has_text=invited)
    await expect(row).to_contain_text("lecturer")
    await look(page, "school-people-invited", width, lowest)

    await page.get_by_label("Their e-mail address").fill(owner)
    await page.get_by_label("Their name").fill("Olga Again")
    await page.get_by_role("button", name="Send the invitation").click()
    await expect(page.get_by_role("alert")).to_contain_text("is already one of the school's people")
    await expect(page.get_by_label("Their name")).to_have_value("Olga Again")
    await look(page, "school-people-refused", width, lowest)

    newcomer = await browser.new_context(viewport=VIEWPORTS[width], color_scheme="light")
    try:
        joining = await newcomer.new_page()
        await joining.goto(await _mailed_link(platform, invited))
        await expect(joining.get_by_role("heading", name="Choose your password")).to_be_visible()
        chosen = secrets.token_urlsafe(18)
        await joining.get_by_label("Password", exact=True).fill(chosen)
        await joining.get_by_label("The same password again").fill(chosen)
        await joining.get_by_role("button", name="Set my password and sign in").click()
        await expect(joining.get_by_text("Welcome to Course School")).to_be_visible()
        await expect(joining.get_by_text(invited)).to_be_visible()
    finally:
        await newcomer.close()
    await page.reload()
    await expect(page.get_by_role("row").filter(has_text=invited)).to_have_count(0)
