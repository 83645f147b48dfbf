-- Refresh-token rotation with a replay window, and revoked access tokens.
ALTER TABLE authz_refresh_tokens
    ADD COLUMN replaced_by bytea,   -- digest of the token this one was rotated into
    ADD COLUMN replay      bytea;   -- the rotation's response, sealed under a key derived from this token

CREATE INDEX authz_refresh_tokens_replaced_by ON authz_refresh_tokens (replaced_by);

CREATE TABLE authz_revoked_access_tokens (
    jti        text        PRIMARY KEY,
    grant_id   uuid        NOT NULL,
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX authz_revoked_access_tokens_expires ON authz_revoked_access_tokens (expires_at);
