"""POST /api/oauth/revoke: token revocation, RFC 7009 §2."""

from __future__ import annotations

from courseschool.common.answers import NO_STORE

from ..endpoints.revocation import revoke_token
from .http import FormAnswer, FormPost, form_post


@form_post(["/api/oauth/revoke"])
async def revoke(post: FormPost) -> FormAnswer:
    """§2.2: 200 with an empty body, known token or not."""
    await revoke_token(post.tokens, post.form, ip=post.ip, authorization=post.authorization)
    return FormAnswer(b"", NO_STORE)
