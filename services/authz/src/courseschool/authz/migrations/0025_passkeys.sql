-- Passkeys (WebAuthn Level 3, issue 40): a second factor after the password, and a way
-- in without one (user verification required). Only what verifying an assertion needs
-- is kept: the credential's id and public key (COSE, as the authenticator gave it), its
-- signature counter (§6.1.1: a counter that does not grow says the key was cloned), the
-- relying-party id it was made for, and the name the person gave it. A new table only:
-- the release before this one never reads it.
CREATE TABLE authz_passkeys (
    id            uuid        PRIMARY KEY,
    user_id       uuid        NOT NULL REFERENCES authz_users (id) ON DELETE CASCADE,
    credential_id bytea       NOT NULL UNIQUE,
    public_key    bytea       NOT NULL,
    sign_count    bigint      NOT NULL DEFAULT 0,
    rp_id         text        NOT NULL,
    name          text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 64),
    backed_up     boolean     NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL,
    last_used_at  timestamptz
);

CREATE INDEX IF NOT EXISTS authz_passkeys_user ON authz_passkeys (user_id);
