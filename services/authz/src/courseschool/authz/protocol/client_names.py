"""Client names, which people read on the consent page (RFC 7591 §2 `client_name`;
§5 warns that a client may claim any name, and RFC 6819 §4.2.2 that a person misled
about which client asks will grant it access).

Only an administrator's integration has a name the school vouches for. Everyone else's
name is self-declared: it may hold no hidden characters (`courseschool.common.text`),
and may not be an integration's name in another dress: compared after NFKC
(compatibility forms: full-width letters, ligatures), case folding, without
punctuation, symbols, marks and spacing, and without decorations such as "(verified)"
or "official", "CRM (Verified)" is "CRM". Look-alikes across scripts (a Cyrillic Es
for a Latin C) are not caught here; the consent page says the name is self-declared.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from typing import Literal, Protocol

from courseschool.common.text import has_hidden

MAX_NAME_LENGTH = 200
# Words that claim a status the name's owner cannot give itself.
DECORATIONS = frozenset({"verified", "official", "trusted", "certified", "authentic", "genuine", "approved"})

ClientKind = Literal["integration", "metadata_document", "self_registered"]


class Vouched(Protocol):
    """What tells who stands behind a name: a client, or a grant read with its client."""

    @property
    def is_integration(self) -> bool: ...

    @property
    def verified_origin(self) -> str | None: ...


def client_kind(client: Vouched) -> ClientKind:
    """Who stands behind the client's name: the school's administrator (an integration),
    the domain serving its metadata document, or nobody but the client itself."""
    if client.is_integration:
        return "integration"
    if client.verified_origin is not None:
        return "metadata_document"
    return "self_registered"


def name_problem(name: str) -> str | None:
    """Why a self-declared `client_name` cannot be shown, or None if it can."""
    if not 0 < len(name) <= MAX_NAME_LENGTH:
        return f"client_name must be 1 to {MAX_NAME_LENGTH} characters"
    if has_hidden(name):
        return (
            "client_name must not hold control, format (bidirectional override, zero-width) or private-use characters"
        )
    return None


def comparable_name(name: str) -> str:
    """The form in which two names are the same name to a reader."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())
    kept = []
    for ch in folded:
        category = unicodedata.category(ch)[0]
        if category in "LN":
            kept.append(ch)
        elif category != "M":  # punctuation, symbols, spaces, controls: word breaks
            kept.append(" ")
    return "".join(word for word in "".join(kept).split() if word not in DECORATIONS)


def imitates(name: str, integration_names: Iterable[str]) -> bool:
    """True when `name` reads as one of the integrations' names."""
    mine = comparable_name(name)
    return any(mine == comparable_name(theirs) for theirs in integration_names)
