"""CSRF tokens of the forms that belong to no interaction (sign-out, connected apps,
the standalone sign-in page): an HMAC, under `page_key` (families.py) (derived from the
key-encryption key), of a value only this browser holds in an http-only cookie (the
session id, or the sign-in page's own cookie) and of the form's purpose, so a token
of one form is no token of another. Nothing is stored; another site can neither read
the cookie nor compute the MAC."""

from __future__ import annotations

import hashlib
import hmac

from courseschool.common.errors import ForbiddenError
from courseschool.common.secrets import same

from ..families import Visitors

NOT_FROM_THIS_PAGE = "The form was not sent from this page. Go back and try again."


def form_token(c: Visitors, purpose: str, bound_to: str) -> str:
    return hmac.new(c.page_key, f"{purpose}:{bound_to}".encode(), hashlib.sha256).hexdigest()


def check_form_token(c: Visitors, purpose: str, bound_to: str, sent: str) -> None:
    """403 unless `sent` is the token of this purpose for this browser's value."""
    if not same(sent, form_token(c, purpose, bound_to)):
        raise ForbiddenError(NOT_FROM_THIS_PAGE)
