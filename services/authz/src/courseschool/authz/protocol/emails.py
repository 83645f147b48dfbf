"""One canonical form of an email address, for every lookup and every key.

Unicode compatibility caseless matching (The Unicode Standard §3.13, D146; UAX #15):
NFKC, full case folding, NFKC again. Width and compatibility variants (fullwidth letters,
ligatures) and every case variant that case folding knows (`VICTIM`, `Straße` and
`STRASSE`) have one form. U+0130 (`İ`) folds to `i` with a combining dot above, so
`vİctim@…` is another address than `victim@…`, not a spelling of it: it finds no
user, and counts against its own lockout key, never a look-alike's.

The users table stores this form beside the address as typed (`email_canonical`,
unique), and the sign-in lockout keys are derived from it, so a lookup and a lock
can never disagree about which account an address means (PostgreSQL's `lower()`
and Python's `lower()` did: security review, finding 6).
"""

from __future__ import annotations

import unicodedata


def canonical_email(email: str) -> str:
    """The form an address is compared and keyed by (idempotent)."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", email.strip()).casefold())
