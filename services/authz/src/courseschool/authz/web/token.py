"""POST /api/oauth/token: the token endpoint, RFC 6749 §3.2, with DPoP (RFC 9449 §5):
the proof comes in the `DPoP` header, and its nonce goes back in `DPoP-Nonce`. Also
served at `/token`, the origin's default path of the MCP 2025-03-26 fallback (listed in
no metadata: some agent clients refresh there before they have read it)."""

from __future__ import annotations

import msgspec

from courseschool.common.answers import NO_STORE
from courseschool.common.web import proof_target

from ..endpoints.token import exchange_token
from .http import FormAnswer, FormPost, form_post


@form_post(["/api/oauth/token", "/token"])
async def token(post: FormPost) -> FormAnswer:
    tokens = post.tokens
    dpop = proof_target(post.scope, tokens.settings.base_url)
    response = await exchange_token(tokens, post.form, ip=post.ip, authorization=post.authorization, dpop=dpop)
    return FormAnswer(msgspec.json.encode(response), {**NO_STORE, **await tokens.dpop.nonce_header(dpop)})
