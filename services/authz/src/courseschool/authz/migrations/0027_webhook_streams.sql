-- The webhook's deliveries in order per subject, and security events first (issue 38,
-- T4-3 and item 10): each delivery belongs to a stream (`user:<id>` for the person an
-- event concerns, else `client:<id>`, else the event's own), carries its number in that
-- stream, and only the oldest delivery of a stream still to go may be sent; streams go
-- side by side, so one a receiver keeps refusing holds back no other. `priority` 0 is a
-- security event, 1 a new connection. Nullable: the release before this one inserts
-- without them, and its rows are each a stream of their own, sent as they come.
ALTER TABLE authz_webhook_outbox ADD COLUMN stream text;
ALTER TABLE authz_webhook_outbox ADD COLUMN sequence bigint;
ALTER TABLE authz_webhook_outbox ADD COLUMN priority integer;
CREATE INDEX IF NOT EXISTS authz_webhook_outbox_stream ON authz_webhook_outbox (stream, id)
    WHERE delivered_at IS NULL AND abandoned_at IS NULL;
CREATE INDEX IF NOT EXISTS authz_webhook_outbox_sequence ON authz_webhook_outbox (stream, sequence DESC)
    WHERE sequence IS NOT NULL;
-- What /metrics counts as abandoned, without reading a year of delivered rows.
CREATE INDEX IF NOT EXISTS authz_webhook_outbox_abandoned ON authz_webhook_outbox (id)
    WHERE abandoned_at IS NOT NULL;
