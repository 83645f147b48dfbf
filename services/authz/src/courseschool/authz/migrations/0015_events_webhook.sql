-- Security events and new connections for an operator's webhook (EVENTS_WEBHOOK_URL):
-- written in the statement that records the event, delivered from here by a task of its
-- own, retried with backoff, marked once the receiver took it.
CREATE TABLE authz_webhook_outbox (
    id              bigserial   PRIMARY KEY,
    event_id        bigint      NOT NULL REFERENCES authz_events (id) ON DELETE CASCADE,
    body            jsonb       NOT NULL,
    attempts        integer     NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    delivered_at    timestamptz,
    abandoned_at    timestamptz,
    last_error      text
);
CREATE INDEX authz_webhook_outbox_due ON authz_webhook_outbox (next_attempt_at)
    WHERE delivered_at IS NULL AND abandoned_at IS NULL;
