"""One catalogue of audit events (common/audit_events.py): docs/events.md lists exactly
its events, with their kinds and whether the webhook sends them; the recorder's kinds
and the webhook's events are the catalogue's."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

from courseschool.authz.events import is_anonymous_noise, kind_of
from courseschool.authz.storage.events import WEBHOOK_ACTIONS
from courseschool.common.audit_events import CATALOGUE, AuditEvent

DOC = Path(__file__).resolve().parents[2] / "docs" / "events.md"
_ROW = re.compile(r"^\| `(?P<name>[a-z_]+)` \| (?P<kind>\w+) \| (?P<webhook>yes|no) \|")


def documented() -> dict[str, tuple[str, bool]]:
    rows: dict[str, tuple[str, bool]] = {}
    for line in DOC.read_text().splitlines():
        found = _ROW.match(line)
        if found:
            assert found["name"] not in rows, f"docs/events.md lists {found['name']} twice"
            rows[found["name"]] = (found["kind"], found["webhook"] == "yes")
    return rows


def test_the_docs_list_the_catalogues_events_with_their_kinds() -> None:
    listed = documented()
    catalogue = {name: (e.kind, e.webhook) for name, e in CATALOGUE.items()}
    assert sorted(set(listed) - set(catalogue)) == [], "in docs/events.md, not in the catalogue"
    assert sorted(set(catalogue) - set(listed)) == [], "in the catalogue, not in docs/events.md"
    differ = {name: (listed[name], catalogue[name]) for name in catalogue if listed[name] != catalogue[name]}
    assert differ == {}, "(docs, catalogue) kind and webhook differ"


def test_audit_is_typed_to_the_catalogue() -> None:
    assert set(get_args(AuditEvent)) == set(CATALOGUE)


def test_the_recorder_gives_each_event_its_catalogue_kind() -> None:
    for name, event in CATALOGUE.items():
        assert kind_of(name, {"actor": "user"}) == event.kind, name
    # An administrator's event is admin unless a security one; a grant ended for reuse is security.
    assert kind_of("user_created", {"actor": "admin-cli"}) == "admin"
    assert kind_of("client_deleted", {"actor": "admin"}) == "security"
    assert kind_of("grant_revoked", {"actor": "system", "reason": "refresh_reused"}) == "security"
    assert kind_of("grant_revoked", {"actor": "user", "reason": "revoked_by_user"}) == "user"


def test_the_webhook_sends_every_security_event_and_new_connections() -> None:
    assert all(e.webhook for e in CATALOGUE.values() if e.kind == "security")
    assert sorted(WEBHOOK_ACTIONS) == ["consent_given", "consent_remembered"]


def test_anonymous_noise_is_the_catalogues() -> None:
    noise = sorted(name for name in CATALOGUE if is_anonymous_noise(name, {"subject": None}))
    assert noise == ["client_metadata_fetched", "client_metadata_refused", "login_failed", "login_locked"]
    assert not is_anonymous_noise("login_failed", {"subject": "someone"})
