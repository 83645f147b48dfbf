-- Which apps a school's people may connect (issue 39): the school's policy, the apps it
-- approved, and the requests of people its policy stopped. New tables only: the
-- previous release reads none of them and keeps today's behaviour (anyone may connect).

-- The policy, set by the school's owners. No row: 'anyone' (the default of a new school).
CREATE TABLE authz_school_app_policies (
    school_id  uuid        PRIMARY KEY REFERENCES authz_schools (id) ON DELETE CASCADE,
    policy     text        NOT NULL CHECK (policy IN ('anyone', 'read_only', 'approved_only')),
    changed_at timestamptz NOT NULL,
    changed_by uuid        REFERENCES authz_users (id) ON DELETE SET NULL
);

-- An approval covers one client id and nothing else: a metadata document's URL, an
-- integration's id, a self-registered client's own registration (anyone can register
-- another with the same name, which this approval does not cover). `scope`: the scopes
-- it allows, space-separated; NULL: every area (a role's cap still applies).
CREATE TABLE authz_school_app_approvals (
    school_id        uuid        NOT NULL REFERENCES authz_schools (id) ON DELETE CASCADE,
    client_id        text        NOT NULL,
    client_name      text,
    scope            text,
    approved_at      timestamptz NOT NULL,
    approved_by      uuid        REFERENCES authz_users (id) ON DELETE SET NULL,
    approved_by_role text        NOT NULL,
    PRIMARY KEY (school_id, client_id)
);

-- A person's request for the school's approval of an app: pending until an owner or an
-- admin decides it, or until it expires (ACCESS_REQUEST_TTL; housekeeping marks it).
CREATE TABLE authz_app_access_requests (
    id          uuid        PRIMARY KEY,
    school_id   uuid        NOT NULL REFERENCES authz_schools (id) ON DELETE CASCADE,
    user_id     uuid        NOT NULL REFERENCES authz_users (id) ON DELETE CASCADE,
    client_id   text        NOT NULL,
    client_name text,
    scope       text        NOT NULL,  -- what the person's role would let the app have, asked for
    reason      text        NOT NULL,
    created_at  timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    decision    text        CHECK (decision IN ('approved', 'declined', 'expired')),
    decided_at  timestamptz,
    decided_by  uuid        REFERENCES authz_users (id) ON DELETE SET NULL,
    note        text
);
-- One pending request per person and app.
CREATE UNIQUE INDEX authz_app_access_requests_pending
    ON authz_app_access_requests (school_id, user_id, client_id) WHERE decision IS NULL;
CREATE INDEX authz_app_access_requests_school ON authz_app_access_requests (school_id, created_at)
    WHERE decision IS NULL;
CREATE INDEX authz_app_access_requests_created ON authz_app_access_requests (created_at);
