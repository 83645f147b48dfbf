"""The alerting rules as Prometheus loads them, with every `runbook_url` absolute.

deploy/prometheus/alerts.yaml links each alert's runbook by its place in this
repository (`deploy/README.md#runbook-...`), which an on-call engineer's pager cannot
open. This writes the rules with those links under the address where your copy of the
docs is read (DOCS_BASE_URL, or --docs-base-url: a repository browser's address of the
release you run, or wherever you publish deploy/README.md), for Prometheus's rule_files:

    python3 tools/render_alerts.py --docs-base-url https://git.example.org/course-school/blob/v1.4 \\
        > /etc/prometheus/courseschool-alerts.yaml

Standard library only, so it runs without the project's virtualenv.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from urllib.parse import urlsplit

RULES = Path(__file__).resolve().parents[1] / "deploy" / "prometheus" / "alerts.yaml"
_LINK = re.compile(r"^(\s*runbook_url:\s*)(deploy/README\.md#[a-z0-9-]+)\s*$", re.M)


def docs_base_url(value: str) -> str:
    """An http(s) address with a host and nothing after its path, without a trailing slash."""
    parts = urlsplit(value)
    if parts.scheme not in ("https", "http") or not parts.hostname or parts.query or parts.fragment:
        raise ValueError(f"the docs' base URL must be an http(s) address without query or fragment: {value!r}")
    return value.rstrip("/")


def render(rules: str, base: str) -> str:
    """`rules` with each relative runbook link under `base`; every alert must have one."""
    rendered, count = _LINK.subn(lambda m: f"{m.group(1)}{base}/{m.group(2)}", rules)
    alerts = len(re.findall(r"^\s*- alert:", rules, flags=re.M))
    if count != alerts:
        raise ValueError(f"{alerts} alerts but {count} runbook links of the form deploy/README.md#...")
    return rendered


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Print deploy/prometheus/alerts.yaml with every runbook_url under the docs' base URL."
    )
    parser.add_argument(
        "--docs-base-url",
        default=os.environ.get("DOCS_BASE_URL"),
        help="where the repository's files are read, such as https://git.example.org/course-school/blob/v1.4 "
        "(default: DOCS_BASE_URL)",
    )
    parser.add_argument("--rules", type=Path, default=RULES, help="the rules to render (default: %(default)s)")
    args = parser.parse_args(argv)
    if not args.docs_base_url:
        parser.error("set --docs-base-url or DOCS_BASE_URL: the address where the docs are read")
    try:
        sys.stdout.write(render(args.rules.read_text(), docs_base_url(args.docs_base_url)))
    except ValueError as exc:
        parser.error(str(exc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
