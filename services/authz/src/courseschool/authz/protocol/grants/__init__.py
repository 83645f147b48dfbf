"""One module per `grant_type` (RFC 6749 §4), and the table the token endpoint
dispatches on (§3.2: the grant type decides what the request holds). A handler gets the
thumbprint of the request's DPoP proof key (RFC 9449 §5), None without a proof."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ..context import TokenContext
from ..models import Client, TokenResponse
from ..token_request import TokenForm
from . import authorization_code, refresh_token

GrantHandler = Callable[[TokenForm, Client, TokenContext, str | None], Awaitable[TokenResponse]]

GRANT_HANDLERS: dict[str, GrantHandler] = {
    authorization_code.GRANT_TYPE: authorization_code.exchange_code,
    refresh_token.GRANT_TYPE: refresh_token.refresh,
}
