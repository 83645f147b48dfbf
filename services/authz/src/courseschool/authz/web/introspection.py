"""POST /api/oauth/introspect: token introspection, RFC 7662 §2."""

from __future__ import annotations

import msgspec

from courseschool.common.answers import NO_STORE

from ..endpoints.introspection import introspect_token
from .http import FormAnswer, FormPost, form_post


@form_post(["/api/oauth/introspect"])
async def introspect(post: FormPost) -> FormAnswer:
    answer = await introspect_token(post.tokens, post.form, ip=post.ip, authorization=post.authorization)
    return FormAnswer(msgspec.json.encode(answer), NO_STORE)
