-- A notice of each new connection, for the person it connected: shown once on the next
-- page of ours they open in another sign-in session (another device, or later), then
-- marked seen. Kept 30 days (housekeeping).
CREATE TABLE authz_notices (
    id           bigserial   PRIMARY KEY,
    user_id      uuid        NOT NULL REFERENCES authz_users (id) ON DELETE CASCADE,
    grant_id     uuid        NOT NULL REFERENCES authz_grants (id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL,
    session_hash bytea,                 -- the sign-in session the approval was made in
    seen_at      timestamptz
);
CREATE INDEX authz_notices_unseen ON authz_notices (user_id) WHERE seen_at IS NULL;
