-- What each grant did at this API (activity.py): reads counted per grant, area and UTC
-- day (gathered in memory and Redis, written here in batches), and every change one by
-- one, written by the same statement as the change itself (items.py, files.py). A grant
-- belongs to one client, user and school; those are kept with its rows so that a user's
-- or a school's activity is found without asking the authorization server. Rows older
-- than ACTIVITY_RETENTION_DAYS are removed by the housekeeping pass.
CREATE TABLE api_activity_reads (
    grant_id   uuid        NOT NULL,
    day        date        NOT NULL,
    area       text        NOT NULL,
    client_id  text        NOT NULL,
    user_id    text        NOT NULL,
    school_id  uuid        NOT NULL,
    reads      bigint      NOT NULL,
    last_at    timestamptz NOT NULL,
    PRIMARY KEY (grant_id, day, area)
);
CREATE INDEX api_activity_reads_user ON api_activity_reads (user_id, day);
CREATE INDEX api_activity_reads_school ON api_activity_reads (school_id, day);
CREATE INDEX api_activity_reads_day ON api_activity_reads (day);

CREATE TABLE api_activity_changes (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at         timestamptz NOT NULL DEFAULT clock_timestamp(),
    grant_id   uuid,                   -- NULL only for a token that named no grant
    client_id  text        NOT NULL,
    user_id    text        NOT NULL,
    school_id  uuid        NOT NULL,
    area       text        NOT NULL,
    item_id    uuid,                   -- NULL for a singleton (school, appearance, account)
    item_name  text,                   -- the item's name or title when it was changed, where the area has one
    action     text        NOT NULL CHECK (action IN ('create', 'update', 'delete'))
);
CREATE INDEX api_activity_changes_grant ON api_activity_changes (grant_id, at, id);  -- newest first: read backwards
CREATE INDEX api_activity_changes_user ON api_activity_changes (user_id, at);
CREATE INDEX api_activity_changes_school ON api_activity_changes (school_id, at);
CREATE INDEX api_activity_changes_at ON api_activity_changes (at);
