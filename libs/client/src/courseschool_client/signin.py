"""One interactive sign-in: discovery, the client's id (a metadata-document URL, the one
remembered for this platform, or a new registration), the browser step (loopback, or the
address pasted back with `no_browser`), the code exchange."""

from __future__ import annotations

import logging
import secrets
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from . import dpop, tokens
from .discovery import Server, discover
from .loopback import CALLBACK_PATH, AuthorizationRequest, Listener, authorization_request, code_from
from .store import Record

log = logging.getLogger("courseschool_client")
Opener = Callable[[str], object]


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _ask(prompt: str) -> str:
    _say(prompt)
    return sys.stdin.readline()


@dataclass
class Interaction:
    """How the person is reached. `open_browser` is `webbrowser.open` unless a caller (a
    test, a GUI) opens the address itself; `no_browser` prints it and reads back the
    address the browser ended at."""

    open_browser: Opener
    no_browser: bool = False
    say: Callable[[str], None] = field(default=_say)
    ask: Callable[[str], str] = field(default=_ask)
    timeout: float = 300.0


def client_for(
    http: httpx.Client, server: Server, previous: Record | None, name: str, metadata_url: str | None
) -> tuple[str, str, str]:
    """The client id, and its registration's URI and token when it registered itself."""
    if metadata_url and server.cimd_supported:
        return metadata_url, "", ""  # a Client ID Metadata Document: its URL is the client id
    if previous and previous.issuer == server.issuer and previous.client_id and previous.client_id != metadata_url:
        if tokens.still_registered(http, previous):  # registered once per platform, remembered
            return previous.client_id, previous.registration_uri, previous.registration_token
        log.warning("the registration remembered for %s is gone: registering again", server.base_url)
    return tokens.register(http, server, name)


def sign_in(
    http: httpx.Client,
    base_url: str,
    scope: str | None,
    *,
    previous: Record | None,
    interaction: Interaction,
    client_name: str,
    metadata_url: str | None = None,
    use_dpop: bool = False,
) -> Record:
    """A new sign-in; the caller stores the record (under the refresh lock)."""
    server = discover(http, base_url)
    client_id, registration_uri, registration_token = client_for(http, server, previous, client_name, metadata_url)
    record = Record(
        base_url=server.base_url,
        issuer=server.issuer,
        client_id=client_id,
        token_endpoint=server.token_endpoint,
        revocation_endpoint=server.revocation_endpoint,
        userinfo_endpoint=server.userinfo_endpoint,
        registration_uri=registration_uri,
        registration_token=registration_token,
    )
    if use_dpop:
        record.dpop_key = (previous.dpop_key if previous else None) or dpop.new_key()
    wanted = scope or " ".join(server.scopes_supported)

    def request_for(redirect_uri: str) -> AuthorizationRequest:
        jkt = dpop.thumbprint(record.dpop_key) if record.dpop_key else None
        return authorization_request(
            server.authorization_endpoint,
            client_id=record.client_id,
            redirect_uri=redirect_uri,
            scope=wanted,
            resource=server.resource,
            dpop_jkt=jkt,
        )

    if interaction.no_browser:
        # Nothing listens: the browser (on any computer) ends at an address that does not load.
        request = request_for(f"http://127.0.0.1:{secrets.randbelow(20000) + 40000}{CALLBACK_PATH}")
        interaction.say(
            "Open this address in a browser, on any computer, sign in and approve:\n\n"
            f"  {request.url}\n\n"
            "The browser then ends at an address that does not load (http://127.0.0.1:...).\n"
            "Copy that whole address from the address bar and paste it here, within a minute."
        )
        code = code_from(interaction.ask("Address: "), request, server.issuer, iss_required=server.iss_in_answers)
    else:
        holder: list[AuthorizationRequest] = []

        def check(url: str) -> str:
            return code_from(url, holder[0], server.issuer, iss_required=server.iss_in_answers)

        with Listener(check, client_name) as listener:
            holder.append(request_for(listener.redirect_uri))
            interaction.say(f"Opening the browser to sign in to {server.base_url}. If it does not open, visit:\n")
            interaction.say(f"  {holder[0].url}\n")
            interaction.open_browser(holder[0].url)
            code = listener.wait(interaction.timeout)
        request = holder[0]

    answer: dict[str, Any] = tokens.token_request(
        http,
        record,
        {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": request.redirect_uri,
            "code_verifier": request.verifier,
        },
    )
    tokens.apply(record, answer)
    log.info("signed in to %s with scope %s", server.base_url, record.scope)
    return record
