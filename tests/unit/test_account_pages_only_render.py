"""The account pages assemble nothing in `web/`: each reads what it shows through one use
case in `endpoints/` (the connected apps, `apps_page`; the school's apps,
`school_apps_page`; the notices, with the consent page's `consent_view`), so what the
resource API recorded climbs web -> endpoints -> the activity reader in one direction.
This reads the web layer's source: a page module that reaches a store or the activity
reader through its family (`account_pages.activity.of_grants(...)`) is named here."""

from __future__ import annotations

import ast
from pathlib import Path

from .product_source import ROOT

WEB = ROOT / "services/authz/src/courseschool/authz/web"
# The account pages' modules: they render what their use cases return.
PAGES = ("connected_apps.py", "school_apps.py", "school_approvals.py", "school_people.py")
# What only use cases read, whichever web module it is: what apps did (the resource API's
# record), the notices shown once, and the stores of the pages above.
USE_CASES_ONLY = ("activity", "notices", "connected_apps", "school_apps", "access_requests")
FAMILIES = ("account_pages", "sign_in_pages", "c")  # the names the web layer gives a family of use cases


def reached_through_family(source: str) -> list[tuple[int, str, str]]:
    """(line, family field, what of it) for each `<family>.<field>.<attribute>` in the source."""
    found = []
    for node in ast.walk(ast.parse(source)):
        match node:
            case ast.Attribute(value=ast.Attribute(value=ast.Name(id=family), attr=field), attr=attr) if (
                family in FAMILIES
            ):
                found.append((node.lineno, field, attr))
    return found


def stores_reached(path: Path, fields: tuple[str, ...] | None) -> list[str]:
    """`<module>:<line> <field>.<attribute>` for each field of a family reached (any but
    its settings and clock when `fields` is None)."""
    return [
        f"{path.name}:{line} {field}.{attr}"
        for line, field, attr in reached_through_family(path.read_text())
        if (field in fields if fields is not None else field not in ("settings", "clock"))
    ]


def test_the_account_pages_read_through_their_use_cases_only() -> None:
    assert [found for name in PAGES for found in stores_reached(WEB / name, None)] == []


def test_no_web_module_reads_activity_notices_or_the_pages_stores() -> None:
    modules = sorted(WEB.glob("*.py"))
    assert len(modules) > 20
    assert [found for path in modules for found in stores_reached(path, USE_CASES_ONLY)] == []


def test_a_page_that_reads_a_store_itself_is_named(tmp_path: Path) -> None:
    page = tmp_path / "connected_apps.py"
    page.write_text(
        "async def apps_list(account_pages, user):\n"
        "    settings = account_pages.settings.issuer\n"
        "    record = await account_pages.activity.of_grants([], school_id=user.school_id)\n"
        "    return await account_pages.users.school_name(user.school_id)\n"
    )
    assert stores_reached(page, None) == [
        "connected_apps.py:3 activity.of_grants",
        "connected_apps.py:4 users.school_name",
    ]
    assert stores_reached(page, USE_CASES_ONLY) == ["connected_apps.py:3 activity.of_grants"]
