"""Signing-key rotation without downtime: publish before signing, keep the retired
key until its tokens expired, the same active key on every replica."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from courseschool.authz.app import create_app
from courseschool.authz.components import Components
from courseschool.authz.endpoints.admin import AdminService
from courseschool.authz.storage.keys import KeyDecryptionError, KeyRing, PgKeyStore
from courseschool.common.asgi import AppLifespan
from courseschool.common.jose import KeyEncryptor, decode_kek, new_kek, unverified_header

from .conftest import AppClient, serve
from .flow import Flow, Lifecycle

DAY = 86400


def _service(client: AppClient) -> Components:
    return client.app.state.authz


async def _kids(flow: Flow) -> set[str]:
    return {k["kid"] for k in (await flow.client.get("/api/oauth/jwks")).json()["keys"]}


async def _following(*clients: AppClient) -> None:
    """Each app's key change feed follows its channel: subscribed, its keys reloaded after
    it (a feed that subscribes later catches up at once, and would blur what is tested)."""
    for client in clients:
        feed = _service(client).key_feed
        assert feed is not None
        await asyncio.wait_for(feed.following.wait(), 30)


async def _fresh_keys(flow: Flow) -> None:
    """Start from one active key per algorithm, made now (other tests leave theirs)."""
    await flow.pool.execute("DELETE FROM authz_signing_keys")
    service = _service(flow.client)
    await service.keys.maintain()


async def test_next_key_is_published_before_it_signs(flow: Flow) -> None:
    await _fresh_keys(flow)
    service = _service(flow.client)
    before = await _kids(flow)
    active = service.keys.ring.active_kid("ES256")
    assert await service.keys.store.rotate_now("ES256") == ["ES256:create_next"]
    await service.keys.maintain()
    after = await _kids(flow)
    assert len(after - before) == 1
    tokens = await flow.tokens()
    assert unverified_header(tokens["access_token"])["kid"] == active


async def test_scheduled_rotation_switches_keys_and_old_tokens_keep_working(flow: Flow, clock) -> None:
    await _fresh_keys(flow)
    service = _service(flow.client)
    life = Lifecycle(flow)
    old_kid = service.keys.ring.active_kid("ES256")
    reg = await flow.register()
    old_tokens = await flow.tokens(reg)
    clock.advance(30 * DAY - 3600)  # the successor is due for publication
    await service.keys.maintain()
    next_kids = await _kids(flow)
    assert service.keys.ring.active_kid("ES256") == old_kid
    clock.advance(3600)  # published for the whole lead, and the active key is 30 days old
    await service.keys.maintain()
    new_kid = service.keys.ring.active_kid("ES256")
    assert new_kid != old_kid and new_kid in next_kids
    assert old_kid in await _kids(flow)  # retired, still published
    clock.at -= 30 * DAY  # old tokens still within their lifetime: they verify against the retired key
    assert await life.userinfo_status(old_tokens["access_token"]) == 200
    clock.at += 30 * DAY
    new_tokens = await flow.tokens()
    assert unverified_header(new_tokens["access_token"])["kid"] == new_kid
    clock.advance(600 + 300 + 1)  # every token the retired key signed has expired
    await service.keys.maintain()
    assert old_kid not in await _kids(flow)


async def test_immediate_rotation_signs_with_the_new_key_at_once(flow: Flow) -> None:
    await _fresh_keys(flow)
    service = _service(flow.client)
    old_kid = service.keys.ring.active_kid("RS256")
    done = await service.keys.store.rotate_now("RS256", immediate=True)
    assert done == ["RS256:create_next", "RS256:promote_next"]
    await service.keys.maintain()
    new_kid = service.keys.ring.active_kid("RS256")
    assert new_kid != old_kid
    tokens = await flow.tokens()
    assert unverified_header(tokens["id_token"])["kid"] == new_kid
    assert {old_kid, new_kid} <= await _kids(flow)


async def test_every_replica_signs_with_the_same_key(flow: Flow, authz_settings, clock) -> None:
    await _fresh_keys(flow)
    first = _service(flow.client)
    async with serve(create_app(authz_settings, clock=clock)) as other_client:
        second = _service(other_client)
        await _following(flow.client, other_client)
        assert first.keys.ring.active_kid("ES256") == second.keys.ring.active_kid("ES256")
        await first.keys.store.rotate_now("ES256", immediate=True)
        await first.keys.maintain()
        assert first.keys.ring.active_kid("ES256") != second.keys.ring.active_kid("ES256")
        await second.keys.maintain()  # its periodic reload
        assert first.keys.ring.active_kid("ES256") == second.keys.ring.active_kid("ES256")


async def test_a_replica_told_of_an_immediate_rotation_signs_with_the_new_key_at_once(
    flow: Flow, authz_settings, clock
) -> None:
    """`keys rotate --immediate` (here through the admin service both the CLI and the API
    use) tells every running replica over Redis: the other one reloads now, not at its
    next KEY_RELOAD_INTERVAL, and its next token carries the new kid."""
    await _fresh_keys(flow)
    async with serve(create_app(authz_settings, clock=clock)) as other_client:
        second = _service(other_client)
        await _following(flow.client, other_client)
        before = second.keys.ring.active_kid("ES256")
        result = await AdminService(_service(flow.client).administration, actor="admin-cli").rotate_key(
            "ES256", immediate=True
        )
        new = _service(flow.client).keys.ring.active_kid("ES256")
        assert new != before
        for _ in range(100):  # told asynchronously: a bounded wait, far under the reload interval
            if second.keys.ring.active_kid("ES256") == new:
                break
            await asyncio.sleep(0.05)
        assert second.keys.ring.active_kid("ES256") == new
        tokens = await Flow(other_client, flow.pool, flow.redis).tokens()
        assert unverified_header(tokens["access_token"])["kid"] == new
        assert result["servers_told"] >= 2  # both apps (and any other server on this Redis)


async def test_a_load_that_read_the_table_first_never_replaces_a_newer_key_set(flow: Flow) -> None:
    """A reload told of a change and the periodic maintenance at once: the reload read the
    table before an immediate rotation, the maintenance after it. The reload finishing
    last must not put the old key set back (its active key no longer signs anywhere)."""
    await _fresh_keys(flow)
    keys = _service(flow.client).keys
    old = keys.ring.active_kid("ES256")
    load = keys.store.load
    first_read, go_on = asyncio.Event(), asyncio.Event()

    async def first_load_held() -> KeyRing:  # the reload's load: it has read, and waits
        keys.store.load = load  # type: ignore[method-assign]  # every later load as it is
        ring = await load()
        first_read.set()
        await go_on.wait()
        return ring

    keys.store.load = first_load_held  # type: ignore[method-assign]
    try:
        reload = asyncio.create_task(keys.reload())
        await first_read.wait()
        await keys.store.rotate_now("ES256", immediate=True)
        maintain = asyncio.create_task(keys.maintain())
        # The maintenance goes as far as it may while the reload is held: to its end if
        # loads may overlap, to the wait for the reload's load if they are taken in turn.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(maintain), timeout=1)
        go_on.set()
        await asyncio.gather(reload, maintain)
    finally:
        keys.store.load = load  # type: ignore[method-assign]
    assert keys.ring.active_kid("ES256") not in (None, old)
    assert (await flow.tokens())["access_token"]


async def test_concurrent_start_ups_make_one_active_key_per_algorithm(flow: Flow, authz_settings, clock) -> None:
    import asyncio

    await flow.pool.execute("DELETE FROM authz_signing_keys")
    apps = [create_app(authz_settings, clock=clock) for _ in range(3)]
    lifespans = [AppLifespan(app) for app in apps]
    await asyncio.gather(*(lifespan.startup() for lifespan in lifespans))
    try:
        kids = {app.state.authz.keys.ring.active_kid("ES256") for app in apps}
        assert len(kids) == 1
        assert await flow.count("authz_signing_keys WHERE state = 'active'") == 2
    finally:
        for lifespan in lifespans:
            await lifespan.shutdown()


async def test_a_token_verified_before_is_refused_once_its_key_is_gone(flow: Flow) -> None:
    """UserInfo and introspection remember the tokens whose signature they checked
    (common.jose.VerifiedTokens), for one key load: a key taken out of the set (an
    operator deleting a compromised one) takes its remembered tokens with it."""
    await _fresh_keys(flow)
    service = _service(flow.client)
    life = Lifecycle(flow)
    token = (await flow.tokens())["access_token"]
    assert await life.userinfo_status(token) == 200
    assert await life.userinfo_status(token) == 200  # the second time from what was remembered
    await flow.pool.execute("DELETE FROM authz_signing_keys WHERE kid = $1", unverified_header(token)["kid"])
    await service.keys.maintain()
    assert unverified_header(token)["kid"] not in await _kids(flow)
    assert await life.userinfo_status(token) == 401


async def test_a_reload_takes_again_the_keys_of_unchanged_rows_and_imports_new_ones(flow: Flow) -> None:
    """Importing an RSA key checks it (tens of milliseconds): a reload takes again the
    keys the previous load imported for rows that did not change, and imports the key an
    immediate rotation made active; tokens are signed with it at once."""
    await _fresh_keys(flow)
    service = _service(flow.client)
    first = service.keys.ring
    await service.keys.reload()
    second = service.keys.ring
    assert second is not first and second.imported.keys() == first.imported.keys()
    for kid, key in first.imported.items():
        assert second.imported[kid] is key
    old_rsa = first.active_kid("RS256")
    assert await service.keys.store.rotate_now("RS256", immediate=True) == ["RS256:create_next", "RS256:promote_next"]
    await service.keys.reload()
    third = service.keys.ring
    new_rsa = third.active_kid("RS256")
    assert new_rsa not in (None, old_rsa) and old_rsa not in third.imported
    assert third.imported[third.active_kid("ES256")] is first.imported[first.active_kid("ES256")]
    tokens = await flow.tokens()
    assert unverified_header(tokens["id_token"])["kid"] == new_rsa


async def test_another_store_in_the_process_takes_the_imported_keys_but_still_needs_the_kek(flow: Flow) -> None:
    """Each app a process starts loads the keys with a store of its own: the keys it
    imported already are taken again, never without opening the stored row with the
    key-encryption key, so a wrong one is refused as before."""
    await _fresh_keys(flow)
    store = _service(flow.client).keys.store
    first = await store.load()
    same_kek = PgKeyStore(flow.pool, store._encryptor, issuer=store._issuer, clock=store._clock, policy=store.policy)
    again = await same_kek.load()
    assert again.imported.keys() == first.imported.keys()
    assert all(again.imported[kid] is key for kid, key in first.imported.items())
    other_kek = PgKeyStore(
        flow.pool,
        KeyEncryptor(decode_kek(new_kek())),
        issuer=store._issuer,
        clock=store._clock,
        policy=store.policy,
    )
    with pytest.raises(KeyDecryptionError):
        await other_kek.load()
