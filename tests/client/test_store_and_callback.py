"""The library's rules that need no platform: where a sign-in is kept (the keyring when
one exists, else a 0600 file, announced), a damaged store, and the loopback listener's
refusals (wrong `iss`, wrong `state`, an error redirect), each with the page the browser
shows."""

from __future__ import annotations

import json
import logging
import stat
from collections.abc import Iterator
from pathlib import Path

import httpx
import keyring
import pytest

from courseschool_client.errors import AuthorizationRefused, StoreCorrupted
from courseschool_client.loopback import Listener, authorization_request, code_from
from courseschool_client.store import FileStore, KeyringStore, Record, open_store

from .keyring_backend import FileBackedKeyring

ISSUER = "http://school.test"


def record(**tokens: str) -> Record:
    return Record(ISSUER, ISSUER, "client-1", f"{ISSUER}/token", access_token="a.b.c", refresh_token="r-1", **tokens)


@pytest.fixture
def test_keyring(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("TEST_KEYRING_FILE", str(tmp_path / "keyring.json"))
    previous = keyring.get_keyring()
    keyring.set_keyring(FileBackedKeyring())
    yield tmp_path / "keyring.json"
    keyring.set_keyring(previous)


def test_a_keyring_is_used_where_one_exists(test_keyring: Path, tmp_path: Path) -> None:
    store = open_store("auto", tmp_path / "home")
    assert isinstance(store, KeyringStore) and "FileBackedKeyring" in store.where
    store.save(record())
    assert not (tmp_path / "home" / "credentials.json").exists()
    assert store.load(ISSUER) == record()


def test_without_a_keyring_the_file_is_0600_and_announced_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = FileStore(tmp_path / "home")
    with caplog.at_level(logging.WARNING, logger="courseschool_client"):
        store.save(record())
        store.save(record())
    path = tmp_path / "home" / "credentials.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "home").stat().st_mode) == 0o700
    assert [r.getMessage() for r in caplog.records].count(
        f"no OS keyring: sign-ins are kept in {path}, readable by you only (mode 0600)"
    ) == 1
    assert "a.b.c" not in caplog.text and "r-1" not in caplog.text


@pytest.mark.parametrize("content", ["{ not json", "[]", json.dumps({ISSUER: {"issuer": 3}})])
def test_a_damaged_store_says_so(tmp_path: Path, content: str) -> None:
    store = FileStore(tmp_path)
    store.path.write_text(content)
    with pytest.raises(StoreCorrupted, match="run logout, then login"):
        store.load(ISSUER)
    store.save(record())  # a new sign-in replaces what cannot be read
    assert store.load(ISSUER) == record()


@pytest.mark.parametrize(
    ("answer", "said", "page"),
    [
        ("code=c&state={state}&iss=http%3A%2F%2Fevil.test", "does not come from", "Not signed in"),
        ("code=c&state=forged&iss=http%3A%2F%2Fschool.test", "state does not match", "Not signed in"),
        ("error=access_denied&state={state}&iss=http%3A%2F%2Fschool.test", "refused: access_denied", "Not signed in"),
        ("code=c&state={state}&iss=http%3A%2F%2Fschool.test", "", "is signed in"),
    ],
    ids=["wrong-iss", "wrong-state", "error-redirect", "accepted"],
)
def test_the_listener_checks_iss_then_state_then_error(answer: str, said: str, page: str) -> None:
    holder = []
    with Listener(lambda url: code_from(url, holder[0], ISSUER), "My tool") as listener:
        request = authorization_request(
            f"{ISSUER}/authorize", client_id="c", redirect_uri=listener.redirect_uri, scope="openid", resource=ISSUER
        )
        holder.append(request)
        shown = httpx.get(f"{listener.redirect_uri}?{answer.format(state=request.state)}")
        assert page in shown.text and shown.headers["cache-control"] == "no-store"
        if said:
            assert shown.status_code == 400
            with pytest.raises(AuthorizationRefused, match=said):
                listener.wait(5)
        else:
            assert listener.wait(5) == "c"
        again = httpx.get(f"{listener.redirect_uri}?{answer.format(state=request.state)}")
        assert again.status_code == 409, "one answer per sign-in"


def test_sign_ins_of_several_platforms_saved_at_once_are_all_kept(tmp_path: Path) -> None:
    import threading

    store = FileStore(tmp_path / "home")
    platforms = [f"http://school-{n}.test" for n in range(16)]

    def save(base_url: str) -> None:
        for _ in range(5):
            store.save(Record(base_url, base_url, "client", f"{base_url}/token", refresh_token="r"))

    threads = [threading.Thread(target=save, args=(base_url,)) for base_url in platforms]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(json.loads(store.path.read_text())) == sorted(platforms)


def test_iss_is_required_only_where_the_server_sends_it_and_always_checked() -> None:
    request = authorization_request(
        f"{ISSUER}/authorize",
        client_id="c",
        redirect_uri="http://127.0.0.1:1/callback",
        scope="openid",
        resource=ISSUER,
    )
    bare = f"http://127.0.0.1:1/callback?code=c&state={request.state}"
    with pytest.raises(AuthorizationRefused, match="does not come from"):
        code_from(bare, request, ISSUER)
    assert code_from(bare, request, ISSUER, iss_required=False) == "c"
    with pytest.raises(AuthorizationRefused, match="does not come from"):
        code_from(bare + "&iss=http%3A%2F%2Fevil.test", request, ISSUER, iss_required=False)
