"""The browser step of a native app (RFC 8252): an authorization request with PKCE S256
(RFC 7636) and `state`, a listener on `127.0.0.1` on a free port (§7.3), and the checks
of the answer: `iss` first (RFC 9207 §2.4), then `state`, then `error` (RFC 6749 §4.1.2.1).
The person's browser gets a page that says how it ended."""

from __future__ import annotations

import base64
import hashlib
import html
import queue
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from urllib.parse import parse_qsl, urlencode, urlsplit

from .errors import AuthorizationRefused

CALLBACK_PATH = "/callback"


@dataclass(frozen=True)
class AuthorizationRequest:
    url: str
    redirect_uri: str
    state: str
    verifier: str


def s256(verifier: str) -> str:
    """RFC 7636 §4.2: BASE64URL(SHA256(ASCII(code_verifier)))."""
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest()).rstrip(b"=").decode()


def authorization_request(
    endpoint: str, *, client_id: str, redirect_uri: str, scope: str, resource: str, dpop_jkt: str | None = None
) -> AuthorizationRequest:
    verifier = secrets.token_urlsafe(48)  # 64 characters of the unreserved set (RFC 7636 §4.1)
    state = secrets.token_urlsafe(16)
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "scope": scope,
        "code_challenge": s256(verifier),
        "code_challenge_method": "S256",
        "state": state,
        "resource": resource,
    }
    if dpop_jkt:
        params["dpop_jkt"] = dpop_jkt  # RFC 9449 §10: the code is bound to this key
    return AuthorizationRequest(f"{endpoint}?{urlencode(params)}", redirect_uri, state, verifier)


def code_from(callback_url: str, request: AuthorizationRequest, issuer: str, *, iss_required: bool = True) -> str:
    """The code of the browser's answer, once it is known to be this request's answer.
    `iss` must be there when the server says it sends it, and right whenever it is there."""
    parts = urlsplit(callback_url.strip())
    expected = urlsplit(request.redirect_uri)
    if parts.path != expected.path or not parts.query:
        raise AuthorizationRefused("that is not the address the sign-in ended at (no answer in it)")
    answer = dict(parse_qsl(parts.query, keep_blank_values=True))
    # RFC 9207 §2.4: a mix-up, or not an answer of this server
    if ("iss" in answer or iss_required) and answer.get("iss") != issuer:
        raise AuthorizationRefused(f"the answer does not come from {issuer} (iss): it was not used")
    if not secrets.compare_digest(answer.get("state", ""), request.state):
        raise AuthorizationRefused("the answer is not for this sign-in (state does not match): it was not used")
    if "error" in answer:
        description = answer.get("error_description", "")
        raise AuthorizationRefused(
            f"the sign-in was refused: {answer['error']}" + (f": {description}" if description else "")
        )
    if not answer.get("code"):
        raise AuthorizationRefused("the answer holds no authorization code")
    return answer["code"]


PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>{title}</title>
<style>body{{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:4rem auto;padding:0 1rem}}</style>
</head><body><h1>{title}</h1><p>{message}</p></body></html>"""


def page(title: str, message: str) -> bytes:
    return PAGE.format(title=html.escape(title), message=html.escape(message)).encode()


class Listener:
    """A one-shot HTTP listener on 127.0.0.1 (a free port) for the redirect. `check` turns
    the callback URL into a code or raises `AuthorizationRefused`; the browser is told which."""

    def __init__(self, check: Callable[[str], str], app_name: str) -> None:
        self._answers: queue.Queue[str | AuthorizationRefused] = queue.Queue()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler(check, app_name))
        self._thread = threading.Thread(target=self._server.serve_forever, name="courseschool-callback", daemon=True)

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}{CALLBACK_PATH}"

    def __enter__(self) -> Listener:
        self._thread.start()
        return self

    def __exit__(self, *exc: tuple[type[BaseException] | None, BaseException | None, TracebackType | None]) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def wait(self, timeout: float) -> str:
        """The code, once the browser came back; raises what the answer was refused for."""
        try:
            answer = self._answers.get(timeout=timeout)
        except queue.Empty:
            raise AuthorizationRefused(f"no answer from the browser within {timeout:.0f} s") from None
        if isinstance(answer, AuthorizationRefused):
            raise answer
        return answer

    def _handler(self, check: Callable[[str], str], app_name: str) -> type[BaseHTTPRequestHandler]:
        answers = self._answers
        taken = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if urlsplit(self.path).path != CALLBACK_PATH:
                    self._send(404, page("Not found", "Nothing here."))
                    return
                if not taken.acquire(blocking=False):
                    self._send(409, page("Already done", f"{app_name} already has its answer."))
                    return
                try:
                    code = check(f"http://{self.headers.get('Host', '127.0.0.1')}{self.path}")
                except AuthorizationRefused as refused:
                    answers.put(refused)
                    self._send(400, page("Not signed in", f"{app_name} was not signed in: {refused}."))
                    return
                answers.put(code)
                self._send(200, page("Signed in", f"{app_name} is signed in. You can close this window."))

            def _send(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.send_header("Referrer-Policy", "no-referrer")  # the code never leaves in a Referer
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass  # the request line holds the code: never logged

        return Handler
