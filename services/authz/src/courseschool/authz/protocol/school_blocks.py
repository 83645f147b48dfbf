"""What a school's block covers: the software, not one registration (issue 38, T4-2).

Anyone may register a new client id in a second, and a metadata-document app may vary
its URL's path or query, so a block of one client id alone is undone by asking again.
A block is kept as keys, each a kind and a value, and a client is blocked at a school
when one of its keys (`lookup_keys`) is one the school blocked (`keys_to_block`):

- `client:<client_id>`: the registration itself (an integration is known by it alone);
- `origin:<scheme://host[:port]>`: a metadata-document client, by the origin of its
  document's URL (the domain that vouches for it: every URL it serves is that app);
- `name:<key>`: a self-registered client, by its name as a reader reads it: the
  confusable keys of `client_names.name_keys` (so "Grading Agent" returns neither as
  "Grading Agent (Official)" nor with a Cyrillic a). Blocking a metadata-document app
  also blocks its name for self-registered clients, which may claim any name; another
  domain's app of that name is that domain's, not blocked.

The keys are data, so the check where a token is issued (code exchange, every refresh)
is one indexed lookup by the grant's school and these keys.
"""

from __future__ import annotations

from typing import Literal, Protocol
from urllib.parse import urlsplit

from courseschool.common.errors import InvalidGrantError

from .client_names import client_kind, name_keys
from .context import TokenContext
from .models import Client, Grant

BlockKind = Literal["client", "origin", "name"]
BLOCKED = "the user's school blocked this client"  # access_denied / invalid_grant description
REASON = "school_blocked"  # a grant a block ended at its next use


class Blockable(Protocol):
    @property
    def client_id(self) -> str: ...

    @property
    def client_name(self) -> str | None: ...

    @property
    def is_integration(self) -> bool: ...

    @property
    def verified_origin(self) -> str | None: ...


def origin(url: str) -> str | None:
    """RFC 6454 §4: scheme, host and port of a URL (the port only when not the
    scheme's default), lower-cased; None when it has no host."""
    parts = urlsplit(url)
    if not parts.hostname:
        return None
    try:
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    default = {"https": 443, "http": 80}.get(scheme)
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{scheme}://{host}" + (f":{port}" if port is not None and port != default else "")


def _client(client: Blockable) -> tuple[BlockKind, str]:
    return "client", f"client:{client.client_id}"


def _origin(client: Blockable) -> list[tuple[BlockKind, str]]:
    found = origin(client.client_id)
    return [("origin", f"origin:{found}")] if found else []


def _names(client: Blockable) -> list[tuple[BlockKind, str]]:
    return [("name", f"name:{key}") for key in sorted(name_keys(client.client_name))] if client.client_name else []


def keys_to_block(client: Blockable) -> list[tuple[BlockKind, str]]:
    """What a block of `client` keeps: its id; a metadata document's origin and name;
    a self-registered client's name."""
    kind = client_kind(client)
    if kind == "integration":
        return [_client(client)]
    if kind == "metadata_document":
        return [_client(client), *_origin(client), *_names(client)]
    return [_client(client), *_names(client)]


def lookup_keys(client: Blockable) -> list[str]:
    """The keys under which a block covers `client`: its id, and its origin (a metadata
    document) or its name (self-registered)."""
    kind = client_kind(client)
    if kind == "integration":
        keys = [_client(client)]
    elif kind == "metadata_document":
        keys = [_client(client), *_origin(client)]
    else:
        keys = [_client(client), *_names(client)]
    return [key for _, key in keys]


async def refuse_if_blocked(grant: Grant, client: Client, ctx: TokenContext) -> None:
    """Where tokens are issued (the code exchange, every refresh): a grant of a client
    the grant's school blocked ends here, and the request is refused. A grant made
    before the block, or in flight while it was made, gets no token after it."""
    if await ctx.blocks.blocked(grant.school_id, lookup_keys(client)) is None:
        return
    await ctx.revoker.revoke_grant(grant.id, reason=REASON)
    raise InvalidGrantError(
        BLOCKED, detail=f"school {grant.school_id} blocked client {client.client_id}: grant {grant.id} ended"
    )
