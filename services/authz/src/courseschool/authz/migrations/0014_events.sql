-- One record of events: administrators' actions, people's sign-ins and consents, and
-- what security needs to see (failed sign-ins, lockouts, reuse of codes and refresh
-- tokens, grants ended and why, clients registered, changed and deleted). The CLI's
-- `audit list`, the admin API and the runbooks read it; the log lines stay as they are.
-- Retention: EVENT_RETENTION (housekeeping). The administrators' actions kept so far
-- move here as kind 'admin'.
CREATE TABLE authz_events (
    id        bigserial   PRIMARY KEY,
    at        timestamptz NOT NULL,
    kind      text        NOT NULL CHECK (kind IN ('admin', 'user', 'security')),
    action    text        NOT NULL,  -- the audit event's name, such as refresh_reused
    actor     text        NOT NULL,  -- user, client, system, admin (API) or admin-cli
    source    text,                  -- the caller's address, or user@host of the CLI
    subject   text,                  -- the user acted on or acting
    client_id text,                  -- the client concerned
    school_id uuid,                  -- the school concerned (the subject's)
    details   jsonb       NOT NULL DEFAULT '{}'
);
CREATE INDEX authz_events_at ON authz_events (at DESC, id DESC);
CREATE INDEX authz_events_action ON authz_events (action, at DESC, id DESC);
CREATE INDEX authz_events_subject ON authz_events (subject, at DESC, id DESC) WHERE subject IS NOT NULL;
CREATE INDEX authz_events_client ON authz_events (client_id, at DESC, id DESC) WHERE client_id IS NOT NULL;
CREATE INDEX authz_events_school ON authz_events (school_id, at DESC, id DESC) WHERE school_id IS NOT NULL;

INSERT INTO authz_events (at, kind, action, actor, source, subject, client_id, school_id, details)
SELECT a.at, 'admin', a.action, a.actor, a.source, a.subject, a.client_id, u.school_id, a.details
FROM authz_admin_actions a LEFT JOIN authz_users u ON u.id::text = a.subject
ORDER BY a.id;
DROP TABLE authz_admin_actions;
