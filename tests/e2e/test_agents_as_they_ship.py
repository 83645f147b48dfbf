"""Agents as they ship (issue 36), in a real browser (headless Chromium) against the
running platform.

VS Code publishes one Client ID Metadata Document for every authorization server it
talks to: a loopback redirect without a path and an HTTPS web redirect, the device grant
beside the code and refresh grants. The platform reads it liberally and uses it
strictly: the loopback sign-in works (on another port, RFC 8252 §7.3); a request naming
the web redirect gets the error page and is never redirected.

The consent page follows its boxes: an area whose "including changes" box is unticked
reads "see", and the grant holds only the read scope."""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

import httpx
import pytest

from ..support.oauth_client import authorization_request, discover, exchange_code
from ..support.tls import HttpsServer, Reply
from .conftest import CallbackServer, Platform, create_person
from .test_connected_apps import cimd_platform, document_site  # noqa: F401 - fixtures shared with that module

pytestmark = pytest.mark.browser

TIMEOUT_MS = 15_000
WEB_REDIRECT = "https://vscode.dev/redirect"


def _publish_vscode_shaped(server: HttpsServer) -> str:
    """A document shaped like the one VS Code publishes (its fields and their forms, with
    the test site's URL as client_id); the URL."""
    path = f"/oauth/{secrets.token_hex(4)}/client-metadata.json"
    client_id = server.url(path)
    document = {
        "client_id": client_id,
        "client_name": "Visual Studio Code",
        "client_uri": "https://code.visualstudio.com/",
        "logo_uri": "https://code.visualstudio.com/assets/favicon.ico",
        "tos_uri": "https://code.visualstudio.com/license",
        "policy_uri": "https://go.microsoft.com/fwlink/?LinkId=521839",
        "redirect_uris": ["http://127.0.0.1:33418", WEB_REDIRECT],
        "grant_types": ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "application_type": "native",
    }
    server.replies[path] = Reply(
        json.dumps(document).encode(), headers={"Content-Type": "application/json", "Cache-Control": "max-age=600"}
    )
    return client_id


async def test_a_vscode_shaped_document_signs_in_through_its_loopback_redirect(
    cimd_platform: Platform,  # noqa: F811
    document_site: tuple[HttpsServer, Path],  # noqa: F811
    callback_server: CallbackServer,
    browser: Any,
    database_url: str,
    redis_url: str,
    kek: str,
) -> None:
    from playwright.async_api import expect

    server, _ = document_site
    client_id = _publish_vscode_shaped(server)
    email, password = create_person(database_url, redis_url, kek, name="Vera Code", role="owner")
    callback_server.path = "/"  # VS Code's loopback redirect has no path; the browser asks for "/"
    loopback = f"http://127.0.0.1:{callback_server.port}"  # another port than the document's (RFC 8252 §7.3)
    reg = {"client_id": client_id}
    ctx = await browser.new_context()
    ctx.set_default_timeout(TIMEOUT_MS)
    try:
        async with httpx.AsyncClient(timeout=15.0) as http:
            meta = await discover(http, cimd_platform.base_url)
            page = await ctx.new_page()

            # The web redirect is ignored: naming it gets our error page, never a redirect.
            refused = authorization_request(meta, reg, WEB_REDIRECT, scope="openid courses:read")
            answer = await page.goto(refused["url"])
            assert answer is not None and answer.status == 400
            assert page.url.startswith(cimd_platform.base_url + "/")
            await expect(page.get_by_role("heading", level=1)).to_be_visible()
            await expect(page.locator("body")).not_to_contain_text("vscode.dev/redirect")

            request = authorization_request(meta, reg, loopback, scope="openid profile courses:read")
            await page.goto(request["url"])
            await page.get_by_label("Email").fill(email)
            await page.get_by_label("Password").fill(password)
            await page.get_by_role("button", name="Sign in").click()
            await expect(page.get_by_role("heading", level=1)).to_contain_text("Allow this app to access")
            await expect(page.locator("body")).to_contain_text("Visual Studio Code")
            await expect(page.locator("body")).not_to_contain_text("device")
            await page.get_by_role("button", name="Allow").click()
            callback = await callback_server.wait(TIMEOUT_MS / 1000)
            assert callback["iss"] == cimd_platform.base_url and callback["state"] == request["state"]
            tokens = await exchange_code(http, meta, reg, request, callback["code"])
            assert tokens.status_code == 200, tokens.text
            assert tokens.json()["scope"] == "openid profile courses:read"
            read = await http.get(
                f"{cimd_platform.base_url}/api/v1/courses",
                headers={"Authorization": f"Bearer {tokens.json()['access_token']}"},
            )
            assert read.status_code == 200, read.text
            # The device grant the document listed is never offered to it.
            device = await http.post(
                meta["token_endpoint"],
                data={"grant_type": "urn:ietf:params:oauth:grant-type:device_code", "client_id": client_id},
            )
            assert device.status_code == 400 and device.json()["error"] == "unsupported_grant_type"
    finally:
        await ctx.close()
    callback_server.assert_idle()


async def test_the_consent_page_reads_as_its_boxes_say(
    platform: Platform, callback_server: CallbackServer, browser: Any, database_url: str, redis_url: str, kek: str
) -> None:
    """Unticking "including changes" makes the line read "see", and the grant holds only
    the read scope of that area (no script needed for the grant; the words follow in CSS)."""
    from playwright.async_api import expect

    from ..support.oauth_client import register

    email, password = create_person(database_url, redis_url, kek, name="Tick Boxes", role="owner")
    ctx = await browser.new_context()
    ctx.set_default_timeout(TIMEOUT_MS)
    try:
        async with httpx.AsyncClient(timeout=15.0) as http:
            meta = await discover(http, platform.base_url)
            reg = await register(http, meta, callback_server.url, client_name="Box Reader")
            request = authorization_request(meta, reg, callback_server.url, scope="openid courses:read courses:write")
            page = await ctx.new_page()
            await page.goto(request["url"])
            await page.get_by_label("Email").fill(email)
            await page.get_by_label("Password").fill(password)
            await page.get_by_role("button", name="Sign in").click()
            courses = page.locator("li").filter(has=page.get_by_label("including changes"))
            await expect(courses.locator("label").first).to_contain_text("Courses: see and change")
            await page.get_by_label("including changes").uncheck()
            line = await courses.locator("label").first.inner_text()
            assert " ".join(line.split()) == "Courses: see", line
            await page.get_by_role("button", name="Allow").click()
            callback = await callback_server.wait(TIMEOUT_MS / 1000)
            await expect(page.get_by_text("You can close this window")).to_be_visible()  # closed once loaded
            tokens = await exchange_code(http, meta, reg, request, callback["code"])
            assert tokens.status_code == 200 and tokens.json()["scope"] == "openid courses:read", tokens.text
    finally:
        await ctx.close()
