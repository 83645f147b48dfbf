"""What the grant handlers, revocation and introspection need, bundled: stores, the
signer and verifier, the token policy, the clock and the refresh tokens' lifetimes."""

from __future__ import annotations

import msgspec

from courseschool.common.clock import Clock

from .ports import AccessTokenVerifier, BlockStore, CodeStore, GrantStore, Revoker, Signer, UserStore
from .school_policy import PolicyStore
from .tokens import TokenPolicy


class TokenContext(msgspec.Struct, frozen=True, kw_only=True):
    users: UserStore
    codes: CodeStore
    grants: GrantStore
    revoker: Revoker
    blocks: BlockStore  # what schools blocked: checked at every code exchange and refresh
    policies: PolicyStore  # which apps schools let in (their policy, their approvals): checked there too
    signer: Signer
    verifier: AccessTokenVerifier
    policy: TokenPolicy
    clock: Clock
    refresh_idle_ttl: int
    refresh_absolute_ttl: int
    refresh_grace: int
    grants_per_app: int  # live grants one user may hold of one client (GRANTS_PER_APP)
    ip: str | None = None  # the request's address, for the events a handler records
