"""Prometheus metrics, one registry per process (the all-in-one process serves all
three services' figures, told apart by the `service` label).

Request counts and latency by route template and status, refusals by error code,
tokens issued by grant type, cache hits and misses, and the database pools' use; the
security events an operator watches (sign-ins, consents, refresh-token reuse, grants
ended, metadata-document fetches) counted from the audit events, in one table here,
so no use case increments a counter of its own; and when each signing key began.
"""

from __future__ import annotations

from typing import Any

from prometheus_client import REGISTRY, Counter, Gauge, Histogram, generate_latest

REQUESTS = Counter("http_requests_total", "HTTP requests handled", ["service", "route", "method", "status"])
LATENCY = Histogram(
    "http_request_duration_seconds",
    "Time to answer an HTTP request",
    ["service", "route", "method"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
)
ERRORS = Counter("oauth_errors_total", "Requests refused, by error code", ["service", "error"])
TOKENS_ISSUED = Counter("oauth_tokens_issued_total", "Token responses issued, by grant type", ["grant_type"])
CACHE = Counter("cache_requests_total", "Cache lookups, by cache and result", ["cache", "result"])
POOL = Gauge("db_pool_connections", "Database pool connections", ["service", "state"])
SIGN_INS = Counter("courseschool_sign_ins_total", "Sign-in attempts on the sign-in page, by result", ["result"])
LOCKOUTS = Counter("courseschool_account_lockouts_total", "Accounts (or sources) locked after failed sign-ins")
CONSENTS = Counter(
    "courseschool_consents_total",
    "Consent decisions: approved (every code issued on consent, remembered ones included), denied, remembered",
    ["decision"],
)
REFRESH_REUSE = Counter(
    "courseschool_refresh_token_reuse_total", "Rotated refresh tokens presented again (their grant is revoked)"
)
GRANTS_REVOKED = Counter(
    "courseschool_grants_revoked_total", "Grants ended, by reason and by whom", ["reason", "actor"]
)
METADATA_FETCHES = Counter(
    "courseschool_client_metadata_fetches_total", "Client ID Metadata Document fetches, by result", ["result"]
)
REVOCATION_FEED = Gauge(
    "courseschool_revocation_feed_healthy",
    "1 while a resource server trusts the revocations it keeps in memory (subscribed, loaded, heard from); "
    "0 while it asks the authorization server about every token",
    ["service"],
)
ACTIVITY_READS = Counter(
    "courseschool_activity_reads_total",
    "Reads made with a token, counted for their grant's activity, by what became of the count: flushed (to "
    "Redis, on its way to PostgreSQL) or dropped (Redis unreachable at the flush, or too many distinct keys in "
    "one interval)",
    ["result"],
)
MAIL_OUTBOX = Gauge(
    "courseschool_mail_outbox_messages",
    "Messages to people in the mail outbox, by state: pending (not sent yet), retrying (pending, tried and "
    "failed at least once), abandoned (given up after MAIL_MAX_ATTEMPTS); sampled from PostgreSQL by the "
    "authorization server's mail delivery",
    ["state"],
)
MAIL_OLDEST = Gauge(
    "courseschool_mail_outbox_oldest_pending_seconds",
    "How long the oldest message not sent yet has waited in the mail outbox (0: none waits)",
)
MAIL_SENDS = Counter(
    "courseschool_mail_sends_total",
    "Tries to hand a message to the SMTP relay, by result: sent, failed (tried again later), abandoned",
    ["result"],
)
WEBHOOK_OUTBOX = Gauge(
    "courseschool_webhook_outbox_deliveries",
    "Deliveries to the operator's webhook (EVENTS_WEBHOOK_URL) in its outbox, by state: pending (not delivered "
    "yet), retrying (pending, tried and failed at least once), abandoned (given up after "
    "EVENTS_WEBHOOK_MAX_ATTEMPTS); sampled from PostgreSQL by the authorization server's webhook delivery",
    ["state"],
)
WEBHOOK_OLDEST = Gauge(
    "courseschool_webhook_outbox_oldest_pending_seconds",
    "How long the event of the oldest delivery not made yet has waited in the webhook outbox (0: none waits)",
)
WEBHOOK_SENDS = Counter(
    "courseschool_webhook_sends_total",
    "Tries to deliver an event to the operator's webhook, by result: delivered, failed (tried again later), abandoned",
    ["result"],
)
ANONYMOUS_EVENTS = Counter(
    "courseschool_anonymous_events_total",
    "Audit events an anonymous caller caused about no one (an unusable metadata-document URL, a failed sign-in "
    "to no account, a source locked out): logged and counted here, not stored in the record of events nor sent "
    "to the webhook, by action",
    ["action"],
)
SIGNING_KEY_ACTIVATED = Gauge(
    "courseschool_signing_key_activated_timestamp_seconds",
    "When the active signing key of each algorithm began signing (Unix time)",
    ["alg"],
)

# Audit event -> the counter child it moves (labels from the event's fields by name).
_AUDITED: dict[str, tuple[Any, tuple[str, ...]]] = {
    "login_succeeded": (SIGN_INS.labels("ok"), ()),
    "login_failed": (SIGN_INS.labels("failed"), ()),
    "login_locked": (SIGN_INS.labels("locked"), ()),
    "account_locked": (LOCKOUTS, ()),
    "consent_given": (CONSENTS.labels("approved"), ()),
    "consent_denied": (CONSENTS.labels("denied"), ()),
    "consent_remembered": (CONSENTS.labels("remembered"), ()),
    "refresh_reused": (REFRESH_REUSE, ()),
    "grant_revoked": (GRANTS_REVOKED, ("reason", "actor")),
    "client_metadata_fetched": (METADATA_FETCHES.labels("ok"), ()),
    "client_metadata_refused": (METADATA_FETCHES.labels("failed"), ()),
}


def count_audit_event(event: str, fields: dict[str, Any]) -> None:
    """Move the counter an audit event stands for (called by `logging.audit`)."""
    counted = _AUDITED.get(event)
    if counted is None:
        return
    counter, label_names = counted
    if label_names:
        counter = counter.labels(*(str(fields.get(name) or "unknown") for name in label_names))
    counter.inc()


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
            REQUESTS.labels(service, route, method, str(status)),
            LATENCY.labels(service, route, method),
        )
    children[0].inc()
    children[1].observe(seconds)


def exposition() -> bytes:
    """Every metric of this process in Prometheus' text format (CONTENT_TYPE_LATEST), the
    pools sampled now. Served at /metrics by common.web."""
    _sample_pools()
    return generate_latest(REGISTRY)
