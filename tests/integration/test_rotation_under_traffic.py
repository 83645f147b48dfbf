"""Key rotation during traffic: while requests flow with tokens signed before, during
and after a rotation, none fails because of it."""

from __future__ import annotations

import asyncio

from .api_env import ApiEnv


async def rotate(authz, alg: str, **options: bool) -> list[str]:
    """`rotate_now`, asked again while the app's own key maintenance (at its start, then
    every interval) holds the rotation lock: it answers [] then, "another replica is at
    it". A busy machine made the first ask meet it (a clean-clone run)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 30
    while not (done := await authz.keys.store.rotate_now(alg, **options)):
        assert loop.time() < deadline, "the rotation lock was never free"
        await asyncio.sleep(0.05)
    return done


async def promoted(authz, pool) -> None:
    """The due promotion of the ES256 next key taken, by this maintenance or by the app's
    own if it holds the rotation lock (this one then takes no step), and the keys
    reloaded. A busy machine made the app's own meet the lock first (a clean-clone run)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 30
    while await pool.fetchval("SELECT count(*) FROM authz_signing_keys WHERE alg = 'ES256' AND state = 'next'"):
        assert loop.time() < deadline, "the due promotion was never taken"
        await authz.keys.store.maintain()
        await asyncio.sleep(0.05)
    await authz.keys.maintain()


async def test_no_request_fails_while_keys_rotate(open_api_env) -> None:
    async with open_api_env(mode="jwt") as env:
        env: ApiEnv
        authz = env.flow.client.app.state.authz
        # From one active key per algorithm, made now: signing keys outlive each test, and
        # a next key another test published (test_held_documents) would leave nothing to
        # rotate, whatever the lock.
        await env.pool.execute("DELETE FROM authz_signing_keys")
        await authz.keys.maintain()
        tokens = [await env.token("courses:read")]
        statuses: list[int] = []
        done = asyncio.Event()

        rounds = [0]  # traffic's rounds over every token so far

        async def traffic() -> None:
            while not done.is_set():
                for token in list(tokens):
                    statuses.append((await env.api.get("/api/v1/courses", headers=env.bearer(token))).status_code)
                rounds[0] += 1
                await asyncio.sleep(0)

        runner = asyncio.create_task(traffic())
        # Scheduled: the next key is published first and signs only later (its age and the
        # active key's are moved back in time rather than the clock, so no token expires).
        assert await rotate(authz, "ES256") == ["ES256:create_next"]
        await authz.keys.maintain()
        tokens.append(await env.token("courses:read"))
        await env.pool.execute(
            "UPDATE authz_signing_keys SET created_at = created_at - interval '2 hours' WHERE state = 'next'"
        )
        await env.pool.execute(
            "UPDATE authz_signing_keys SET activated_at = activated_at - interval '31 days' "
            "WHERE state = 'active' AND alg = 'ES256'"
        )
        await promoted(authz, env.pool)
        tokens.append(await env.token("courses:read"))
        assert await rotate(authz, "ES256", immediate=True) == ["ES256:create_next", "ES256:promote_next"]
        await authz.keys.maintain()
        tokens.append(await env.token("courses:read"))
        after = rounds[0]

        async def traffic_went_on() -> None:
            """Every token, the last one too, used in two whole rounds after the last
            rotation, and more than 20 requests in all."""
            while rounds[0] < after + 2 or len(statuses) <= 20:
                await asyncio.sleep(0.01)

        await asyncio.wait_for(traffic_went_on(), 60)
        done.set()
        await runner
        assert len(statuses) > 20 and set(statuses) == {200}
        assert len({token.split(".")[0] for token in tokens}) >= 3  # signed with three different keys
