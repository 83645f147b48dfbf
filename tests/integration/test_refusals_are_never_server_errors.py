"""Every header and form field the token, revocation, introspection, registration and
logout endpoints read, fuzzed with hypothesis over the raw request: arbitrary bytes and
text (control characters, NUL, invalid UTF-8, percent-encoded junk) in the
`Authorization`, `DPoP`, `Content-Type` and `Cookie` headers, in every form field and
in the registration's JSON. Whatever comes in, the answer is never a 5xx: the JSON
endpoints answer success or the RFC 6749 §5.2 shape `{"error", "error_description"}`
with the status its code has; sign-out answers a page and, with no session to end,
never redirects. The class "a malformed credential crashes the request" is closed
here, not one instance of it (a NUL in a Basic client_id used to be a 500).

Bounded and deterministic: a fixed number of examples per endpoint, derandomized, no
example database; the limits are raised so the requests reach past the limiter."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote_from_bytes, unquote_plus

import httpx
import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from courseschool.authz.app import create_app
from courseschool.authz.settings import RATE_NAMES, AuthzSettings

from .conftest import serve
from .flow import REDIRECT_URI, Flow

EXAMPLES = 100  # per test: a few seconds each
FUZZ = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)

# The status each error code is answered with (RFC 6749 §5.2, RFC 6750 §3.1, RFC 6585 §4).
STATUS = {
    "invalid_client": 401,
    "invalid_token": 401,
    "too_many_requests": 429,
    "not_found": 404,  # a path that names no route (a "/" in a client id)
    "method_not_allowed": 405,
    "payload_too_large": 413,
    "unsupported_media_type": 415,
}
OAUTH_400 = {
    "invalid_request",
    "invalid_grant",
    "invalid_scope",
    "invalid_target",
    "unsupported_grant_type",
    "unauthorized_client",
    "invalid_client_metadata",
    "invalid_redirect_uri",
    "invalid_dpop_proof",
    "use_dpop_nonce",
    "unsupported_token_type",
}

TOKEN_FIELDS = (
    "grant_type",
    "client_id",
    "client_secret",
    "code",
    "redirect_uri",
    "code_verifier",
    "refresh_token",
    "scope",
    "token",
    "token_type_hint",
    "resource",
)
LOGOUT_FIELDS = ("client_id", "id_token_hint", "post_logout_redirect_uri", "state", "csrf", "logout_hint")
REGISTRATION_FIELDS = (
    "client_id",
    "client_name",
    "redirect_uris",
    "token_endpoint_auth_method",
    "grant_types",
    "response_types",
    "application_type",
    "scope",
    "id_token_signed_response_alg",
    "dpop_bound_access_tokens",
)
JUNK = [
    b"",
    b"\x00",
    b"a\x00b",
    b"\xff\xfe",
    b"\xc0\x80",
    b"\xed\xa0\x80",  # an encoded lone surrogate
    b"%00",
    b"%ff%fe",
    b"%zz",
    b"%",
    b"\r\n",
    b"\x1b[31m",
    "\u202e".encode(),
    b"=&=&",
    b"refresh_token",
    b"authorization_code",
    b"client_credentials",
    REDIRECT_URI.encode(),
    b"https://app.example/client.json",
    b"x" * 5000,
]


# Every C0 control, DEL, a C1 control in UTF-8, and some percent-encoded ones.
CONTROLS = [bytes([c]) for c in range(32)] + [b"\x7f", b"\xc2\x85", b"%00", b"%0A", b"%7f", b"+%00+"]


def _values(known: list[bytes]) -> st.SearchStrategy[bytes]:
    """Arbitrary bytes, arbitrary text as UTF-8, the junk above, real values, and real
    values with a control character inside."""
    real = st.sampled_from(known or [b"x"])
    with_control = st.tuples(real, st.integers(0, 24), st.sampled_from(CONTROLS)).map(
        lambda p: p[0][: p[1]] + p[2] + p[0][p[1] :]
    )
    return st.one_of(
        st.binary(max_size=48),
        st.text(max_size=48).map(lambda t: t.encode("utf-8", "surrogatepass")),
        st.sampled_from(JUNK + known),
        st.sampled_from(CONTROLS),
        with_control,
    )


def _encoded(value: bytes, how: str) -> bytes:
    return quote_from_bytes(value).encode() if how == "percent" else value


def _form(fields: tuple[str, ...], known: list[bytes]) -> st.SearchStrategy[bytes]:
    """A form body: fields (repeated or not) and a stray name, each value percent-encoded
    or put in raw."""
    pair = st.tuples(st.sampled_from((*fields, "junk")), _values(known), st.sampled_from(("percent", "raw")))
    pairs = st.one_of(st.lists(pair, max_size=6, unique_by=lambda p: p[0]), st.lists(pair, max_size=6))
    return pairs.map(lambda drawn: b"&".join(name.encode() + b"=" + _encoded(value, how) for name, value, how in drawn))


def _header(prefixes: tuple[bytes, ...], known: list[bytes], values: list[bytes]) -> st.SearchStrategy[bytes | None]:
    """No header, junk, a scheme and junk (or its base64), HTTP Basic of an `id:secret`
    pair drawn from the values (twice as likely: it reaches the client lookup), or a real
    credential."""
    raw = _values(values)
    basic = st.tuples(raw, raw).map(lambda p: b"Basic " + base64.b64encode(p[0] + b":" + p[1]))
    return st.one_of(
        st.none(),
        raw,
        st.tuples(st.sampled_from(prefixes), raw).map(lambda p: p[0] + p[1]),
        st.tuples(st.sampled_from(prefixes), raw).map(lambda p: p[0] + base64.b64encode(p[1])),
        basic,
        basic,
        st.sampled_from(known),
    )


FORM_TYPES = [b"application/x-www-form-urlencoded", b"application/x-www-form-urlencoded; charset=utf-8"]
JSON_TYPES = [b"application/json", b"application/json; charset=utf-8"]


def _content_type(usual: list[bytes]) -> st.SearchStrategy[bytes | None]:
    """Mostly the right type, so that most requests reach the fields."""
    other = st.one_of(st.none(), _values([]), st.sampled_from(JSON_TYPES + FORM_TYPES))
    return st.one_of(st.sampled_from(usual), st.sampled_from(usual), st.sampled_from(usual), other)


def _request_headers(**given: bytes | None) -> list[tuple[bytes, bytes]]:
    return [(name.replace("_", "-").encode(), value) for name, value in given.items() if value is not None]


def _assert_json_answer(answer: httpx.Response) -> None:
    assert answer.status_code < 500, answer.text
    if answer.status_code == 204:
        return
    assert answer.headers["content-type"].startswith("application/json"), answer.headers
    body = answer.json()
    assert isinstance(body, dict)
    if answer.status_code < 400:
        return
    assert set(body) <= {"error", "error_description"} and isinstance(body["error"], str), body
    assert isinstance(body.get("error_description", ""), str)
    expected = STATUS.get(body["error"], 400 if body["error"] in OAUTH_400 else None)
    assert answer.status_code == expected, (answer.status_code, body)
    if answer.status_code == 401:
        assert answer.headers.get("www-authenticate", "").split(" ")[0] in ("", "Basic", "Bearer"), answer.headers
    if answer.status_code == 429:
        assert int(answer.headers["retry-after"]) > 0


class Known:
    """Real values among the junk, so requests also reach past client authentication."""

    def __init__(self, public: dict[str, Any], basic: dict[str, Any], post: dict[str, Any]) -> None:
        self.values = [
            public["client_id"].encode(),
            basic["client_id"].encode(),
            post["client_id"].encode(),
            post["client_secret"].encode(),
            public["registration_access_token"].encode(),
        ]
        self.authorizations = [
            b"Basic " + base64.b64encode(f"{basic['client_id']}:{basic['client_secret']}".encode()),
            b"Basic " + base64.b64encode(f"{public['client_id']}:".encode()),
            b"Bearer " + public["registration_access_token"].encode(),
        ]
        self.configuration_path = f"/api/oauth/register/{public['client_id']}"


@pytest.fixture
async def fuzzed(authz_settings: AuthzSettings, clean_db, redis_client, clock) -> AsyncIterator[tuple[Flow, Known]]:
    generous = {name: "1000000/60" for name in RATE_NAMES}
    app_settings = AuthzSettings(**{**msgspec.structs.asdict(authz_settings), **generous})
    async with serve(create_app(app_settings, clock=clock)) as client:
        flow = Flow(client, clean_db, redis_client)
        public = await flow.register()
        basic = await flow.register(token_endpoint_auth_method="client_secret_basic")
        post = await flow.register(token_endpoint_auth_method="client_secret_post")
        yield flow, Known(public, basic, post)


TOKEN_PATHS = ("/api/oauth/token", "/token", "/api/oauth/revoke", "/api/oauth/introspect")


@FUZZ
@given(data=st.data())
async def test_token_revocation_and_introspection_refuse_any_request_cleanly(
    fuzzed: tuple[Flow, Known], data: st.DataObject
) -> None:
    flow, known = fuzzed
    path = data.draw(st.sampled_from(TOKEN_PATHS), "path")
    body = data.draw(_form(TOKEN_FIELDS, known.values), "body")
    headers = _request_headers(
        authorization=data.draw(
            _header((b"Basic ", b"basic ", b"Bearer ", b""), known.authorizations, known.values), "authorization"
        ),
        dpop=data.draw(st.one_of(st.none(), _values([])), "dpop"),
        content_type=data.draw(_content_type(FORM_TYPES), "content_type"),
    )
    answer = await flow.client.post(path, content=body, headers=headers)
    _assert_json_answer(answer)


def _has_control(value: bytes, *, form_encoded: bool) -> bool:
    """A control character in the value as the server reads it (UTF-8; inside HTTP Basic
    each part is form-decoded too, RFC 6749 §2.3.1)."""
    text = value.decode("utf-8", "replace")
    return any(ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F for ch in (unquote_plus(text) if form_encoded else text))


@FUZZ
@given(data=st.data())
async def test_client_credentials_of_any_bytes_are_answered_and_control_characters_are_invalid_client(
    fuzzed: tuple[Flow, Known], data: st.DataObject
) -> None:
    """The credentials alone varied, in an otherwise well-formed request, so every example
    reaches client authentication: HTTP Basic of `id:secret`, or the form's fields."""
    flow, known = fuzzed
    path = data.draw(st.sampled_from(TOKEN_PATHS), "path")
    client_id = data.draw(_values(known.values), "client_id")
    secret = data.draw(_values(known.values), "secret")
    form = b"grant_type=refresh_token&refresh_token=r&token=t"
    in_header = data.draw(st.booleans(), "in the header")
    if in_header:
        headers = {"Authorization": b"Basic " + base64.b64encode(client_id + b":" + secret)}
        readable = b":" not in client_id and client_id != b""
    else:
        headers = {}
        form += (
            b"&client_id="
            + quote_from_bytes(client_id).encode()
            + b"&client_secret="
            + quote_from_bytes(secret).encode()
        )
        # A NUL in a form is invalid_request, and so is a value longer than 4096 characters.
        readable = client_id != b"" and b"\x00" not in client_id + secret and max(len(client_id), len(secret)) <= 4096
    headers["Content-Type"] = FORM_TYPES[0]
    answer = await flow.client.post(path, content=form, headers=headers)
    _assert_json_answer(answer)
    if readable and any(_has_control(v, form_encoded=in_header) for v in (client_id, secret)):
        assert answer.status_code == 401 and answer.json()["error"] == "invalid_client", answer.text


def _json_bodies(known: list[bytes]) -> st.SearchStrategy[bytes]:
    text = _values(known).map(lambda b: b.decode("utf-8", "replace"))
    leaf = st.one_of(st.none(), st.booleans(), st.integers(), text)
    value = st.recursive(leaf, lambda inner: st.lists(inner, max_size=3), max_leaves=6)
    document = st.dictionaries(st.sampled_from(REGISTRATION_FIELDS), value, max_size=6)
    return st.one_of(
        document.map(lambda d: json.dumps(d).encode()),
        document.map(lambda d: json.dumps(d, ensure_ascii=False).encode("utf-8", "surrogatepass")),
        _values(known),
        st.tuples(document, _values([])).map(lambda p: json.dumps(p[0]).encode()[:-1] + p[1] + b"}"),
    )


REGISTRATION_CALLS = (
    ("POST", "/api/oauth/register"),
    ("POST", "/register"),
    ("GET", "config"),
    ("PUT", "config"),
    ("DELETE", "config"),
)


@FUZZ
@given(data=st.data())
async def test_registration_and_client_configuration_refuse_any_request_cleanly(
    fuzzed: tuple[Flow, Known], data: st.DataObject
) -> None:
    flow, known = fuzzed
    method, where = data.draw(st.sampled_from(REGISTRATION_CALLS), "call")
    path = where
    if where == "config":
        client_id = data.draw(st.one_of(st.just(known.configuration_path), _values(known.values)), "client_id")
        path = client_id if isinstance(client_id, str) else "/api/oauth/register/" + quote_from_bytes(client_id)
    body = data.draw(_json_bodies(known.values), "body") if method in ("POST", "PUT") else b""
    headers = _request_headers(
        authorization=data.draw(
            _header((b"Bearer ", b"bearer ", b"DPoP ", b"Basic "), known.authorizations, known.values), "auth"
        ),
        content_type=data.draw(_content_type(JSON_TYPES), "content_type"),
    )
    answer = await flow.client.request(method, path, content=body, headers=headers)
    _assert_json_answer(answer)


@FUZZ
@given(data=st.data())
async def test_logout_refuses_any_request_cleanly_and_never_redirects_without_a_session(
    fuzzed: tuple[Flow, Known], data: st.DataObject
) -> None:
    flow, known = fuzzed
    method = data.draw(st.sampled_from(("GET", "POST")), "method")
    fields = data.draw(_form(LOGOUT_FIELDS, known.values), "fields")
    headers = _request_headers(
        cookie=data.draw(st.one_of(st.none(), _values([]).map(lambda v: b"cs_session=" + v), _values([])), "cookie"),
        content_type=data.draw(_content_type(FORM_TYPES), "content_type") if method == "POST" else None,
    )
    if method == "GET":
        # A request line holds no raw control or non-ASCII byte: those are percent-encoded,
        # the rest (percent junk included) is sent as drawn.
        answer = await flow.client.get(f"/oauth/logout?{quote_from_bytes(fields, safe='%&=+')}", headers=headers)
    else:
        answer = await flow.client.post("/oauth/logout", content=fields, headers=headers)
    assert answer.status_code < 500, answer.text
    assert "location" not in answer.headers  # no session here: nothing ever redirects
    assert answer.headers["content-type"].startswith("text/html")
