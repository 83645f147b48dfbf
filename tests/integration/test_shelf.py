"""The shelf the fixtures borrow apps from (shelf.py): an app is built once and lent to
one test at a time, reads the clock of the test that borrowed it, and keeps nothing of
the last test (its components are built again at each start)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import pytest

from courseschool.authz.settings import AuthzSettings
from courseschool.authz.storage.client_metadata import DocumentWeb
from courseschool.common.clock import FrozenClock

from .admin_api import with_admin
from .conftest import serve
from .shelf import LentClock, Shelf, authz_app


async def test_a_shelved_app_is_lent_again_with_the_borrowers_clock(authz_settings: AuthzSettings, clean_db) -> None:
    shelf = Shelf()
    earlier, later = FrozenClock(1_700_000_000), FrozenClock(1_800_000_000)
    with authz_app(shelf, authz_settings, earlier) as first:
        async with serve(first) as client:
            components = client.app.state.authz
            assert components.clock.now() == earlier.now()
            assert (await client.get("/healthz")).status_code == 200
    with authz_app(shelf, authz_settings, later) as second:
        async with serve(second) as client:
            assert client.app is first  # the same app, not built again
            assert client.app.state.authz is not components  # started afresh
            assert client.app.state.authz.clock.now() == later.now()
            later.advance(30)
            assert client.app.state.authz.clock.now() == later.now()
            assert (await client.get("/healthz")).status_code == 200
    assert shelf.built == 1


async def test_an_app_out_on_loan_is_not_lent_again(authz_settings: AuthzSettings) -> None:
    shelf = Shelf()
    clock = FrozenClock(1_700_000_000)
    with authz_app(shelf, authz_settings, clock) as one, authz_app(shelf, authz_settings, clock) as other:
        assert one is not other
    with authz_app(shelf, authz_settings, clock) as again:
        assert again in (one, other)
    assert shelf.built == 2


async def test_an_app_whose_loan_failed_is_not_put_back(authz_settings: AuthzSettings) -> None:
    shelf = Shelf()
    clock = FrozenClock(1_700_000_000)
    with pytest.raises(RuntimeError, match="the test failed"), authz_app(shelf, authz_settings, clock) as failed:
        raise RuntimeError("the test failed")
    with authz_app(shelf, authz_settings, clock) as fresh:
        assert fresh is not failed
    assert shelf.built == 2


def test_apps_built_from_other_settings_are_not_lent_for_these(authz_settings: AuthzSettings) -> None:
    shelf = Shelf()
    clock = FrozenClock(1_700_000_000)
    with authz_app(shelf, authz_settings, clock) as plain:
        pass
    with authz_app(shelf, with_admin(authz_settings), clock) as other:
        assert other is not plain
    with authz_app(shelf, authz_settings, clock, document_web=DocumentWeb(verify=False)) as fetching_elsewhere:
        assert fetching_elsewhere not in (plain, other)
    assert shelf.built == 3


def test_a_shelved_clock_refuses_to_tell_the_time_between_loans() -> None:
    lent = LentClock()
    with lent.reading(FrozenClock(42)):
        assert lent.now() == 42
    with pytest.raises(RuntimeError, match="no test had borrowed it"):
        lent.now()


async def test_an_environment_lent_again_is_wired_afresh(
    open_api_env: Callable[..., AbstractAsyncContextManager[Any]],
) -> None:
    async with open_api_env(mode="jwt") as env:
        apps = env.flow.client.app, env.rs_app
        env.resource_link.app = None  # as a test that makes the resource API unreachable
        env.authz_calls.append("/noted/by/the/last/test")
    async with open_api_env(mode="jwt") as env:
        assert (env.flow.client.app, env.rs_app) == apps
        assert env.resource_link.app is env.rs_app
        assert "/noted/by/the/last/test" not in env.authz_calls
