"""`CourseSchool`: a signed-in platform, kept signed in. An `httpx.Auth`, so that
`httpx.Client(auth=CourseSchool.login(base_url))` sends a fresh token on every request,
refreshes it before it expires (one process at a time: the refresh lock), and steps up
when the API answers `403 insufficient_scope` (the person approves the union of what the
sign-in holds and what the challenge names)."""

from __future__ import annotations

import logging
import re
import time
import webbrowser
from collections.abc import Generator
from pathlib import Path
from typing import Any

import httpx

from . import dpop, tokens
from .discovery import normalise
from .errors import SignInRequired, StoreCorrupted, TokenEndpointError
from .signin import Interaction, Opener, sign_in
from .store import Record, Storage, Store, home, open_store, refresh_lock

log = logging.getLogger("courseschool_client")
MARGIN = 60.0  # refresh this many seconds before the access token expires
CHALLENGE_PARAM = re.compile(r'(\w+)="([^"]*)"')


def challenge(response: httpx.Response) -> dict[str, str]:
    """The parameters of the first challenge that names an error (RFC 6750 §3)."""
    for header in response.headers.get_list("WWW-Authenticate"):
        params = dict(CHALLENGE_PARAM.findall(header))
        if "error" in params:
            return params
    return {}


class CourseSchool(httpx.Auth):
    def __init__(
        self, record: Record, store: Store, *, folder: Path, interaction: Interaction, client_name: str
    ) -> None:
        self.record = record
        self.store = store
        self.folder = folder
        self.interaction = interaction
        self.client_name = client_name
        self.http = httpx.Client(timeout=30.0)

    # -- getting one ---------------------------------------------------------------------

    @classmethod
    def login(
        cls,
        base_url: str,
        *,
        scope: str | None = None,
        force: bool = False,
        no_browser: bool = False,
        open_browser: Opener = webbrowser.open,
        storage: Storage = "auto",
        folder: Path | None = None,
        client_name: str = "Course School command-line client",
        client_metadata_url: str | None = None,
        dpop: bool = False,
        interaction: Interaction | None = None,
    ) -> CourseSchool:
        """The stored sign-in when it holds `scope` (no browser then), else a new one."""
        folder = folder or home()
        store = open_store(storage, folder)
        base_url = normalise(base_url)
        interaction = interaction or Interaction(open_browser=open_browser, no_browser=no_browser)
        try:
            stored = store.load(base_url)
        except StoreCorrupted as damaged:
            log.warning("%s; a new sign-in replaces it", damaged)
            stored = None
        if stored and stored.signed_in and not force and set((scope or "").split()) <= set(stored.scope.split()):
            return cls(stored, store, folder=folder, interaction=interaction, client_name=client_name)
        session = cls(
            stored or Record(base_url, "", "", ""),
            store,
            folder=folder,
            interaction=interaction,
            client_name=client_name,
        )
        session._sign_in(scope, metadata_url=client_metadata_url, use_dpop=dpop)
        return session

    @classmethod
    def stored(
        cls,
        base_url: str,
        *,
        storage: Storage = "auto",
        folder: Path | None = None,
        open_browser: Opener = webbrowser.open,
    ) -> CourseSchool:
        """The sign-in kept for `base_url`; `SignInRequired` when there is none."""
        folder = folder or home()
        store = open_store(storage, folder)
        base_url = normalise(base_url)
        record = store.load(base_url)
        if record is None or not record.signed_in:
            raise SignInRequired(base_url, f"not signed in to {base_url}")
        interaction = Interaction(open_browser=open_browser)
        return cls(
            record, store, folder=folder, interaction=interaction, client_name="Course School command-line client"
        )

    # -- the sign-in's life --------------------------------------------------------------

    def _sign_in(self, scope: str | None, *, metadata_url: str | None = None, use_dpop: bool | None = None) -> None:
        previous = self.record if self.record.client_id else None
        with_dpop = bool(self.record.dpop_key) if use_dpop is None else use_dpop
        record = sign_in(
            self.http,
            self.record.base_url,
            scope,
            previous=previous,
            interaction=self.interaction,
            client_name=self.client_name,
            metadata_url=metadata_url,
            use_dpop=with_dpop,
        )
        with refresh_lock(record.base_url, self.folder):
            self.store.save(record)
        self.record = record

    def access_token(self) -> str:
        """A token that is not about to expire: refreshed first when it is."""
        if self.record.expires_at - MARGIN <= time.time():
            self.refresh(stale=self.record.access_token)
        return self.record.access_token

    def refresh(self, stale: str | None = None) -> bool:
        """Replace `stale` (None: whatever is stored). Under the lock, the store is read
        again: when another process already replaced that token, its answer is used and
        no refresh token is spent. True when this call spent one."""
        base_url = self.record.base_url
        with refresh_lock(base_url, self.folder):
            current = self.store.load(base_url)
            if current is None or not current.refresh_token:
                raise SignInRequired(base_url, f"not signed in to {base_url}")
            fresh = current.expires_at - MARGIN > time.time()
            if stale is not None and current.access_token != stale and fresh:
                self.record = current
                return False
            try:
                answer = tokens.token_request(
                    self.http, current, {"grant_type": "refresh_token", "refresh_token": current.refresh_token}
                )
            except TokenEndpointError as refused:
                if refused.error != "invalid_grant":
                    raise
                current.access_token = current.refresh_token = ""
                current.expires_at, current.scope = 0.0, ""
                self.store.save(current)  # forget the ended grant; keep the registration
                self.record = current
                raise SignInRequired(base_url, f"the sign-in to {base_url} has ended (revoked or expired)") from None
            tokens.apply(current, answer)
            self.store.save(current)  # stored before the new token is used
            self.record = current
            log.info("refreshed the sign-in to %s", base_url)
            return True

    def step_up(self, needed: str) -> None:
        """Ask the person again for what the sign-in holds plus `needed` (the union). In
        the same browser the new grant replaces the old one; the old refresh token is
        revoked anyway, so that one install keeps one sign-in."""
        old = self.record.refresh_token
        wanted = sorted(set(self.record.scope.split()) | set(needed.split()))
        log.info("stepping up the sign-in to %s for %s", self.record.base_url, needed)
        self._sign_in(" ".join(wanted))
        if old and old != self.record.refresh_token:
            tokens.revoke(self.http, self.record, old)

    def logout(self) -> None:
        """Revoke the grant (its refresh token ends it whole) and forget the tokens."""
        record = self.record
        with refresh_lock(record.base_url, self.folder):
            current = self.store.load(record.base_url) or record
            tokens.revoke(self.http, current, current.refresh_token or current.access_token)
            current.access_token = current.refresh_token = ""
            current.expires_at, current.scope = 0.0, ""
            self.store.save(current)
            self.record = current
        log.info("signed out of %s", record.base_url)

    def userinfo(self) -> dict[str, Any]:
        if not self.record.userinfo_endpoint:
            return {}
        response = self.http.get(self.record.userinfo_endpoint, auth=self)
        return dict(response.json()) if response.status_code == 200 else {}

    # -- httpx.Auth ----------------------------------------------------------------------

    def _authorize(self, request: httpx.Request) -> str:
        token = self.access_token()
        request.headers["Authorization"] = f"{self.record.token_type} {token}"
        if self.record.dpop_key:
            request.headers["DPoP"] = dpop.proof(
                self.record.dpop_key, request.method, str(request.url), access_token=token
            )
        return token

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        token = self._authorize(request)
        response = yield request
        found = challenge(response)
        if response.status_code == 401 and found.get("error") == "invalid_token":
            self.refresh(stale=token)  # revoked or expired early: a sign-in that ended says so
            self._authorize(request)
            response = yield request
            found = challenge(response)
        if response.status_code == 403 and found.get("error") == "insufficient_scope" and found.get("scope"):
            self.step_up(found["scope"])
            self._authorize(request)
            yield request

    def close(self) -> None:
        self.http.close()
