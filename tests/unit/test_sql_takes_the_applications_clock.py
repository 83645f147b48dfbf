"""One clock (docs/design.md, "One clock"): the authorization server's statements take the
application's time as a parameter (`to_timestamp($n)`); none asks PostgreSQL for its own.
The places PostgreSQL's clock may still write are listed here and in the design, each with
its reason: a new `now()` elsewhere fails this test."""

from __future__ import annotations

import ast
import re

from .product_source import ROOT

CHECKED = [ROOT / "services/authz/src", ROOT / "libs/common/src"]
POSTGRES_TIME = re.compile(
    r"\bnow\s*\(\s*\)|\b(current_timestamp|localtimestamp|clock_timestamp|statement_timestamp"
    r"|transaction_timestamp|current_date|current_time)\b",
    re.IGNORECASE,
)

# module (relative to ROOT) -> why PostgreSQL's clock may write there
ALLOWED = {
    # The webhook outbox is on PostgreSQL's clock alone: its lease and retry delays are
    # written and compared by now() in the same statements, never against a moment the
    # application wrote.
    "services/authz/src/courseschool/authz/storage/webhook_outbox.py": "the outbox's own delays",
    "services/authz/src/courseschool/authz/storage/mail_outbox.py": "the mail outbox's lease and retry delays",
    # The migration runner's own table: when a migration was applied, shown only.
    "libs/common/src/courseschool/common/db.py": "schema_migrations.applied_at",
}


def _strings(tree: ast.Module) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.append((node.lineno, node.value))
        elif isinstance(node, ast.JoinedStr):
            text = "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
            found.append((node.lineno, text))
    return found


def _uses() -> dict[str, list[int]]:
    uses: dict[str, list[int]] = {}
    for base in CHECKED:
        for path in sorted(base.rglob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            lines = [n for n, text in _strings(tree) if POSTGRES_TIME.search(text) and _is_sql(text)]
            if lines:
                uses[str(path.relative_to(ROOT))] = lines
    return uses


def _is_sql(text: str) -> bool:
    return bool(re.search(r"\b(SELECT|UPDATE|INSERT|DELETE|WHERE|DEFAULT|SET)\b", text)) or "interval" in text


def test_no_statement_asks_postgres_for_the_time_outside_the_listed_places() -> None:
    strays = {module: lines for module, lines in _uses().items() if module not in ALLOWED}
    assert not strays, f"statements on PostgreSQL's clock (pass the application's: to_timestamp($n)): {strays}"


def test_the_listed_places_still_need_their_exemption() -> None:
    assert set(_uses()) == set(ALLOWED), "drop an exemption nothing needs any more"


def test_the_housekeeping_rules_compare_with_the_applications_time() -> None:
    from courseschool.authz.storage.housekeeping import _RULES

    for name, rule in _RULES.items():
        assert "to_timestamp($2)" in rule.condition, name
        assert not POSTGRES_TIME.search(rule.condition), name
