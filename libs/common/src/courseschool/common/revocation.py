"""The revocation feed shared by the authorization server (publisher) and the
resource servers (subscribers): key names and the message on the channel."""

from __future__ import annotations

import msgspec

CHANNEL = "courseschool:revocations"


class RevocationEvent(msgspec.Struct, frozen=True, omit_defaults=True):
    grant_id: str | None = None
    jti: str | None = None


def grant_key(grant_id: str) -> str:
    return f"revoked:grant:{grant_id}"


def jti_key(jti: str) -> str:
    return f"revoked:jti:{jti}"
