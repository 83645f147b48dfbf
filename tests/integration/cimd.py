"""Client ID Metadata Documents in tests: a local HTTPS server with a test CA
(tests/support/tls.py) stands in for the web; the app is made with a document web that
trusts that CA and may fetch from loopback (`site_web`; `site` and `cimd_flow` in
conftest.py)."""

from __future__ import annotations

import msgspec

from courseschool.authz.settings import AuthzSettings

from ..support.tls import HttpsServer, Reply

LOOPBACK = "http://127.0.0.1:53682/callback"
ADMIN_TOKEN = "admin-token-for-tests-0123456789abcdef"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def cimd_settings(base: AuthzSettings, **changes: object) -> AuthzSettings:
    values = {
        **msgspec.structs.asdict(base),
        "cimd_timeout": 1.0,
        "admin_token": ADMIN_TOKEN,
        **changes,
    }
    return AuthzSettings(**values)


def publish(server: HttpsServer, path: str, *, max_age: int = 600, **overrides: object) -> str:
    """Serve a client's metadata document at `path`; its URL (the client_id)."""
    url = server.url(path)
    doc = {"client_id": url, "client_name": "Agent Smith", "redirect_uris": [LOOPBACK], **overrides}
    server.replies[path] = Reply(
        msgspec.json.encode(doc),
        headers={"Content-Type": "application/json", "Cache-Control": f"max-age={max_age}"},
    )
    return url
