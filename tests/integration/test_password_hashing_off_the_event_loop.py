"""Security review, finding 4: password hashing must not block the event loop.
Sign-ins are checked on a bounded thread pool; past its queue, a sign-in is refused
at once (503, Retry-After) and nothing else changes.

The checks are held at a gate inside argon2's `verify` (in whichever thread runs
it), so the tests see what happens while sign-ins are mid-check without measuring
any time. The gate gives way by itself after a while: hashing that blocks the loop
makes a test fail, not hang."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator

import pytest
from argon2 import PasswordHasher, extract_parameters

from courseschool.authz.app import create_app

from .conftest import serve
from .flow import Flow
from .sign_in import Attempt, lock_keys, signed_in, try_sign_in, with_settings

GIVE_WAY = 10.0  # seconds a held check waits before going on alone


class HeldChecks:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.gate = threading.Event()
        self._lock = threading.Lock()
        self.entered = 0
        self.finished = 0
        real = PasswordHasher.verify

        def held_verify(hasher: PasswordHasher, hash: str | bytes, password: str | bytes) -> bool:
            with self._lock:
                self.entered += 1
            try:
                self.gate.wait(GIVE_WAY)
                return real(hasher, hash, password)
            finally:
                with self._lock:
                    self.finished += 1

        monkeypatch.setattr(PasswordHasher, "verify", held_verify)

    async def until(self, condition: object) -> None:
        for _ in range(2000):
            if callable(condition) and condition():
                return
            await asyncio.sleep(0.01)
        raise AssertionError("the sign-ins never reached the password check")


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> HeldChecks:
    return HeldChecks(monkeypatch)


@pytest.fixture
async def bounded_flow(authz_settings, clean_db, redis_client, clock) -> AsyncIterator[Flow]:
    """One thread checks passwords, one more check may wait for it."""
    settings = with_settings(authz_settings, password_hash_workers=1, password_hash_queue=1)
    async with serve(create_app(settings, clock=clock)) as client:
        yield Flow(client, clean_db, redis_client)


async def test_other_requests_are_answered_while_passwords_are_checked(flow: Flow, held: HeldChecks) -> None:
    reg = await flow.register()
    user = await flow.user()
    attempts = [await Attempt.open(flow, reg) for _ in range(3)]
    logins = [asyncio.create_task(a.send(user["email"], user["password"])) for a in attempts]
    await held.until(lambda: held.entered >= 1)

    unrelated = await flow.client.get("/api/oauth/jwks")
    finished_before_it = held.finished
    held.gate.set()
    answers = await asyncio.gather(*logins)

    assert unrelated.status_code == 200
    assert finished_before_it == 0, "the request waited for the password checks: they block the event loop"
    assert all(signed_in(a) for a in answers)
    assert await flow.count("authz_login_sessions") == 3


async def test_past_the_queue_a_sign_in_is_refused_and_nothing_changes(bounded_flow: Flow, held: HeldChecks) -> None:
    flow = bounded_flow
    work = flow.client.app.state.authz.passwords
    reg = await flow.register()
    user, other = await flow.user(), await flow.user("student")
    waiting = [await Attempt.open(flow, reg) for _ in range(2)]
    turned_away = await Attempt.open(flow, reg)
    logins = [asyncio.create_task(a.send(user["email"], user["password"])) for a in waiting]
    await held.until(lambda: held.entered == 1 and work.in_flight == 2)  # one being checked, one waiting

    refused = await turned_away.send(other["email"], "a wrong password")

    assert refused.status_code == 503
    assert refused.headers["retry-after"] == "1"
    assert refused.headers["content-type"].startswith("text/html")
    assert "try again shortly" in refused.text
    # nothing of the refused attempt was kept: no failure counted, no message, no session
    assert await lock_keys(flow) == []
    page, _ = await flow.page(turned_away.interaction)
    assert "not right" not in page.text and 'name="password"' in page.text
    assert await flow.count("authz_login_sessions") == 0

    held.gate.set()
    answers = await asyncio.gather(*logins)
    assert all(signed_in(a) for a in answers)
    assert work.in_flight == 0
    again = await turned_away.send(other["email"], other["password"])  # with room again, it is checked
    assert signed_in(again)


async def test_a_caller_that_goes_away_keeps_its_place_until_its_check_ends(
    bounded_flow: Flow, held: HeldChecks
) -> None:
    """The bound is on the work, not on who still waits for it: a cancelled sign-in's
    check still runs, so its place comes back only when the check ends."""
    work = bounded_flow.client.app.state.authz.passwords
    running = asyncio.create_task(work.check(None, "anything"))
    await held.until(lambda: held.entered == 1)
    running.cancel()
    await asyncio.sleep(0)
    assert work.in_flight == 1
    held.gate.set()
    await held.until(lambda: work.in_flight == 0)


async def test_an_outdated_hash_is_replaced_in_the_same_check(flow: Flow) -> None:
    reg = await flow.register()
    user = await flow.user()
    weak = PasswordHasher(time_cost=1, memory_cost=8192, parallelism=1).hash(user["password"])
    await flow.pool.execute("UPDATE authz_users SET password_hash = $2 WHERE id = $1::uuid", user["id"], weak)
    assert signed_in(await try_sign_in(flow, reg, user["email"], user["password"]))
    stored = await flow.pool.fetchval("SELECT password_hash FROM authz_users WHERE id = $1::uuid", user["id"])
    settings = flow.client.app.state.authz.settings
    made = extract_parameters(stored)  # the parameters the app is set to (PASSWORD_*)
    assert stored != weak and (made.time_cost, made.memory_cost, made.parallelism) == (
        settings.password_time_cost,
        settings.password_memory_kib,
        settings.password_parallelism,
    )
    assert PasswordHasher().verify(stored, user["password"])


async def test_an_upgrade_never_undoes_a_password_set_during_the_check(flow: Flow, held: HeldChecks) -> None:
    """The outdated hash is replaced only if it is still the one checked: a reset that
    commits while the old password is being checked stays, and the old password stops
    working (third review, 28 Nov 2026, low 1)."""
    reg = await flow.register()
    user = await flow.user()
    weak = PasswordHasher(time_cost=1, memory_cost=8192, parallelism=1).hash(user["password"])
    await flow.pool.execute("UPDATE authz_users SET password_hash = $2 WHERE id = $1::uuid", user["id"], weak)
    attempt = await Attempt.open(flow, reg)
    login = asyncio.create_task(attempt.send(user["email"], user["password"]))
    await held.until(lambda: held.entered >= 1)  # the old password under check
    reset = PasswordHasher().hash("the password the reset chose")
    await flow.pool.execute("UPDATE authz_users SET password_hash = $2 WHERE id = $1::uuid", user["id"], reset)
    held.gate.set()
    await login
    stored = await flow.pool.fetchval("SELECT password_hash FROM authz_users WHERE id = $1::uuid", user["id"])
    assert stored == reset
    assert not signed_in(await try_sign_in(flow, reg, user["email"], user["password"]))
