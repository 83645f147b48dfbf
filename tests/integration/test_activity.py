"""What each grant did at the resource API (activity.py, storage/activity.py): reads counted
per grant, area and day once flushed and drained; changes recorded by the change's own
statement; what is lost while Redis is down (read counts only); retention; and the
internal summary the authorization server's pages read."""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import msgspec
import pytest
from prometheus_client import REGISTRY

from courseschool.resource_api.activity import ActivityJob, ReadBuffer, ReadCounter
from courseschool.resource_api.auth.verifier import Principal
from courseschool.resource_api.storage.activity import ActivityQuery, PgActivityStore

from .api_env import ApiEnv

INTERNAL = {"Authorization": "Bearer internal-test-token"}
COURSE = {"title": "Watercolour", "slug": "watercolour", "price": 4900, "published": True}


@pytest.fixture
async def env(open_api_env: Callable[..., AbstractAsyncContextManager[Any]]) -> AsyncIterator[ApiEnv]:
    async with open_api_env(mode="jwt") as running:
        yield running


def claims(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    return msgspec.json.decode(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def job(env: ApiEnv) -> ActivityJob:
    return env.rs_app.state.resource_api.activity


async def summary(env: ApiEnv, **params: Any) -> dict[str, Any]:
    response = await env.api.get("/internal/activity", params=params, headers=INTERNAL)
    assert response.status_code == 200, response.text
    assert response.headers["cache-control"] == "no-store"
    return response.json()


def dropped_reads() -> float:
    return REGISTRY.get_sample_value("courseschool_activity_reads_total", {"result": "dropped"}) or 0.0


# -- reads ------------------------------------------------------------------------------


@pytest.fixture(params=["jwt", "introspection"])
async def either_env(request, open_api_env: Callable[..., AbstractAsyncContextManager[Any]]) -> AsyncIterator[ApiEnv]:
    """The resource API checking tokens either way: both give the grant (`grant_id`)."""
    async with open_api_env(mode=request.param) as running:
        yield running


async def test_reads_are_counted_per_grant_area_and_day_after_a_flush(either_env: ApiEnv, clock) -> None:
    env = either_env
    clock.at = (clock.now() // 86400 + 1) * 86400 - 60  # a minute before midnight (UTC)
    today = dt.datetime.fromtimestamp(clock.now(), dt.UTC).date()
    token = await env.token("courses:read students:read")
    grant = claims(token)["grant_id"]
    for _ in range(3):
        assert (await env.api.get("/api/v1/courses", headers=env.bearer(token))).status_code == 200
    assert (await env.api.get("/api/v1/students", headers=env.bearer(token))).status_code == 200
    assert (await env.api.get("/api/v1/courses?school=acme")).status_code == 200  # anonymous: nobody's grant
    assert await env.pool.fetchval("SELECT count(*) FROM api_activity_reads") == 0  # not before the flush

    assert await job(env).run_once() == {"flushed": 4, "written": 2}
    clock.advance(120)  # the next day (UTC) is a row of its own
    assert (await env.api.get("/api/v1/courses", headers=env.bearer(token))).status_code == 200
    assert await job(env).run_once() == {"flushed": 1, "written": 1}

    rows = await env.pool.fetch(
        "SELECT grant_id::text, day, area, reads, client_id, user_id, school_id::text FROM api_activity_reads "
        "ORDER BY day, area"
    )
    assert [(r["day"], r["area"], r["reads"]) for r in rows] == [
        (today, "courses", 3),
        (today, "students", 1),
        (today + dt.timedelta(days=1), "courses", 1),
    ]
    token_claims = claims(token)
    assert {(r["grant_id"], r["client_id"], r["user_id"], r["school_id"]) for r in rows} == {
        (grant, token_claims["client_id"], token_claims["sub"], token_claims["school_id"])
    }
    answer = await summary(env, grant_id=grant)
    (activity,) = answer["grants"]
    assert activity["reads"] == {"courses": 4, "students": 1}
    assert activity["changes"] == {} and activity["changed"] == []
    assert activity["client_id"] == token_claims["client_id"]


async def test_counts_of_every_flush_add_up_and_a_drain_is_bounded(env: ApiEnv, clock, redis_client) -> None:
    """Several flushes (several replicas) meet in Redis; a drain writes at most ten
    statements of ACTIVITY_FLUSH_BATCH rows, and the next drain goes on from there."""
    await job(env).stop()  # the app's own job would drain the same Redis meanwhile
    school = await env.school("acme")
    counter = ReadCounter(clock)
    store = PgActivityStore(env.pool)
    buffer = ReadBuffer(redis_client, store, batch=10)
    grants = [str(uuid.uuid4()) for _ in range(300)]
    for grant in grants:
        who = Principal(anonymous=False, sub="u", client_id="c", school_id=school, grant_id=grant, exp=0)
        counter.count(who, "courses")
        counter.count(who, "courses")
    assert await buffer.flush(counter) == 600
    assert 0 < await redis_client.ttl("rs:activity:reads") <= 86400  # nothing in Redis without an expiry
    counter.count(Principal(anonymous=False, sub="u", client_id="c", school_id=school, grant_id=grants[0]), "courses")
    assert await buffer.flush(counter) == 1

    first = await buffer.drain()
    assert 0 < first < 300  # bounded: the rest waits in Redis
    total = first
    for _ in range(10):
        total += await buffer.drain()
    assert total == 300
    counts = dict(await env.pool.fetch("SELECT grant_id::text, reads FROM api_activity_reads"))
    assert len(counts) == 300
    assert counts[grants[0]] == 3 and all(counts[g] == 2 for g in grants[1:])
    assert await redis_client.exists("rs:activity:reads", "rs:activity:reads:draining") == 0


async def test_reads_past_the_key_bound_are_dropped_and_counted(clean_db, redis_client, clock) -> None:
    """The process holds a bounded number of distinct keys between flushes; reads of new
    keys past it are dropped, as stated, and counted for the operator."""
    counter = ReadCounter(clock, max_keys=2)
    school = str(uuid.uuid4())
    for _ in range(3):
        who = Principal(anonymous=False, sub="u", client_id="c", school_id=school, grant_id=str(uuid.uuid4()))
        counter.count(who, "courses")
        counter.count(who, "courses")  # a key held already is still counted
    before = dropped_reads()
    assert await ReadBuffer(redis_client, PgActivityStore(clean_db), batch=10).flush(counter) == 4
    assert dropped_reads() - before == 2
    assert await redis_client.hlen("rs:activity:reads") == 2


async def test_the_background_job_flushes_drains_and_sweeps(env: ApiEnv, clock, redis_client) -> None:
    """Each replica's job, on its own: counts reach PostgreSQL within a few intervals, and
    what it counted last is flushed to Redis when it stops."""
    school = await env.school("acme")
    store = PgActivityStore(env.pool)
    counter = ReadCounter(clock)
    running = ActivityJob(
        counter,
        ReadBuffer(redis_client, store, batch=100),
        store,
        interval=0.1,
        retention_days=90,
        housekeeping_interval=0.1,
        batch=100,
    )
    grant = str(uuid.uuid4())
    who = Principal(anonymous=False, sub="u", client_id="c", school_id=school, grant_id=grant)
    counter.count(who, "courses")
    running.start()
    try:
        for _ in range(100):
            if await env.pool.fetchval("SELECT reads FROM api_activity_reads WHERE grant_id = $1", uuid.UUID(grant)):
                break
            await asyncio.sleep(0.05)
        assert (
            await env.pool.fetchval("SELECT reads FROM api_activity_reads WHERE grant_id = $1", uuid.UUID(grant)) == 1
        )
        counter.count(who, "students")
    finally:
        await running.stop()
    held = await redis_client.hgetall("rs:activity:reads") or await redis_client.hgetall("rs:activity:reads:draining")
    counted = [msgspec.json.decode(k)[4] for k in held] if held else []
    drained = await env.pool.fetchval(
        "SELECT count(*) FROM api_activity_reads WHERE grant_id = $1 AND area = 'students'", uuid.UUID(grant)
    )
    assert counted == ["students"] or drained == 1  # flushed at the stop, or drained before it


async def test_without_redis_reads_are_served_their_counts_dropped_and_changes_recorded(open_api_env) -> None:
    async with open_api_env(mode="jwt", rs_redis_url="redis://127.0.0.1:1/0") as env:
        token = await env.token("courses:read courses:write")
        for _ in range(3):
            assert (await env.api.get("/api/v1/courses", headers=env.bearer(token))).status_code == 200
        before = dropped_reads()
        assert await job(env).buffer.flush(job(env).counter) == 0  # Redis did not take them
        assert dropped_reads() - before == 3  # the stated loss, counted for the operator
        created = await env.api.post("/api/v1/courses", json=COURSE, headers=env.bearer(token))
        assert created.status_code == 201
        rows = await env.pool.fetch("SELECT area, item_id::text, action FROM api_activity_changes")
        assert [tuple(r) for r in rows] == [("courses", created.json()["id"], "create")]
        assert await env.pool.fetchval("SELECT count(*) FROM api_activity_reads") == 0


# -- changes ----------------------------------------------------------------------------


async def test_changes_are_recorded_one_by_one_with_who_made_them(env: ApiEnv) -> None:
    token = await env.token("courses:read courses:write")
    who = claims(token)
    created = (await env.api.post("/api/v1/courses", json=COURSE, headers=env.bearer(token))).json()
    path = f"/api/v1/courses/{created['id']}"
    assert (await env.api.patch(path, json={"title": "Oils"}, headers=env.bearer(token))).status_code == 200
    assert (await env.api.delete(path, headers=env.bearer(token))).status_code == 204

    rows = await env.pool.fetch(
        "SELECT grant_id::text, client_id, user_id, school_id::text, area, item_id::text, item_name, action, at "
        "FROM api_activity_changes ORDER BY id"
    )
    assert [(r["action"], r["item_name"]) for r in rows] == [
        ("create", "Watercolour"),
        ("update", "Oils"),
        ("delete", "Oils"),
    ]
    for row in rows:
        assert (row["grant_id"], row["client_id"], row["user_id"], row["school_id"]) == (
            who["grant_id"],
            who["client_id"],
            who["sub"],
            who["school_id"],
        )
        assert (row["area"], row["item_id"]) == ("courses", created["id"])
    assert rows[0]["at"].isoformat() == created["updated_at"]  # the change's own instant

    (activity,) = (await summary(env, grant_id=who["grant_id"]))["grants"]
    assert activity["changes"] == {"courses": 3}
    assert [(c["action"], c["name"], c["item_id"]) for c in activity["changed"]] == [
        ("delete", "Oils", created["id"]),
        ("update", "Oils", created["id"]),
        ("create", "Watercolour", created["id"]),
    ]  # newest first
    assert activity["last_acted"] == activity["changed"][0]["at"]


async def test_singleton_and_upload_changes_are_recorded(env: ApiEnv) -> None:
    token = await env.token("school:write storage:write")
    assert (
        await env.api.patch("/api/v1/school", json={"name": "Renamed"}, headers=env.bearer(token))
    ).status_code == 200
    upload = await env.api.post(
        "/api/v1/storage/files", files={"file": ("notes.txt", b"hello", "text/plain")}, headers=env.bearer(token)
    )
    assert upload.status_code == 201
    rows = await env.pool.fetch("SELECT area, item_id::text, item_name, action FROM api_activity_changes ORDER BY id")
    assert [tuple(r) for r in rows] == [
        ("school", None, None, "update"),
        ("storage", upload.json()["id"], "notes.txt", "create"),
    ]


async def test_a_change_that_fails_leaves_no_record(env: ApiEnv) -> None:
    token = await env.token("courses:read courses:write")
    assert (await env.api.post("/api/v1/courses", json=COURSE, headers=env.bearer(token))).status_code == 201
    refused = [
        await env.api.post("/api/v1/courses", json=COURSE, headers=env.bearer(token)),  # the slug is taken
        await env.api.post("/api/v1/courses", json={"title": ""}, headers=env.bearer(token)),  # invalid
        await env.api.patch(f"/api/v1/courses/{uuid.uuid4()}", json={"title": "X"}, headers=env.bearer(token)),
        await env.api.delete(f"/api/v1/courses/{uuid.uuid4()}", headers=env.bearer(token)),
    ]
    assert [r.status_code for r in refused] == [409, 422, 404, 404]
    assert await env.pool.fetchval("SELECT count(*) FROM api_activity_changes") == 1


async def test_a_record_that_cannot_be_written_undoes_its_change(env: ApiEnv) -> None:
    """One transaction: when the record fails (here a trigger refuses it), the change is
    not made either."""
    token = await env.token("courses:read courses:write")
    created = (await env.api.post("/api/v1/courses", json=COURSE, headers=env.bearer(token))).json()
    await env.pool.execute(
        """
        CREATE FUNCTION test_refuse_activity() RETURNS trigger LANGUAGE plpgsql AS
        $$ BEGIN RAISE EXCEPTION 'activity refused by the test'; END $$;
        CREATE TRIGGER test_refuse_activity BEFORE INSERT ON api_activity_changes
        FOR EACH ROW EXECUTE FUNCTION test_refuse_activity();
        """
    )
    try:
        other = {**COURSE, "slug": "other"}
        path = f"/api/v1/courses/{created['id']}"
        attempts = [
            await env.api.post("/api/v1/courses", json=other, headers=env.bearer(token)),
            await env.api.patch(path, json={"title": "Changed"}, headers=env.bearer(token)),
            await env.api.delete(path, headers=env.bearer(token)),
        ]
    finally:
        await env.pool.execute(
            "DROP TRIGGER test_refuse_activity ON api_activity_changes; DROP FUNCTION test_refuse_activity()"
        )
    assert all(r.status_code == 500 for r in attempts)
    items = await env.pool.fetch("SELECT data->>'title' AS title FROM api_items")
    assert [r["title"] for r in items] == ["Watercolour"]  # nothing created, changed or deleted
    assert await env.pool.fetchval("SELECT count(*) FROM api_activity_changes") == 1


# -- retention --------------------------------------------------------------------------


async def test_retention_removes_only_rows_past_it(env: ApiEnv) -> None:
    school = await env.school("acme")
    grant = uuid.uuid4()
    for days_ago in (91, 90, 89):
        await env.pool.execute(
            "INSERT INTO api_activity_reads (grant_id, day, area, client_id, user_id, school_id, reads, last_at) "
            "VALUES ($1, (now() AT TIME ZONE 'UTC')::date - $2::integer, 'courses', 'c', 'u', $3, 1, now())",
            grant,
            days_ago,
            uuid.UUID(school),
        )
    for days_ago in (90.5, 89.5):
        await env.pool.execute(
            "INSERT INTO api_activity_changes (at, grant_id, client_id, user_id, school_id, area, action) "
            "VALUES (now() - $1::float8 * interval '1 day', $2, 'c', 'u', $3, 'courses', 'create')",
            days_ago,
            grant,
            uuid.UUID(school),
        )
    assert env.rs_app.state.resource_api.settings.activity_retention_days == 90  # the default
    assert await job(env).housekeeping() == {"activity_reads": 1, "activity_changes": 1}
    days = await env.pool.fetch(
        "SELECT (now() AT TIME ZONE 'UTC')::date - day AS ago FROM api_activity_reads ORDER BY ago"
    )
    assert [r["ago"] for r in days] == [89, 90]
    kept = await env.pool.fetchval("SELECT extract(epoch FROM now() - at) / 86400 FROM api_activity_changes")
    assert 89 < kept < 90
    assert await job(env).housekeeping() == {"activity_reads": 0, "activity_changes": 0}


# -- the internal summary ---------------------------------------------------------------


async def test_the_summary_is_internal_and_refuses_bad_queries(env: ApiEnv) -> None:
    grant = str(uuid.uuid4())
    assert (await env.api.get("/internal/activity", params={"grant_id": grant})).status_code == 404
    wrong = {"Authorization": "Bearer not-the-internal-token"}
    assert (await env.api.get("/internal/activity", params={"grant_id": grant}, headers=wrong)).status_code == 404
    for params, words in (
        ({}, "grant_id, user_id or school_id"),
        ({"grant_id": "nope"}, "grant_id must be a UUID"),
        ({"school_id": "nope"}, "school_id must be a UUID"),
        ({"grant_id": grant, "days": "0"}, "days must be an integer from 1 to 90"),
        ({"grant_id": grant, "days": "91"}, "days must be an integer from 1 to 90"),
        ({"grant_id": grant, "changed_limit": "-1"}, "changed_limit"),
        ({"grant_id": [str(uuid.uuid4()) for _ in range(101)]}, "at most 100"),
    ):
        response = await env.api.get("/internal/activity", params=params, headers=INTERNAL)
        assert response.status_code == 400, params
        assert response.json()["error"] == "invalid_request"
        assert words in response.json()["error_description"]
    answer = await summary(env, grant_id=grant)
    assert answer["grants"] == [] and answer["days"] == 30


async def test_another_schools_or_grants_activity_is_not_mixed_in(env: ApiEnv) -> None:
    ours = await env.token("courses:read courses:write", school="acme")
    mine_too = await env.token("courses:read", school="acme")
    theirs = await env.token("courses:read courses:write", school="other")
    for token in (ours, mine_too, theirs):
        assert (await env.api.get("/api/v1/courses", headers=env.bearer(token))).status_code == 200
    for token in (ours, theirs):
        assert (await env.api.post("/api/v1/courses", json=COURSE, headers=env.bearer(token))).status_code == 201
    await job(env).run_once()
    ours_c, mine_c, theirs_c = claims(ours), claims(mine_too), claims(theirs)

    def grants(answer: dict[str, Any]) -> set[str]:
        return {g["grant_id"] for g in answer["grants"]}

    acme = await summary(env, school_id=ours_c["school_id"])
    assert grants(acme) == {ours_c["grant_id"], mine_c["grant_id"]}
    assert all(g["school_id"] == ours_c["school_id"] for g in acme["grants"])
    assert grants(await summary(env, grant_id=ours_c["grant_id"])) == {ours_c["grant_id"]}
    assert grants(await summary(env, user_id=mine_c["sub"])) == {mine_c["grant_id"]}
    both = await summary(env, grant_id=[ours_c["grant_id"], theirs_c["grant_id"]])
    assert grants(both) == {ours_c["grant_id"], theirs_c["grant_id"]}
    # a school's page asking about a grant of another school learns nothing
    assert grants(await summary(env, grant_id=theirs_c["grant_id"], school_id=ours_c["school_id"])) == set()
    (mine,) = (await summary(env, grant_id=ours_c["grant_id"]))["grants"]
    assert mine["reads"] == {"courses": 1} and mine["changes"] == {"courses": 1}


async def test_the_summary_period_counts_whole_days(env: ApiEnv, clock) -> None:
    token = await env.token("courses:read")
    grant = claims(token)["grant_id"]
    assert (await env.api.get("/api/v1/courses", headers=env.bearer(token))).status_code == 200
    await job(env).run_once()
    clock.advance(2 * 86400)  # two days later: in a 3-day period, not in a 2-day one
    assert [g["reads"] for g in (await summary(env, grant_id=grant, days=3))["grants"]] == [{"courses": 1}]
    assert (await summary(env, grant_id=grant, days=2))["grants"] == []


# -- the indexes ------------------------------------------------------------------------


async def test_the_summary_finds_its_rows_through_the_indexes(env: ApiEnv) -> None:
    """With many other grants' rows, each query of the summary reads an index of what it
    was asked for (grants, a user, a school), never the whole table."""
    school = uuid.UUID(await env.school("acme"))
    await env.pool.execute(
        """
        INSERT INTO api_activity_reads (grant_id, day, area, client_id, user_id, school_id, reads, last_at)
        SELECT md5('g' || i)::uuid, current_date - (i % 30), 'courses', 'c', 'user-' || (i % 5000),
               md5('s' || (i % 500))::uuid, 1, now()
        FROM generate_series(1, 50000) AS i;
        INSERT INTO api_activity_changes (at, grant_id, client_id, user_id, school_id, area, item_id, action)
        SELECT now() - make_interval(hours => i % 700), md5('g' || (i % 20000))::uuid, 'c', 'user-' || (i % 5000),
               md5('s' || (i % 500))::uuid, 'courses', md5('i' || i)::uuid, 'create'
        FROM generate_series(1, 50000) AS i;
        ANALYZE api_activity_reads; ANALYZE api_activity_changes;
        """,
        # The pool's 15 s bound is for a request; this is the test's set-up, which took
        # longer on a machine shared with other runs: bounded, only against a hang.
        timeout=300,
    )
    store = PgActivityStore(env.pool)
    since = dt.datetime.now(dt.UTC) - dt.timedelta(days=30)
    cases = {
        "grant": (ActivityQuery(grant_ids=(str(uuid.uuid4()),), since=since), "_grant", "_pkey"),
        "user": (ActivityQuery(user_id="user-7", since=since), "_user", "_user"),
        "school": (ActivityQuery(school_id=str(school), since=since), "_school", "_school"),
    }
    for name, (query, changes_index, reads_index) in cases.items():
        reads_sql, changes_sql = store.statements(query)
        reads_plan = await _plan(env, *reads_sql)
        changes_plan = await _plan(env, *changes_sql)
        assert f"api_activity_reads{reads_index}" in reads_plan, (name, reads_plan)
        assert f"api_activity_changes{changes_index}" in changes_plan, (name, changes_plan)
        assert "Seq Scan" not in reads_plan + changes_plan, name
    changed_plan = await _plan(env, *store.changed_statement([str(uuid.uuid4())], since, 20))
    assert "api_activity_changes_grant" in changed_plan and "Seq Scan on api_activity_changes" not in changed_plan


async def _plan(env: ApiEnv, sql: str, args: list[Any]) -> str:
    rows = await env.pool.fetch("EXPLAIN " + sql, *args)
    return "\n".join(r[0] for r in rows)
