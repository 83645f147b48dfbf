"""The HTTP clients an app opens to other servers share one TLS context per process:
httpx would otherwise read the whole CA bundle again for every client it makes, twice
per authorization server started (its client to the resource API and its metadata
document fetcher), even where the client only speaks plain HTTP."""

from __future__ import annotations

import ssl
from typing import Any

import pytest

from courseschool.authz.app import create_app

from .conftest import serve


async def test_starting_apps_reads_each_ca_bundle_at_most_once(
    authz_settings, clean_db, redis_client, clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    loads: list[Any] = []
    original = ssl.SSLContext.load_verify_locations

    def counting(self: ssl.SSLContext, *args: Any, **kwargs: Any) -> None:
        loads.append(args or kwargs)
        original(self, *args, **kwargs)

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counting)
    for _ in range(3):
        async with serve(create_app(authz_settings, clock=clock)) as client:
            assert (await client.get("/healthz")).status_code == 200
    # One context per trust setting (the fetcher and the webhook ignore SSL_CERT_FILE),
    # none at all when an earlier test of this process built them already.
    assert len(loads) == len(set(loads)) <= 2, loads


def test_every_spelling_of_the_default_is_one_context() -> None:
    from courseschool.common.outbound import default_tls

    assert default_tls() is default_tls(trust_env=True)
    assert default_tls(trust_env=False) is default_tls(trust_env=False) is not default_tls()
