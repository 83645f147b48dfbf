"""Prometheus metrics: present, labelled by route template, and moving."""

from __future__ import annotations

import re

from .api_env import ApiEnv, api_env
from .flow import Flow


def _value(text: str, name: str, **labels: str) -> float:
    """The sample of `name` whose labels include `labels` (0 when absent)."""
    total = 0.0
    for line in text.splitlines():
        if not line.startswith(name + "{"):
            continue
        found = dict(re.findall(r'(\w+)="([^"]*)"', line.rsplit("}", 1)[0]))
        if all(found.get(k) == v for k, v in labels.items()):
            total += float(line.rsplit(" ", 1)[1])
    return total


async def test_authz_metrics_move_with_traffic(flow: Flow) -> None:
    before = (await flow.client.get("/metrics")).text
    await flow.tokens()
    await flow.token(grant_type="authorization_code", code="nope", client_id="nobody")
    after = await flow.client.get("/metrics")
    assert after.status_code == 200 and after.headers["content-type"].startswith("text/plain")
    text = after.text
    route = "/oauth/interaction/{uid}"
    assert _value(text, "http_requests_total", service="authz", route=route, method="GET", status="200") > \
        _value(before, "http_requests_total", service="authz", route=route, method="GET", status="200")
    assert _value(text, "oauth_tokens_issued_total", grant_type="authorization_code") >= \
        _value(before, "oauth_tokens_issued_total", grant_type="authorization_code") + 1
    assert _value(text, "oauth_errors_total", service="authz", error="invalid_client") >= 1
    assert _value(text, "http_request_duration_seconds_count", service="authz", route="/api/oauth/token") >= 2
    assert _value(text, "db_pool_connections", service="authz", state="open") >= 1
    assert "uid=" not in text and "/oauth/interaction/" + "a" not in text  # paths are templated


async def test_resource_api_counts_token_cache_hits(authz_settings, database_url, redis_url, clean_db, redis_client, clock) -> None:
    async with api_env(
        authz_settings=authz_settings, database_url=database_url, redis_url=redis_url, pool=clean_db,
        redis=redis_client, clock=clock, mode="jwt",
    ) as env:
        env: ApiEnv
        token = await env.token("courses:read")
        before = _value((await env.api.get("/metrics")).text, "cache_requests_total", cache="verified_tokens", result="hit")
        for _ in range(3):
            await env.api.get("/api/v1/courses", headers=env.bearer(token))
        text = (await env.api.get("/metrics")).text
        assert _value(text, "cache_requests_total", cache="verified_tokens", result="hit") >= before + 2
        assert _value(text, "http_requests_total", service="resource_api", route="/api/v1/courses", status="200") >= 3
