-- Second factors (issue 40): an authenticator app (TOTP, RFC 6238), recovery codes,
-- and a school's requirement of two-step sign-in.

-- One authenticator app per person. The secret is sealed under the key-encryption key
-- (AES-256-GCM, the user id as associated data), never stored in the clear. A row
-- without confirmed_at is an enrolment under way: it counts for nothing until a code
-- from the app confirms it. last_step is the RFC 6238 time step of the last code
-- accepted: a code of that step or an earlier one is refused (a code works once).
CREATE TABLE authz_totp (
    user_id      uuid        PRIMARY KEY REFERENCES authz_users (id) ON DELETE CASCADE,
    secret       bytea       NOT NULL,
    created_at   timestamptz NOT NULL,
    confirmed_at timestamptz,
    last_step    bigint      NOT NULL DEFAULT 0
);

-- Recovery codes: ten per person, single use, only their digest kept.
CREATE TABLE authz_recovery_codes (
    user_id    uuid        NOT NULL REFERENCES authz_users (id) ON DELETE CASCADE,
    code_hash  bytea       NOT NULL,
    created_at timestamptz NOT NULL,
    used_at    timestamptz,
    PRIMARY KEY (user_id, code_hash)
);

-- A school's requirement of two-step sign-in, set by its owners; its own table (a
-- school's app policy is another matter). No row: not required.
CREATE TABLE authz_school_two_step (
    school_id  uuid        PRIMARY KEY REFERENCES authz_schools (id) ON DELETE CASCADE,
    required   text        NOT NULL CHECK (required IN ('none', 'staff', 'approvers', 'everyone')),
    changed_at timestamptz NOT NULL,
    changed_by uuid        REFERENCES authz_users (id) ON DELETE SET NULL
);
