-- Every administrative action (admin API and CLI), who took it and from where: the
-- record `admin audit list` reads. Administrative actions are few; rows are kept.
CREATE TABLE authz_admin_actions (
    id        bigserial   PRIMARY KEY,
    at        timestamptz NOT NULL DEFAULT now(),
    actor     text        NOT NULL,  -- "admin" (the admin API) or "admin-cli"
    source    text        NOT NULL,  -- the API caller's address, or user@host of the CLI
    action    text        NOT NULL,  -- the audit event's name, such as user_role_set
    subject   text,                  -- the user acted on
    client_id text,                  -- the client acted on
    details   jsonb       NOT NULL DEFAULT '{}'
);
CREATE INDEX authz_admin_actions_at ON authz_admin_actions (at DESC);
