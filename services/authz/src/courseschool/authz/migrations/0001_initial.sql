-- Schools, their people, clients, login sessions, grants, codes, refresh tokens, keys.
CREATE TABLE authz_schools (
    id          uuid        PRIMARY KEY,
    slug        text        NOT NULL UNIQUE,
    name        text        NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE authz_users (
    id                 uuid        PRIMARY KEY,
    school_id          uuid        NOT NULL REFERENCES authz_schools (id),
    email              text        NOT NULL,
    email_verified     boolean     NOT NULL DEFAULT false,
    name               text        NOT NULL,
    preferred_username text        NOT NULL,
    role               text        NOT NULL CHECK (role IN ('owner', 'admin', 'lecturer', 'student')),
    password_hash      text        NOT NULL,
    disabled_at        timestamptz,
    created_at         timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX authz_users_email ON authz_users (lower(email));

CREATE TABLE authz_clients (
    client_id                    text        PRIMARY KEY,
    client_name                  text,
    redirect_uris                text[]      NOT NULL,
    token_endpoint_auth_method   text        NOT NULL CHECK (token_endpoint_auth_method IN ('none', 'client_secret_post')),
    grant_types                  text[]      NOT NULL,
    response_types               text[]      NOT NULL,
    application_type             text        NOT NULL,
    scope                        text,
    id_token_signed_response_alg text        NOT NULL DEFAULT 'RS256',
    secret_hash                  bytea,
    is_integration               boolean     NOT NULL DEFAULT false,
    created_at                   timestamptz NOT NULL DEFAULT now(),
    disabled_at                  timestamptz,
    CHECK ((token_endpoint_auth_method = 'none') = (secret_hash IS NULL))
);

CREATE TABLE authz_login_sessions (
    id_hash     bytea       PRIMARY KEY,
    user_id     uuid        NOT NULL REFERENCES authz_users (id) ON DELETE CASCADE,
    auth_time   timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    ended_at    timestamptz
);
CREATE INDEX authz_login_sessions_user ON authz_login_sessions (user_id);

CREATE TABLE authz_grants (
    id          uuid        PRIMARY KEY,
    client_id   text        NOT NULL REFERENCES authz_clients (client_id) ON DELETE CASCADE,
    user_id     uuid        NOT NULL REFERENCES authz_users (id) ON DELETE CASCADE,
    school_id   uuid        NOT NULL REFERENCES authz_schools (id),
    scope       text        NOT NULL,
    resource    text        NOT NULL,
    auth_time   timestamptz NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz,
    revoke_reason text
);
CREATE INDEX authz_grants_client ON authz_grants (client_id);
CREATE INDEX authz_grants_user ON authz_grants (user_id);

CREATE TABLE authz_codes (
    code_hash      bytea       PRIMARY KEY,
    grant_id       uuid        NOT NULL REFERENCES authz_grants (id) ON DELETE CASCADE,
    redirect_uri   text        NOT NULL,
    code_challenge text        NOT NULL,
    nonce          text,
    expires_at     timestamptz NOT NULL,
    consumed_at    timestamptz,
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX authz_codes_grant ON authz_codes (grant_id);

CREATE TABLE authz_refresh_tokens (
    token_hash  bytea       PRIMARY KEY,
    grant_id    uuid        NOT NULL REFERENCES authz_grants (id) ON DELETE CASCADE,
    scope       text        NOT NULL,
    resource    text        NOT NULL,
    created_at  timestamptz NOT NULL,
    consumed_at timestamptz
);
CREATE INDEX authz_refresh_tokens_grant ON authz_refresh_tokens (grant_id);

CREATE TABLE authz_signing_keys (
    kid          text        PRIMARY KEY,
    alg          text        NOT NULL,
    public_jwk   jsonb       NOT NULL,
    private_jwk  bytea       NOT NULL,  -- AES-GCM sealed under the key-encryption key
    state        text        NOT NULL CHECK (state IN ('next', 'active', 'retired')),
    created_at   timestamptz NOT NULL DEFAULT now(),
    activated_at timestamptz,
    retired_at   timestamptz
);
CREATE UNIQUE INDEX authz_signing_keys_one_active ON authz_signing_keys (alg) WHERE state = 'active';
