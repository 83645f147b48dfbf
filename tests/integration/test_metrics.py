"""Prometheus metrics: present, labelled by route template, and moving."""

from __future__ import annotations

import re

from .api_env import ApiEnv
from .flow import Flow, pkce_pair


def _labels(text: str, name: str, label: str, **where: str) -> set[str]:
    """Every value the label `label` takes in the samples of `name` whose labels include `where`."""
    out = set()
    for line in text.splitlines():
        if line.startswith(name + "{"):
            found = dict(re.findall(r'(\w+)="([^"]*)"', line.rsplit("}", 1)[0]))
            if label in found and all(found.get(k) == v for k, v in where.items()):
                out.add(found[label])
    return out


def _value(text: str, name: str, **labels: str) -> float:
    """The sample of `name` whose labels include `labels` (0 when absent)."""
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name + " "):  # a sample without labels
            total += float(line.rsplit(" ", 1)[1]) if not labels else 0.0
            continue
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

    def moved(name: str, **labels: str) -> float:
        return _value(text, name, **labels) - _value(before, name, **labels)

    route = "/oauth/interaction/{uid}"
    assert moved("http_requests_total", service="authz", route=route, method="GET", status="200") >= 2  # login, consent
    assert moved("oauth_tokens_issued_total", grant_type="authorization_code") == 1
    assert moved("oauth_errors_total", service="authz", error="invalid_client") == 1
    assert moved("http_request_duration_seconds_count", service="authz", route="/api/oauth/token") == 2
    assert _value(text, "db_pool_connections", service="authz", state="open") >= 1


async def test_requests_are_counted_by_route_template_never_by_path(flow: Flow) -> None:
    reg = await flow.register()
    _, challenge = pkce_pair()
    started = await flow.start(flow.authorize_params(reg, challenge))
    interaction = started.headers["location"]
    await flow.page(interaction)
    uid = interaction.rsplit("/", 1)[1]
    text = (await flow.client.get("/metrics")).text
    routes = _labels(text, "http_requests_total", "route", service="authz")
    templates = {route.path for route in flow.client.app.routes}
    assert "/oauth/interaction/{uid}" in routes
    assert routes <= {t.replace(":str}", "}") for t in templates} | {"unrouted"}, routes - templates
    assert uid not in text and interaction not in text


async def test_resource_api_counts_token_cache_hits(open_api_env) -> None:
    async with open_api_env(mode="jwt") as env:
        env: ApiEnv
        token = await env.token("courses:read")
        await env.api.get("/api/v1/courses", headers=env.bearer(token))  # verified once, then cached
        before = (await env.api.get("/metrics")).text
        for _ in range(3):
            await env.api.get("/api/v1/courses", headers=env.bearer(token))
        text = (await env.api.get("/metrics")).text
        hits = ("cache_requests_total", {"cache": "verified_tokens", "result": "hit"})
        assert _value(text, hits[0], **hits[1]) - _value(before, hits[0], **hits[1]) == 3
        listed = ("http_requests_total", {"service": "resource_api", "route": "/api/v1/courses", "status": "200"})
        assert _value(text, listed[0], **listed[1]) - _value(before, listed[0], **listed[1]) == 3
