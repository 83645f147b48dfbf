"""Where the product's source is, for the tests that read it (sizes, error texts, SQL)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = [
    ROOT / "libs/common/src",
    ROOT / "services/authz/src",
    ROOT / "services/resource-api/src",
    ROOT / "services/discovery/src",
    ROOT / "platform/src",
]
