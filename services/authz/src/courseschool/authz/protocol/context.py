"""What the grant handlers need, bundled: stores, signer, token policy, clock."""

from __future__ import annotations

import msgspec

from .clock import Clock
from .ports import ClientStore, CodeStore, GrantStore, Signer, UserStore
from .tokens import TokenPolicy


class TokenContext(msgspec.Struct, frozen=True, kw_only=True):
    clients: ClientStore
    users: UserStore
    codes: CodeStore
    grants: GrantStore
    signer: Signer
    policy: TokenPolicy
    clock: Clock
    known_resources: frozenset[str]
