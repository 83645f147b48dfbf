"""Prometheus metrics, one registry per process (the all-in-one process serves all
three services' figures, told apart by the `service` label).

Request counts and latency by route template and status, refusals by error code,
tokens issued by grant type, cache hits and misses, and the database pools' use.
"""

from __future__ import annotations

from typing import Any

from litestar import Response, get
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, Counter, Gauge, Histogram, generate_latest

REQUESTS = Counter("http_requests_total", "HTTP requests handled", ["service", "route", "method", "status"])
LATENCY = Histogram(
    "http_request_duration_seconds", "Time to answer an HTTP request", ["service", "route", "method"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
)
ERRORS = Counter("oauth_errors_total", "Requests refused, by error code", ["service", "error"])
TOKENS_ISSUED = Counter("oauth_tokens_issued_total", "Token responses issued, by grant type", ["grant_type"])
CACHE = Counter("cache_requests_total", "Cache lookups, by cache and result", ["cache", "result"])
POOL = Gauge("db_pool_connections", "Database pool connections", ["service", "state"])

_pools: dict[str, Any] = {}


def watch_pool(service: str, pool: Any) -> None:
    _pools[service] = pool


def unwatch_pool(service: str) -> None:
    _pools.pop(service, None)


def _sample_pools() -> None:
    for service, pool in list(_pools.items()):
        size, idle = pool.get_size(), pool.get_idle_size()
        POOL.labels(service, "open").set(size)
        POOL.labels(service, "in_use").set(size - idle)
        POOL.labels(service, "max").set(pool.get_max_size())


_children: dict[tuple[str, str, str, int], tuple[Any, Any]] = {}


def record_request(service: str, route: str, method: str, status: int, seconds: float) -> None:
    """Count and time one request by its route template (not its path, so ids do not
    explode the label set). The labelled children are looked up once per label set."""
    key = (service, route, method, status)
    children = _children.get(key)
    if children is None:
        children = _children[key] = (
            REQUESTS.labels(service, route, method, str(status)), LATENCY.labels(service, route, method)
        )
    children[0].inc()
    children[1].observe(seconds)


@get("/metrics", include_in_schema=False, sync_to_thread=False)
def metrics() -> Response[bytes]:
    _sample_pools()
    return Response(generate_latest(REGISTRY), media_type=CONTENT_TYPE_LATEST, headers={"Cache-Control": "no-store"})
