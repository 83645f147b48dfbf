"""How the login, consent and error pages look, in real Chromium, in both colour schemes.

For every page, with `prefers-color-scheme` light and dark, at a desktop and a phone
width, the tests read the computed colours of every element that shows text, and of
every form control, and check them against WCAG 2.x AA:

- text: 4.5:1 against the background it is painted on, 3:1 for large text (24 px, or
  18.66 px bold);
- the boundary of a form control (input border, button border or fill): 3:1 against
  what surrounds it (WCAG 1.4.11);
- the keyboard focus ring, reached with Tab: a solid outline of at least 2 px, 3:1
  against what surrounds it.

The background of an element is worked out the way the browser paints it: every
ancestor's background colour from the root down, with alpha and `opacity`, composited
(background images are refused: their colours cannot be read this way). Relative
luminance and contrast ratio are computed here, from the WCAG definitions.

Geometry: no horizontal overflow at either width, the consent page's Allow and Deny
buttons the same height on the same line, controls at least 24 px tall (WCAG 2.5.8).

axe-core (Deque's accessibility engine, pinned in tests/browser/package.json, installed
there with `npm ci` by the `axe_source` fixture) is loaded into every page the tests look
at, and must report no violation, of any impact, in either colour scheme at either
width: WCAG 2.0 to 2.2 A and AA and axe's best practices (landmarks, one h1, no timed
refresh, labels, contrast computed its own way).

Every page is also photographed, full length, into test-artifacts/screenshots/
as `<page>-<theme>-<width>.png` for a person to look at; the lowest contrast ratios
found are written to test-artifacts/contrast.txt, axe's findings (and the rules it
checked) to test-artifacts/axe.txt.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from ..support.npm import npm_ci
from ..support.oauth_client import SCOPE, authorization_request, discover, register
from .conftest import CallbackServer, Platform, admin_cli, create_person

# pytest-xdist: one worker: the module's fixture writes test-artifacts/contrast.txt from all of its tests.
pytestmark = pytest.mark.xdist_group("pages-look")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
BROWSER_TOOLS = Path(__file__).resolve().parents[1] / "browser"
AXE_SCRIPT = BROWSER_TOOLS / "node_modules" / "axe-core" / "axe.min.js"
# axe's findings per (page, theme, width): violations, and the ids of the rules that passed
# and that axe could not decide (written to test-artifacts/axe.txt by `axe_report`).
AXE_FOUND: dict[tuple[str, str, str], dict[str, Any]] = {}
SCREENSHOTS = ARTIFACTS / "screenshots"
THEMES = ("light", "dark")
VIEWPORTS = {"1280": {"width": 1280, "height": 800}, "390": {"width": 390, "height": 844}}
TIMEOUT_MS = 15_000

TEXT_AA, LARGE_TEXT_AA, NON_TEXT_AA = 4.5, 3.0, 3.0
LARGE_PX, LARGE_BOLD_PX = 24.0, 14 * 96 / 72  # 18 pt, 14 pt bold
MIN_TARGET_PX = 24.0
MIN_FOCUS_RING_PX = 2.0

CLIENT_NAME = "E2E Look CLI"
# As long as registration allows (200 characters), with a word too long for a phone's line.
LONG_CLIENT_NAME = (
    "Faculty of Continuing Education Quarterly Enrolment, Attendance and Certificates Synchroniser "
    "(Desktop Edition) — HyperExtendedAutomaticCourseCatalogueSynchronisationAssistant2000 for staff"
)
assert len(LONG_CLIENT_NAME) <= 200

RGB = tuple[float, float, float]
RGBA = tuple[float, float, float, float]


# -- WCAG 2.x arithmetic ------------------------------------------------------------------------


def _linear(channel: float) -> float:
    # WCAG 2.2's definition of relative luminance (sRGB; 0.04045, where WCAG 2.0 printed
    # 0.03928: no 8-bit value falls between the two).
    c = channel / 255
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def relative_luminance(rgb: RGB) -> float:
    r, g, b = (_linear(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(a: RGB, b: RGB) -> float:
    lighter, darker = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def _over(src: RGBA, dst: RGB) -> RGB:
    """Source-over compositing of a colour with alpha on an opaque one."""
    alpha = src[3]
    return tuple(s * alpha + d * (1 - alpha) for s, d in zip(src[:3], dst, strict=True))  # type: ignore[return-value]


def paint(layers: list[dict[str, Any]], top: RGBA | None = None) -> RGB:
    """The colour of one pixel of the innermost element: `layers` runs from the root element
    down to it (background colour, opacity); `top` is what the element draws over its own
    background (a glyph, a border), or nothing for the background itself.

    Each element's background goes over what is behind it, its content over that, and the
    whole group is then blended with the element's `opacity` onto what is behind it."""

    def level(i: int, behind: RGB) -> RGB:
        inside = _over(tuple(layers[i]["bg"]), behind)  # type: ignore[arg-type]
        if i + 1 < len(layers):
            inside = level(i + 1, inside)
        elif top is not None:
            inside = _over(top, inside)
        opacity = layers[i]["opacity"]
        return tuple(o * opacity + b * (1 - opacity) for o, b in zip(inside, behind, strict=True))  # type: ignore[return-value]

    # The canvas behind the root; every page must cover it (checked in `_page_background`).
    return level(0, (255.0, 255.0, 255.0))


def is_large_text(size_px: float, weight: int) -> bool:
    return size_px >= LARGE_PX or (size_px >= LARGE_BOLD_PX - 0.01 and weight >= 700)


def hex_of(rgb: RGB) -> str:
    return "#" + "".join(f"{round(c):02x}" for c in rgb)


def test_contrast_arithmetic() -> None:
    """The formulas above against figures published with WCAG and by the browser vendors."""
    white, black = (255.0, 255.0, 255.0), (0.0, 0.0, 0.0)
    assert contrast_ratio(white, black) == pytest.approx(21.0)
    assert contrast_ratio(black, white) == pytest.approx(21.0)
    assert contrast_ratio((118.0, 118.0, 118.0), white) == pytest.approx(4.54, abs=0.01)  # #767676: AA on white
    assert contrast_ratio((119.0, 119.0, 119.0), white) < 4.5  # #777777: not
    # The dark-mode bug this file was written for: near-white text on the white card.
    assert contrast_ratio((230.0, 231.0, 234.0), white) == pytest.approx(1.24, abs=0.01)
    page = [{"bg": (255, 255, 255, 1.0), "opacity": 1.0}, {"bg": (0, 0, 0, 0.0), "opacity": 0.5}]
    assert paint(page, (0, 0, 0, 1.0)) == pytest.approx((127.5, 127.5, 127.5))  # opacity .5: mid grey
    assert paint(page) == pytest.approx(white)
    assert paint([{"bg": (0, 0, 0, 1.0), "opacity": 1.0}, {"bg": (255, 255, 255, 0.5), "opacity": 1.0}]) == (
        pytest.approx((127.5, 127.5, 127.5))
    )
    assert is_large_text(24, 400) and is_large_text(18.67, 700)
    assert not is_large_text(21.6, 400) and not is_large_text(18, 700)


# -- what the browser reports -----------------------------------------------------------------

# Shared by the two scripts below: colours normalised through a canvas (whatever syntax
# the computed style uses), the chain of backgrounds from the root down, visibility.
_JS_HELPERS = """
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = 1;
  const ctx = canvas.getContext('2d', {willReadFrequently: true});
  const rgba = (value) => {
    ctx.clearRect(0, 0, 1, 1);
    ctx.fillStyle = 'rgba(0, 0, 0, 0)';
    ctx.fillStyle = value;
    ctx.fillRect(0, 0, 1, 1);
    const d = ctx.getImageData(0, 0, 1, 1).data;
    return [d[0], d[1], d[2], d[3] / 255];
  };
  const layers = (el) => {
    const out = [];
    for (let e = el; e; e = e.parentElement) {
      const cs = getComputedStyle(e);
      out.unshift({tag: e.tagName.toLowerCase(), bg: rgba(cs.backgroundColor), css: cs.backgroundColor,
                   opacity: parseFloat(cs.opacity), image: cs.backgroundImage !== 'none'});
    }
    return out;
  };
  // checkVisibility: the content of a closed <details> keeps a box in Chromium (it is
  // skipped with content-visibility, so Tab cannot reach it), but is not shown.
  const visible = (el) => {
    const cs = getComputedStyle(el);
    const box = el.getBoundingClientRect();
    return cs.display !== 'none' && cs.visibility === 'visible' && box.width > 0 && box.height > 0
      && el.checkVisibility({contentVisibilityAuto: true});
  };
  const describe = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '')
    + [...el.classList].map((c) => '.' + c).join('')
    + (el.name ? `[name=${el.name}]` : '') + (el.tagName === 'BUTTON' && el.value ? `[value=${el.value}]` : '');
  const CONTROLS = 'input:not([type=hidden]), textarea, select, button';
  const FOCUSABLE = 'a[href], input:not([type=hidden]), textarea, select, button, summary, [tabindex]:not([tabindex="-1"])';
"""

MEASURE_JS = (
    "() => {"
    + _JS_HELPERS
    + """
  const texts = [];
  for (const el of document.body.querySelectorAll('*')) {
    if (!visible(el)) continue;
    const own = [...el.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE)
      .map((n) => n.textContent).join('').replace(/\\s+/g, ' ').trim();
    const field = el.matches('input:not([type=hidden]):not([type=checkbox]):not([type=radio]), textarea, select');
    if (!own && !field) continue;
    const cs = getComputedStyle(el);
    texts.push({what: describe(el), text: own ? own.slice(0, 50) : `(${el.type} field)`, color: rgba(cs.color),
                css: cs.color, size: parseFloat(cs.fontSize), weight: parseInt(cs.fontWeight, 10),
                layers: layers(el)});
  }
  const controls = [];
  for (const el of document.body.querySelectorAll(CONTROLS)) {
    if (!visible(el)) continue;
    const cs = getComputedStyle(el);
    const box = el.getBoundingClientRect();
    controls.push({what: describe(el), border: rgba(cs.borderTopColor), borderCss: cs.borderTopColor,
                   borderWidth: parseFloat(cs.borderTopWidth), borderStyle: cs.borderTopStyle,
                   height: box.height, layers: layers(el)});
  }
  // A radio group is one stop of the Tab key (arrow keys move within it): its checked
  // radio, or its first when none is.
  const oneStop = (el) => el.type !== 'radio' || !el.name || el === (
    document.querySelector(`input[type=radio][name="${el.name}"]:checked`)
    || document.querySelector(`input[type=radio][name="${el.name}"]`));
  const focusable = [...document.querySelectorAll(FOCUSABLE)].filter(visible).filter(oneStop).map(describe);
  const root = document.documentElement;
  const card = document.querySelector('main');
  return {
    texts, controls, focusable, body: layers(document.body),
    overflow: {page: [root.scrollWidth, root.clientWidth], main: card ? [card.scrollWidth, card.clientWidth] : null},
  };
}"""
)

FOCUSED_JS = (
    "() => {"
    + _JS_HELPERS
    + """
  const el = document.activeElement;
  if (!el || el === document.body || el === document.documentElement) return null;
  const cs = getComputedStyle(el);
  return {what: describe(el), focusVisible: el.matches(':focus-visible'), style: cs.outlineStyle,
          width: parseFloat(cs.outlineWidth), color: rgba(cs.outlineColor), css: cs.outlineColor,
          // The ring is drawn outside the element, over its parent's background.
          around: [...layers(el.parentElement),
                   {tag: 'outline', bg: [0, 0, 0, 0], css: '', opacity: parseFloat(cs.opacity), image: false}]};
}"""
)


# axe-core over the whole document, every rule of its default set (WCAG 2.0-2.2 A and
# AA, best practices); what comes back is kept small: the ids of the rules that passed
# or could not decide, and each violation with the elements it concerns.
AXE_JS = """async () => {
  const r = await axe.run(document, {resultTypes: ['violations']});
  return {
    version: axe.version,
    violations: r.violations.map((v) => ({id: v.id, impact: v.impact, help: v.help, helpUrl: v.helpUrl,
      nodes: v.nodes.map((n) => ({target: n.target.map(String), summary: n.failureSummary || ''}))})),
    passes: r.passes.map((v) => v.id),
    incomplete: r.incomplete.map((v) => v.id),
  };
}"""


async def run_axe(page: Any) -> dict[str, Any]:
    """axe's findings on the page as it is now (AXE_JS). axe-core is loaded into the page
    the first time it is looked at (evaluated through the DevTools protocol, which the
    pages' Content-Security-Policy does not govern; they allow no script of their own),
    not into every page a test opens: parsing its half a megabyte on each navigation was
    a tenth of the browser tests' CPU."""
    if not await page.evaluate("() => Boolean(window.axe)"):
        await page.evaluate(_axe_script())
    return await page.evaluate(AXE_JS)


@functools.cache
def _axe_script() -> str:
    """axe-core's source, read once per process (the `axe_source` fixture installs it)."""
    return AXE_SCRIPT.read_text()


@dataclass
class Measured:
    failures: list[str]
    lowest_text: tuple[float, str]
    lowest_ui: tuple[float, str]


def _background_problems(layers: list[dict[str, Any]], what: str) -> list[str]:
    return [
        f"{what}: background image on {layer['tag']}, its colours cannot be checked"
        for layer in layers
        if layer["image"]
    ]


def _page_background(body_layers: list[dict[str, Any]]) -> list[str]:
    """The page paints its own opaque background (root or body): nothing of the browser's
    default canvas, which follows the colour scheme differently, shows through."""
    if any(layer["bg"][3] >= 1 and layer["opacity"] >= 1 for layer in body_layers):
        return []
    return ["neither html nor body has an opaque background colour"]


def check_measurements(data: dict[str, Any]) -> Measured:
    failures = _page_background(data["body"])
    lowest_text: tuple[float, str] = (99.0, "")
    lowest_ui: tuple[float, str] = (99.0, "")
    for item in data["texts"]:
        failures += _background_problems(item["layers"], item["what"])
        fg, bg = paint(item["layers"], tuple(item["color"])), paint(item["layers"])  # type: ignore[arg-type]
        ratio = contrast_ratio(fg, bg)
        need = LARGE_TEXT_AA if is_large_text(item["size"], item["weight"]) else TEXT_AA
        label = f"{item['what']} {item['text']!r}: {hex_of(fg)} on {hex_of(bg)} = {ratio:.2f}:1"
        lowest_text = min(lowest_text, (ratio, label))
        if ratio < need:
            failures.append(f"text {label}, needs {need}:1")
    for item in data["controls"]:
        own, around = item["layers"], item["layers"][:-1]
        surround = paint(around)
        fill = paint(own)
        candidates = [(contrast_ratio(fill, surround), f"fill {hex_of(fill)}")]
        if item["borderWidth"] > 0 and item["borderStyle"] not in ("none", "hidden"):
            border = paint(own, tuple(item["border"]))  # type: ignore[arg-type]
            candidates.append((contrast_ratio(border, surround), f"border {hex_of(border)}"))
        ratio, how = max(candidates)
        label = f"{item['what']}: {how} against {hex_of(surround)} = {ratio:.2f}:1"
        lowest_ui = min(lowest_ui, (ratio, label))
        if ratio < NON_TEXT_AA:
            failures.append(f"control boundary {label}, needs {NON_TEXT_AA}:1 (border or fill)")
        if item["height"] < MIN_TARGET_PX:
            failures.append(f"{item['what']} is {item['height']:.0f} px tall, below {MIN_TARGET_PX:.0f} px")
    page_width, page_client = data["overflow"]["page"]
    if page_width > page_client:
        failures.append(f"the page scrolls sideways: {page_width} px of content in {page_client} px")
    if data["overflow"]["main"] is not None:
        main_width, main_client = data["overflow"]["main"]
        if main_width > main_client:
            failures.append(f"content overflows the card: {main_width} px in {main_client} px")
    return Measured(failures, lowest_text, lowest_ui)


def check_focus_ring(info: dict[str, Any]) -> tuple[list[str], float, str]:
    what = info["what"]
    if not info["focusVisible"]:
        return [f"{what}: focused with Tab but not :focus-visible"], 0.0, what
    if info["style"] in ("none", "hidden", "auto") or info["width"] < MIN_FOCUS_RING_PX:
        return (
            [
                f"{what}: focus outline {info['style']} {info['width']} px, needs a solid ring of "
                f"{MIN_FOCUS_RING_PX:.0f} px or more"
            ],
            0.0,
            what,
        )
    ring, around = paint(info["around"], tuple(info["color"])), paint(info["around"])  # type: ignore[arg-type]
    ratio = contrast_ratio(ring, around)
    label = f"focus ring of {what}: {hex_of(ring)} against {hex_of(around)} = {ratio:.2f}:1"
    return ([f"{label}, needs {NON_TEXT_AA}:1"] if ratio < NON_TEXT_AA else []), ratio, label


# -- fixtures -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def lowest() -> Iterator[dict[tuple[str, str], dict[str, tuple[float, str]]]]:
    """The lowest ratio per (page, theme) and kind, written out for reviewers at the end."""
    found: dict[tuple[str, str], dict[str, tuple[float, str]]] = {}
    yield found
    if not found:
        return
    lines = [
        "Lowest WCAG contrast ratios found by tests/e2e/test_pages_look.py (AA: text 4.5, large text",
        "and control boundaries 3), over both widths:",
        "",
    ]
    for theme in THEMES:
        entries = {k[0]: v for k, v in found.items() if k[1] == theme}
        for kind in ("text", "control", "focus ring"):
            ratios = [v[kind] for v in entries.values() if kind in v]
            if ratios:
                worst = min(ratios)
                lines.append(f"{theme:5}  {kind:10}  {worst[0]:5.2f}:1  {worst[1]}")
        lines.append("")
    for (page, theme), kinds in sorted(found.items()):
        lines.append(f"{page:14} {theme:5}  " + "  ".join(f"{k} {v[0]:.2f}" for k, v in kinds.items()))
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "contrast.txt").write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="session")
def axe_source() -> str:
    """axe-core's browser build, from tests/browser (`npm ci` there when it is missing)."""
    if not AXE_SCRIPT.exists():
        if shutil.which("npm") is None:
            pytest.skip("npm is not installed: the page checks need axe-core (tests/browser/package.json)")
        npm_ci(BROWSER_TOOLS, AXE_SCRIPT)
    return _axe_script()


def test_axe_core_is_pinned_without_a_registry_address() -> None:
    lock = (BROWSER_TOOLS / "package-lock.json").read_text()
    assert '"resolved"' not in lock and '"node_modules/axe-core"' in lock
    assert "omit-lockfile-registry-resolved=true" in (BROWSER_TOOLS / ".npmrc").read_text()
    pinned = json.loads((BROWSER_TOOLS / "package.json").read_text())["devDependencies"]
    assert pinned["axe-core"][0].isdigit(), pinned
    assert json.loads(lock)["packages"]["node_modules/axe-core"]["version"] == pinned["axe-core"]


@pytest.fixture(scope="module", autouse=True)
def axe_report() -> Iterator[None]:
    """axe's findings per page, theme and width, written out for reviewers at the end."""
    AXE_FOUND.clear()
    yield
    if not AXE_FOUND:
        return
    clean = [key for key, found in AXE_FOUND.items() if not found["violations"]]
    lines = [
        f"axe-core {next(iter(AXE_FOUND.values()))['version']} on every page of tests/e2e/test_pages_look.py, "
        "both colour schemes, both widths.",
        f"{len(clean)} of {len(AXE_FOUND)} page states without a violation; rules that passed somewhere: "
        f"{len(set().union(*(found['passes'] for found in AXE_FOUND.values())))}.",
        "",
    ]
    for (page, theme, width), found in sorted(AXE_FOUND.items()):
        violations = found["violations"]
        lines.append(
            f"{page:20} {theme:5} {width:>4}px  "
            + (f"{len(violations)} violation(s)" if violations else "no violation")
            + f", {len(found['passes'])} rules passed, {len(found['incomplete'])} to review by hand"
        )
        lines += [f"    {line}" for line in _axe_lines(violations)]
        if found["incomplete"]:
            lines.append(f"    needs review (axe could not decide): {', '.join(sorted(found['incomplete']))}")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "axe.txt").write_text("\n".join(lines) + "\n")


def _axe_lines(violations: list[dict[str, Any]]) -> list[str]:
    out = []
    for v in violations:
        out.append(f"{v['id']} ({v['impact']}): {v['help']} [{v['helpUrl']}]")
        out += [
            f"  {' '.join(n['target'])}: {n['summary'].splitlines()[-1] if n['summary'] else ''}" for n in v["nodes"]
        ]
    return out


@pytest.fixture(params=list(VIEWPORTS), ids=[f"{w}px" for w in VIEWPORTS])
async def device(request: pytest.FixtureRequest, browser: Any, axe_source: str) -> AsyncIterator[tuple[str, Any]]:
    """A browser context at one of the two widths; the phone one is a mobile viewport, so a
    missing `<meta name=viewport>` would show as a zoomed-out 980 px layout. (`axe_source`:
    axe-core is there for `look` to load.)"""
    width = request.param
    phone = width == "390"
    ctx = await browser.new_context(viewport=VIEWPORTS[width], is_mobile=phone, has_touch=phone, color_scheme="light")
    ctx.set_default_timeout(TIMEOUT_MS)
    try:
        yield width, ctx
    finally:
        await ctx.close()


def _admin(database_url: str, redis_url: str, kek: str, *args: str) -> str:
    """Run the admin CLI as an operator would; its output."""
    env = dict(os.environ, DATABASE_URL=database_url, REDIS_URL=redis_url, KEY_ENCRYPTION_KEY=kek)
    done = subprocess.run(
        [sys.executable, "-m", "courseschool.authz", "admin", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def lecturer(platform: Platform, database_url: str, redis_url: str, kek: str) -> tuple[str, str]:
    """A lecturer of the demo school, made with the admin CLI as an operator would: their
    role caps what they can grant, so their consent page also lists scopes not granted."""
    return create_person(database_url, redis_url, kek, name="Lena Lecturer", role="lecturer")


@pytest.fixture(scope="module")
def integration(platform: Platform, database_url: str, redis_url: str, kek: str) -> dict[str, Any]:
    """An administrator's integration (its consent page vouches for its name). A loopback
    callback: the port of the test's callback server may differ (RFC 8252 §7.3)."""
    made = _admin(
        database_url,
        redis_url,
        kek,
        *("--json", "integrations", "create", "--name", "Look Partner CRM"),
        *("--redirect-uri", "http://127.0.0.1:9/callback"),
    )
    return json.loads(made)


async def _start(
    platform: Platform,
    callback_server: CallbackServer,
    page: Any,
    *,
    name: str,
    every_scope: bool = False,
    reg: dict[str, Any] | None = None,
) -> None:
    """Register a loopback client (unless given one) and open its authorization request: the login page."""
    from playwright.async_api import expect

    async with httpx.AsyncClient(timeout=15.0) as http:
        meta = await discover(http, platform.base_url)
        reg = reg or await register(http, meta, callback_server.url, client_name=name)
    scope = " ".join(meta["scopes_supported"]) if every_scope else SCOPE
    request = authorization_request(meta, reg, callback_server.url, scope=scope)
    await page.goto(request["url"])
    await expect(page.get_by_role("heading", name="Sign in")).to_be_visible()


async def _sign_in(page: Any, email: str, password: str) -> None:
    await page.get_by_label("Email").fill(email)
    await page.get_by_label("Password").fill(password)
    await page.get_by_role("button", name="Sign in").click()


FIREFOX_LINUX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"


# -- looking at a page --------------------------------------------------------------------------


async def _focus_walk(page: Any, expected: list[str]) -> list[dict[str, Any]]:
    """Tab through the page until every focusable element was reached once."""
    seen: dict[str, dict[str, Any]] = {}
    for _ in range(3 * len(expected) + 3):
        if set(expected) <= set(seen):
            break
        await page.keyboard.press("Tab")
        info = await page.evaluate(FOCUSED_JS)
        if info is not None:
            seen.setdefault(info["what"], info)
    await page.evaluate("() => document.activeElement && document.activeElement.blur()")
    missing = [what for what in expected if what not in seen]
    assert not missing, f"never reached with Tab: {missing}"
    return list(seen.values())


async def _buttons_aligned(page: Any) -> list[str]:
    deny = await page.get_by_role("button", name="Deny").bounding_box()
    allow = await page.get_by_role("button", name="Allow").bounding_box()
    problems = []
    if abs(deny["height"] - allow["height"]) > 0.5:
        problems.append(f"Allow is {allow['height']:.1f} px tall, Deny {deny['height']:.1f} px")
    if abs(deny["y"] - allow["y"]) > 0.5:
        problems.append(f"Allow starts at y={allow['y']:.1f}, Deny at y={deny['y']:.1f}: not on one line")
    return problems


async def look(
    page: Any,
    name: str,
    width: str,
    lowest: dict[tuple[str, str], dict[str, tuple[float, str]]],
    *,
    consent: bool = False,
) -> None:
    """Check the page in both colour schemes at this width, and photograph it."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    failures: list[str] = []
    for theme in THEMES:
        await page.emulate_media(color_scheme=theme)
        assert await page.evaluate(f"() => matchMedia('(prefers-color-scheme: {theme})').matches")
        data = await page.evaluate(MEASURE_JS)
        assert data["texts"], f"{name}: no text found on the page"
        measured = check_measurements(data)
        failures += [f"[{theme} {width}px] {f}" for f in measured.failures]
        kinds = lowest.setdefault((name, theme), {})
        for kind, value in (("text", measured.lowest_text), ("control", measured.lowest_ui)):
            if value[1]:
                kinds[kind] = min(kinds.get(kind, value), value)
        if consent:
            failures += [f"[{theme} {width}px] {p}" for p in await _buttons_aligned(page)]
        await page.screenshot(path=str(SCREENSHOTS / f"{name}-{theme}-{width}.png"), full_page=True)
        found = await run_axe(page)
        AXE_FOUND[(name, theme, width)] = found
        failures += [f"[{theme} {width}px] axe {line}" for line in _axe_lines(found["violations"])]
        for info in await _focus_walk(page, data["focusable"]):
            problems, ratio, label = check_focus_ring(info)
            failures += [f"[{theme} {width}px] {p}" for p in problems]
            kinds["focus ring"] = min(kinds.get("focus ring", (ratio, label)), (ratio, label))
    for theme in THEMES:
        kinds = lowest.get((name, theme), {})
        print(f"{name} {theme} {width}px: " + ", ".join(f"{k} {v[0]:.2f}:1" for k, v in kinds.items()))
    assert not failures, f"{name} page fails WCAG AA or the layout checks:\n" + "\n".join(failures)


# -- the pages ----------------------------------------------------------------------------------


@pytest.mark.browser
async def test_axe_reports_what_these_checks_exist_for(device: tuple[str, Any]) -> None:
    """The check itself can fail: a page with a timed refresh, an unlabelled field, grey
    on grey and no landmark is reported, rule by rule (no server needed: the page is set
    as content)."""
    _, ctx = device
    page = await ctx.new_page()
    await page.set_content(
        '<!doctype html><html lang="en"><head><title>Bad</title>'
        '<meta http-equiv="refresh" content="2;url=http://127.0.0.1:9/"></head>'
        '<body><h1>Bad</h1><input type="text"><p style="color:#aaa;background:#bbb">grey</p></body></html>'
    )
    found = await run_axe(page)
    assert {"meta-refresh", "label", "color-contrast", "region"} <= {v["id"] for v in found["violations"]}
    assert next(v for v in found["violations"] if v["id"] == "meta-refresh")["impact"] == "critical"


@pytest.mark.browser
async def test_login_page_and_failed_login(
    platform: Platform, callback_server: CallbackServer, device: tuple[str, Any], lowest: dict
) -> None:
    from playwright.async_api import expect

    width, ctx = device
    page = await ctx.new_page()
    await _start(platform, callback_server, page, name=CLIENT_NAME)
    await expect(page.get_by_label("Email")).to_be_focused()  # focus starts in the email field
    await expect(page.get_by_text("An app that calls itself")).to_contain_text(f"«{CLIENT_NAME}»")
    await expect(page.get_by_text("not verified by your school")).to_be_visible()
    await look(page, "login", width, lowest)

    await _sign_in(page, platform.email, "not the password")
    await expect(page.get_by_role("alert")).to_contain_text("not right")
    await expect(page.get_by_label("Password")).to_be_visible()
    await look(page, "login-error", width, lowest)


@pytest.mark.browser
async def test_a_consent_page_left_open_when_someone_else_signs_in_on_the_browser(
    platform: Platform,
    callback_server: CallbackServer,
    device: tuple[str, Any],
    lowest: dict,
    lecturer: tuple[str, str],
) -> None:
    """Two tabs of one browser: the owner signs in on the first and leaves its consent
    page open; a lecturer signs in on the second. The first, reloaded, asks to sign in
    again and says why, showing neither the owner's consent nor the address typed."""
    from playwright.async_api import expect

    width, ctx = device
    first, second = await ctx.new_page(), await ctx.new_page()
    await _start(platform, callback_server, first, name=CLIENT_NAME)
    await _start(platform, callback_server, second, name=CLIENT_NAME)  # both at the sign-in form
    await _sign_in(first, platform.email, platform.password)
    await expect(first.get_by_role("button", name="Allow")).to_be_visible()
    await _sign_in(second, *lecturer)
    await expect(second.get_by_role("button", name="Allow")).to_be_visible()
    await first.reload()
    await expect(first.get_by_role("alert")).to_contain_text("signed in again since this page opened")
    await expect(first.get_by_label("Email")).to_have_value("")
    await expect(first.get_by_role("button", name="Allow")).to_have_count(0)
    await look(first, "login-signed-in-again", width, lowest)
    await second.close()


@pytest.mark.browser
async def test_consent_page(
    platform: Platform, callback_server: CallbackServer, device: tuple[str, Any], lowest: dict
) -> None:
    from playwright.async_api import expect

    width, ctx = device
    page = await ctx.new_page()
    await _start(platform, callback_server, page, name=CLIENT_NAME)
    await _sign_in(page, platform.email, platform.password)
    await expect(page.get_by_role("button", name="Allow")).to_be_visible()
    await look(page, "consent", width, lowest, consent=True)


@pytest.mark.browser
async def test_consent_page_with_a_long_name_and_every_scope(
    platform: Platform,
    callback_server: CallbackServer,
    device: tuple[str, Any],
    lowest: dict,
    lecturer: tuple[str, str],
) -> None:
    """The worst case for the layout: the longest client name registration accepts, every
    scope of the metadata, and a role that cannot grant all of them."""
    from playwright.async_api import expect

    width, ctx = device
    page = await ctx.new_page()
    await _start(platform, callback_server, page, name=LONG_CLIENT_NAME, every_scope=True)
    await look(page, "login-long", width, lowest)
    await _sign_in(page, *lecturer)
    await expect(page.get_by_role("button", name="Allow")).to_be_visible()
    await expect(page.get_by_role("heading", name="Not granted", exact=False)).to_be_visible()
    await look(page, "consent-long", width, lowest, consent=True)


@pytest.mark.browser
async def test_consent_page_of_an_integration(
    platform: Platform,
    callback_server: CallbackServer,
    device: tuple[str, Any],
    lowest: dict,
    integration: dict[str, Any],
) -> None:
    """The variant whose name the school vouches for (security review finding 7)."""
    from playwright.async_api import expect

    width, ctx = device
    page = await ctx.new_page()
    await _start(platform, callback_server, page, name=integration["client_name"], reg=integration)
    await expect(page.get_by_text("An app your school's administrator set up.")).to_be_visible()
    await look(page, "login-integration", width, lowest)
    await _sign_in(page, platform.email, platform.password)
    await expect(page.get_by_text("An app your school's administrator set up.")).to_be_visible()
    await look(page, "consent-integration", width, lowest, consent=True)


@pytest.mark.browser
async def test_error_page(platform: Platform, device: tuple[str, Any], lowest: dict) -> None:
    from playwright.async_api import expect

    width, ctx = device
    page = await ctx.new_page()
    response = await page.goto(
        f"{platform.base_url}/oauth/authorize?response_type=code&client_id=no-such-client"
        "&redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fcallback&code_challenge_method=S256"
        "&code_challenge=" + "A" * 43
    )
    assert response is not None and response.status == 400
    await expect(page.get_by_role("alert")).to_be_visible()
    await look(page, "error", width, lowest)


# -- the person's own pages: sign-in and connected apps -------------------------------------------


async def _approve(
    platform: Platform, callback_server: CallbackServer, page: Any, reg: dict[str, Any], scope: str = SCOPE
) -> dict[str, Any]:
    """Open an app's authorization request in the browser and allow it (signed in
    already), then exchange the code as the app would: only an exchanged approval is a
    sign-in the connected-apps page lists."""
    from playwright.async_api import expect

    async with httpx.AsyncClient(timeout=15.0) as http:
        meta = await discover(http, platform.base_url)
        request = authorization_request(meta, reg, callback_server.url, scope=scope)
        await page.goto(request["url"])
        await page.get_by_role("button", name="Allow").click()
        await expect(page.get_by_text("You can close this window")).to_be_visible()
        code = (await callback_server.wait())["code"]
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": request["redirect_uri"],
            "client_id": reg["client_id"],
            "code_verifier": request["verifier"],
        }
        if "client_secret" in reg:
            form["client_secret"] = reg["client_secret"]
        exchanged = await http.post(meta["token_endpoint"], data=form)
        assert exchanged.status_code == 200, exchanged.text
        return exchanged.json()


@pytest.mark.browser
async def test_sign_in_and_connected_apps_pages(
    platform: Platform,
    callback_server: CallbackServer,
    browser: Any,
    device: tuple[str, Any],
    lowest: dict,
    database_url: str,
    redis_url: str,
    kek: str,
) -> None:
    """The standalone sign-in page, the empty list, and a list of three apps: an
    integration (verified), the longest name with every scope, and a short one signed in
    twice (two sign-ins in one card); the confirmation pages of ending one sign-in and of
    removing an app everywhere, and the notices after each."""
    from playwright.async_api import expect

    width, ctx = device
    email, password = create_person(database_url, redis_url, kek, name="Avery Apps", role="owner")
    page = await ctx.new_page()
    await page.goto(f"{platform.base_url}/oauth/apps")
    await expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    await look(page, "signin", width, lowest)
    await _sign_in(page, email, password)
    await expect(page.get_by_text("No app has access")).to_be_visible()
    await look(page, "apps-empty", width, lowest)

    made = admin_cli(
        database_url,
        redis_url,
        kek,
        *("--json", "integrations", "create", "--name", "Partner CRM", "--redirect-uri", callback_server.url),
    )
    integration = json.loads(made)
    async with httpx.AsyncClient(timeout=15.0) as http:
        meta = await discover(http, platform.base_url)
        long_app = await register(http, meta, callback_server.url, client_name=LONG_CLIENT_NAME)
        short_app = await register(http, meta, callback_server.url, client_name=CLIENT_NAME)
    await _approve(platform, callback_server, page, integration)
    await _approve(platform, callback_server, page, long_app, scope=" ".join(meta["scopes_supported"]))
    # Signed in to the short app on another computer first (a browser of its own: the same
    # browser asking again would be the same sign-in), then here.
    laptop = await browser.new_context(user_agent=FIREFOX_LINUX)
    try:
        elsewhere = await laptop.new_page()
        await elsewhere.goto(f"{platform.base_url}/oauth/apps")
        await _sign_in(elsewhere, email, password)
        await _approve(platform, callback_server, elsewhere, short_app)
    finally:
        await laptop.close()
    await _approve(platform, callback_server, page, short_app)
    await page.goto(f"{platform.base_url}/oauth/apps")
    await expect(page.locator("li.app")).to_have_count(3)
    await expect(page.get_by_role("link", name="End this sign-in")).to_have_count(4)
    short_card = page.locator("li.app").filter(has=page.get_by_role("heading", name=CLIENT_NAME, exact=True))
    await expect(short_card.locator("li.sign-in")).to_have_count(2)
    await expect(page.locator("#time-zone-note")).to_contain_text("your computer's time zone")  # the script ran
    await look(page, "apps", width, lowest)

    # This browser's sign-in, named by its row: two sign-ins used within one second are
    # listed in an order of their own (the list is by last use, to the second).
    here = short_card.locator("li.sign-in").filter(has=page.get_by_role("heading", name="Chrome on Linux"))
    await here.get_by_role("link", name="End this sign-in").click()
    await expect(page.get_by_role("heading", name=f"End the sign-in of {CLIENT_NAME}")).to_be_visible()
    await look(page, "apps-confirm-end", width, lowest)
    await page.get_by_role("button", name="End this sign-in").click()
    await expect(page.get_by_role("status")).to_contain_text(f"Signed out of {CLIENT_NAME} in Chrome on Linux")
    await expect(short_card.locator("li.sign-in")).to_have_count(1)
    await look(page, "apps-ended", width, lowest)

    await short_card.get_by_role("link", name="Remove the app everywhere").click()
    await expect(page.get_by_role("heading", name=f"Remove {CLIENT_NAME} everywhere?")).to_be_visible()
    await look(page, "apps-confirm-remove-app", width, lowest)
    await page.get_by_role("button", name="Remove the app everywhere").click()
    await expect(page.get_by_role("status")).to_contain_text(f"Removed {CLIENT_NAME} everywhere")
    await expect(page.locator("li.app")).to_have_count(2)
    await look(page, "apps-removed", width, lowest)
    await page.get_by_role("link", name="Remove all").click()  # confirms first, naming each app
    await expect(page.get_by_role("heading", name="Remove every app?")).to_be_visible()
    await look(page, "apps-remove-all", width, lowest)


# -- oversight: what an app did, the school's apps, a block, a notice ------------------------------


async def _reload_until(page: Any, text: str, seconds: float = 40.0) -> None:
    """Reload until the page shows `text` (the resource API flushes its read counts every
    few seconds); bounded."""
    for _ in range(int(seconds * 2)):
        await page.reload()
        if await page.get_by_text(text, exact=False).count():
            return
        await asyncio.sleep(0.5)
    raise AssertionError(f"the page never showed {text!r}")


@pytest.mark.browser
async def test_oversight_pages(
    platform: Platform,
    callback_server: CallbackServer,
    device: tuple[str, Any],
    browser: Any,
    lowest: dict,
    database_url: str,
    redis_url: str,
    kek: str,
) -> None:
    """An app the school's owner let in reads courses and adds a student through the API:
    the owner's apps page shows those counts and that change; another browser of the
    owner is told once of the new connection; the school's apps page lists the app under
    the owner; blocking it ends its access (the API answers 401 once the revocation has
    reached it) and a lecturer's next consent page says the school blocked it, and so
    does the decision page after it; the lecturer gets no school page."""
    from playwright.async_api import expect

    width, ctx = device
    owner, owner_password = create_person(database_url, redis_url, kek, name="Olive Owner", role="owner")
    lecturer, lecturer_password = create_person(database_url, redis_url, kek, name="Lee Lecturer", role="lecturer")
    async with httpx.AsyncClient(timeout=15.0) as http:
        meta = await discover(http, platform.base_url)
        # A name of its own per width: the school's block covers every registration of a name.
        roster_name = f"Roster Agent {width}"
        app = await register(http, meta, callback_server.url, client_name=roster_name)
    page = await ctx.new_page()
    await page.goto(f"{platform.base_url}/oauth/apps")
    await _sign_in(page, owner, owner_password)
    tokens = await _approve(
        platform, callback_server, page, app, scope="openid courses:read students:read students:write"
    )
    bearer = {"Authorization": f"Bearer {tokens['access_token']}"}
    api = f"{platform.base_url}/api/v1"
    async with httpx.AsyncClient(timeout=15.0) as http:
        for _ in range(3):
            assert (await http.get(f"{api}/courses", headers=bearer)).status_code == 200
        student = {"name": "Ada Lovelace", "email": f"ada-{width}@example.test"}
        made = await http.post(f"{api}/students", headers=bearer, json=student)
        assert made.status_code == 201, made.text

    await page.goto(f"{platform.base_url}/oauth/apps")
    await _reload_until(page, "read courses 3 times")
    await expect(page.get_by_text("changed 1 (1 in students)")).to_be_visible()
    await page.get_by_text("What it changed").click()
    await expect(page.get_by_text("added in students «Ada Lovelace»")).to_be_visible()
    await look(page, "apps-activity", width, lowest)

    # Another browser of the owner's is told of the connection, once.
    other = await browser.new_context(viewport=VIEWPORTS[width], color_scheme="light")
    try:
        elsewhere = await other.new_page()
        await elsewhere.goto(f"{platform.base_url}/oauth/apps")
        await _sign_in(elsewhere, owner, owner_password)
        await expect(elsewhere.get_by_role("heading", name="A new app was connected to your account")).to_be_visible()
        await expect(elsewhere.locator(".notice.connected")).to_contain_text(roster_name)
        await look(elsewhere, "apps-notice", width, lowest)
        await elsewhere.reload()
        await expect(elsewhere.locator(".notice.connected")).to_have_count(0)
    finally:
        await other.close()

    await page.goto(f"{platform.base_url}/oauth/school/apps")
    roster = page.locator("li.app").filter(has=page.get_by_role("heading", name=roster_name, exact=True))
    await expect(roster.get_by_text(owner)).to_be_visible()
    await expect(roster.get_by_text("read courses 3 times")).to_be_visible()
    await look(page, "school-apps", width, lowest)
    await roster.get_by_role("link", name="Block for the school").click()
    await expect(page.get_by_role("heading", name=f"Block {roster_name} for Demo Course School?")).to_be_visible()
    await look(page, "school-apps-confirm-block", width, lowest)
    await page.get_by_role("button", name="Block for the school").click()
    await expect(page.get_by_role("status")).to_contain_text("The app is blocked")
    await look(page, "school-apps-blocked", width, lowest)
    await page.goto(f"{platform.base_url}/oauth/apps")  # the owner's own sign-in ended with the block
    await expect(page.get_by_role("heading", name="Ended by your school")).to_be_visible()
    await look(page, "apps-ended-by-school", width, lowest)
    async with httpx.AsyncClient(timeout=15.0) as http:
        for _ in range(50):  # the revocation fan-out reaches the resource API
            if (await http.get(f"{api}/courses", headers=bearer)).status_code == 401:
                break
            await asyncio.sleep(0.1)
        else:
            raise AssertionError("the blocked app's token still works")

    # A lecturer of the school: no school page, and the app's consent page says why.
    teacher = await browser.new_context(viewport=VIEWPORTS[width], color_scheme="light")
    try:
        lecture = await teacher.new_page()
        await lecture.goto(f"{platform.base_url}/oauth/signin?next=/oauth/school/apps")
        await _sign_in(lecture, lecturer, lecturer_password)
        assert (await lecture.goto(f"{platform.base_url}/oauth/school/apps")).status == 404
        await expect(lecture.get_by_role("alert")).to_contain_text("for your school's owners and admins")
        await look(lecture, "school-apps-not-for-you", width, lowest)
        request = authorization_request(meta, app, callback_server.url, scope="openid courses:read")
        await lecture.goto(request["url"] + "&decision_page=true")
        await expect(lecture.get_by_role("alert")).to_contain_text("has blocked this app")
        await expect(lecture.get_by_role("button", name="Allow")).to_have_count(0)
        await look(lecture, "consent-blocked", width, lowest)
        await lecture.get_by_role("button", name="Back to the app").click()
        # The decision page says it was the school's doing, not the person's.
        heading = f"Your school blocked the app that calls itself «{roster_name}»"
        await expect(lecture.get_by_role("heading", name=heading)).to_be_visible()
        await expect(lecture.get_by_text("your school's owners or admins blocked it")).to_be_visible()
        back = lecture.get_by_role("link", name="Back to the app")
        await expect(back).to_be_focused()
        await look(lecture, "decided-blocked", width, lowest)
        await back.click()
        denied = await callback_server.wait()
        assert denied["error"] == "access_denied"
    finally:
        await teacher.close()


# -- step-up, the decision page, sign-out ----------------------------------------------------------


@pytest.mark.browser
async def test_step_up_decision_and_sign_out_pages(
    platform: Platform,
    callback_server: CallbackServer,
    device: tuple[str, Any],
    lowest: dict,
    database_url: str,
    redis_url: str,
    kek: str,
) -> None:
    """An app the person allowed asks again for more (the MCP step-up): the page shows what
    is new apart from what was allowed; with `decision_page=true` a page of ours says what
    was decided before handing over; then the person signs out."""
    from playwright.async_api import expect

    width, ctx = device
    email, password = create_person(database_url, redis_url, kek, name="Sam Stepup", role="owner")
    async with httpx.AsyncClient(timeout=15.0) as http:
        meta = await discover(http, platform.base_url)
        app = await register(http, meta, callback_server.url, client_name="Step-up CLI")
    page = await ctx.new_page()
    await page.goto(f"{platform.base_url}/oauth/apps")
    await _sign_in(page, email, password)
    await _approve(platform, callback_server, page, app, scope="openid courses:read")

    more = authorization_request(meta, app, callback_server.url, scope="openid courses:read courses:write")
    await page.goto(more["url"] + "&decision_page=true")
    await expect(page.get_by_role("heading", name="New: it also asks to")).to_be_visible()
    await look(page, "consent-step-up", width, lowest, consent=True)
    await page.get_by_role("button", name="Allow").click()
    await expect(page.get_by_role("heading", name="You allowed")).to_be_visible()
    back = page.get_by_role("link", name="Back to the app")
    await expect(back).to_be_focused()  # Enter goes back; nothing moves by itself (WCAG 2.2.1)
    assert await page.locator("meta[http-equiv]").count() == 0
    await look(page, "decided", width, lowest)
    assert page.url.startswith(platform.base_url)  # still here after the look: no timed refresh
    await back.click()
    await page.wait_for_url(f"{callback_server.url}?**", timeout=10_000)
    await callback_server.wait()

    # An app asks for the sign-out (RP-Initiated Logout): its name, marked as its own claim.
    await page.goto(f"{platform.base_url}/oauth/logout?client_id={app['client_id']}")
    await expect(page.get_by_text("An app that calls itself")).to_contain_text("«Step-up CLI»")
    await expect(page.get_by_text("not verified by your school")).to_be_visible()
    await look(page, "logout-by-app", width, lowest)

    await page.goto(f"{platform.base_url}/oauth/logout")
    await expect(page.get_by_role("heading", name="Sign out of Course School?")).to_be_visible()
    await look(page, "logout", width, lowest)
    await expect(page.get_by_role("link", name="Stay signed in")).to_have_attribute("href", "/oauth/apps")
    await page.get_by_role("button", name="Sign out").click()
    await expect(page.get_by_role("heading", name="You are signed out")).to_be_visible()
    await expect(page.get_by_role("link", name="Sign in again")).to_have_attribute("href", "/oauth/signin")
    await expect(page.get_by_role("link", name="Your connected apps")).to_have_attribute("href", "/oauth/apps")
    await look(page, "signed-out", width, lowest)
    await page.goto(f"{platform.base_url}/oauth/apps")
    await expect(page.get_by_role("heading", name="Sign in")).to_be_visible()


# -- two-step sign-in (issue 40) --------------------------------------------------------------------


@pytest.mark.browser
async def test_two_step_sign_in_pages(
    platform: Platform,
    callback_server: CallbackServer,
    device: tuple[str, Any],
    browser: Any,
    lowest: dict,
    database_url: str,
    redis_url: str,
    kek: str,
) -> None:
    """The security page (off, then on), setting up an authenticator app (its QR code and
    key), the recovery codes, the confirmations of removing the app and of new codes, the
    second step of a sign-in (and its refusal of a wrong code), the set-up a school's
    requirement asks for, and the owner's page of that requirement. A school of the test's
    own: its requirement must not reach the demo school's people."""
    import pyotp
    from playwright.async_api import expect

    width, ctx = device
    slug = f"look-{width}-{secrets.token_hex(3)}"
    _admin(database_url, redis_url, kek, "schools", "create", "--slug", slug, "--name", "Riverside Academy")
    people = {}
    for role in ("owner", "admin"):
        email, password = f"{role}-{secrets.token_hex(4)}@example.test", secrets.token_urlsafe(18)
        _admin(
            database_url,
            redis_url,
            kek,
            *("users", "create", "--school", slug, "--email", email, "--name", f"Sam {role}", "--role", role),
            f"--password={password}",
        )
        people[role] = (email, password)

    page = await ctx.new_page()
    await page.goto(f"{platform.base_url}/oauth/security")
    await _sign_in(page, *people["owner"])
    await expect(page.get_by_role("heading", name="Sign-in security")).to_be_visible()
    await look(page, "security-off", width, lowest)
    await page.get_by_role("link", name="Set up an authenticator app").click()
    await expect(page.get_by_role("img", name="QR code to set up your authenticator app")).to_be_visible()
    await look(page, "totp-enrol", width, lowest)
    secret = (await page.get_by_label("Setup key").inner_text()).replace(" ", "")
    await page.get_by_label("Code from the app").fill(pyotp.TOTP(secret).now())
    await page.get_by_role("button", name="Turn on two-step sign-in").click()
    await expect(page.get_by_role("heading", name="Your recovery codes")).to_be_visible()
    codes = await page.locator(".recovery-codes code").all_inner_texts()
    await look(page, "recovery-codes", width, lowest)
    await page.get_by_role("link", name="I have saved them: continue").click()
    await expect(page.get_by_text("10 of 10 left")).to_be_visible()
    await look(page, "security-on", width, lowest)
    await page.get_by_role("link", name="Make new recovery codes").click()
    await expect(page.get_by_role("heading", name="Make new recovery codes?")).to_be_visible()
    await look(page, "security-confirm-codes", width, lowest)
    await page.goto(f"{platform.base_url}/oauth/security/confirm?action=remove-totp")
    await look(page, "security-confirm-remove", width, lowest)

    await page.goto(f"{platform.base_url}/oauth/school/security")
    await expect(page.get_by_role("heading", name="Two-step sign-in at Riverside Academy")).to_be_visible()
    await look(page, "school-security", width, lowest)
    await page.get_by_label("Owners and admins").check()
    await page.get_by_role("button", name="Save").click()
    await expect(page.get_by_role("status")).to_contain_text("Saved")

    second = await browser.new_context(viewport=VIEWPORTS[width], color_scheme="light")
    try:
        step = await second.new_page()
        await _start(platform, callback_server, step, name=CLIENT_NAME)
        await _sign_in(step, *people["owner"])
        await expect(step.get_by_role("heading", name="Two-step sign-in")).to_be_visible()
        await look(step, "second-step", width, lowest)
        await step.get_by_label("Code").fill("000000")
        await step.get_by_role("button", name="Continue").click()
        await expect(step.get_by_role("alert")).to_contain_text("That code is not right")
        await look(step, "second-step-wrong", width, lowest)
        await step.get_by_label("Code").fill(codes[0])
        await step.get_by_role("button", name="Continue").click()
        await expect(step.get_by_role("button", name="Allow")).to_be_visible()

        required = await second.new_page()
        await step.context.clear_cookies()
        await _start(platform, callback_server, required, name=CLIENT_NAME)
        await _sign_in(required, *people["admin"])
        await expect(required.get_by_role("heading", name="Set up two-step sign-in")).to_be_visible()
        await look(required, "totp-enrol-required", width, lowest)
    finally:
        await second.close()


# -- a person's account, and the pages of e-mailed links (issue 40) -------------------------------


async def _mailed_link(platform: Platform, email: str) -> str:
    """The single-use link of the newest message to `email` that `make run`'s catcher
    kept (DATA_DIR/mail, where the banner says); bounded wait for the delivery's pass."""
    import email as email_lib
    from email.policy import default

    said = re.search(r"^  Mail: caught in (\S+)/ \(\.eml files\)$", platform.output(), flags=re.M)
    assert said, platform.output()
    folder = Path(said.group(1))
    for _ in range(300):
        for path in sorted(folder.glob("*.eml"), reverse=True):
            message = email_lib.message_from_bytes(path.read_bytes(), policy=default)
            body = message.get_body(preferencelist=("plain",))
            if message["To"].addresses[0].addr_spec == email and body is not None:
                found = re.search(r"http://\S+/oauth/password/choose\?token=[A-Za-z0-9_-]+", body.get_content())
                if found:
                    return found.group(0)
        await asyncio.sleep(0.1)
    raise AssertionError(f"no link to {email} was caught")


@pytest.mark.browser
async def test_account_and_link_pages(
    platform: Platform,
    device: tuple[str, Any],
    browser: Any,
    lowest: dict,
    database_url: str,
    redis_url: str,
    kek: str,
) -> None:
    """ "Forgot your password?" (the form, and the answer every address gets), the link's
    page (a reset's, an invitation's), a link refused, the page after a password set
    where a second step follows, the account page (two browsers signed in, a notice) and
    the confirmation a change asks for."""
    from playwright.async_api import expect

    width, ctx = device
    email, password = create_person(database_url, redis_url, kek, name="Robin Account", role="owner")
    laptop = await browser.new_context(user_agent=FIREFOX_LINUX)
    try:
        other = await laptop.new_page()
        await other.goto(f"{platform.base_url}/oauth/account")
        await _sign_in(other, email, password)
        await expect(other.get_by_role("heading", name="Your account")).to_be_visible()
    finally:
        await laptop.close()
    page = await ctx.new_page()
    await page.goto(f"{platform.base_url}/oauth/account")
    await _sign_in(page, email, password)
    await expect(page.get_by_role("heading", name="Browsers signed in now")).to_be_visible()
    await expect(page.get_by_text("Firefox on Linux")).to_be_visible()
    await look(page, "account", width, lowest)
    await page.get_by_role("button", name="Sign out everywhere else").click()
    await expect(page.get_by_role("status")).to_contain_text("Your other browsers were signed out")
    await look(page, "account-done", width, lowest)
    await page.goto(f"{platform.base_url}/oauth/account/confirm?next=%2Foauth%2Faccount")
    await look(page, "account-confirm", width, lowest)
    await page.get_by_label("Password").fill("not my password")
    await page.get_by_role("button", name="Confirm").click()
    await expect(page.get_by_role("alert")).to_be_visible()
    await look(page, "account-confirm-wrong", width, lowest)

    fresh = await browser.new_context(viewport=VIEWPORTS[width], color_scheme="light")
    try:
        anon = await fresh.new_page()
        await anon.goto(f"{platform.base_url}/oauth/signin")
        await anon.get_by_role("link", name="Forgot your password?").click()
        await expect(anon.get_by_role("heading", name="Forgot your password?")).to_be_visible()
        await look(anon, "forgot", width, lowest)
        await anon.get_by_label("Email").fill(email)
        await anon.get_by_role("button", name="Send me a link").click()
        await expect(anon.get_by_role("status")).to_contain_text("If an account uses that address")
        await look(anon, "forgot-sent", width, lowest)
        link = await _mailed_link(platform, email)
        await anon.goto(link)
        await expect(anon.get_by_role("heading", name="Choose a new password")).to_be_visible()
        await look(anon, "choose-password", width, lowest)
        await anon.goto(f"{platform.base_url}/oauth/password/choose?token=not-a-real-link")
        await expect(anon.get_by_role("heading", name="This link is not valid")).to_be_visible()
        await look(anon, "link-refused", width, lowest)
        await anon.goto(f"{platform.base_url}/oauth/password/done?invited=0")
        await look(anon, "password-set", width, lowest)

        invited = f"invited-{width}-{secrets.token_hex(3)}@example.test"
        _admin(
            database_url,
            redis_url,
            kek,
            *("users", "invite", "--school", "demo", "--email", invited, "--name", "Ines", "--role", "student"),
        )
        await anon.goto(await _mailed_link(platform, invited))
        await expect(anon.get_by_role("heading", name="Choose your password")).to_be_visible()
        await look(anon, "choose-password-invited", width, lowest)
    finally:
        await fresh.close()
