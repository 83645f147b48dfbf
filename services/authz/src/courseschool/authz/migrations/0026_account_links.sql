-- Invitations and password resets by e-mail, and the account page (issue 40).

-- A single-use link: only the digest of its token is kept (the token itself travels
-- in the e-mail, sealed in the outbox until it is sent). `purpose` is 'invitation' or
-- 'password_reset'; a link is used once (used_at), and refused after expires_at (the
-- application's time). A new link of a purpose supersedes the person's earlier ones.
CREATE TABLE authz_account_links (
    token_hash bytea       PRIMARY KEY,
    user_id    uuid        NOT NULL REFERENCES authz_users (id) ON DELETE CASCADE,
    purpose    text        NOT NULL CHECK (purpose IN ('invitation', 'password_reset')),
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz
);
CREATE INDEX authz_account_links_user ON authz_account_links (user_id);
CREATE INDEX authz_account_links_expires ON authz_account_links (expires_at);

-- What a message needs and no one may read in the table: the link, sealed under the
-- key-encryption key (AES-256-GCM), cleared once the relay took the message; a message
-- past expires_at is never sent (housekeeping removes it). The previous release's
-- delivery does not know these kinds and gives up on them.
ALTER TABLE authz_mail_outbox ADD COLUMN sealed bytea;
ALTER TABLE authz_mail_outbox ADD COLUMN expires_at timestamptz;

-- The browsers signed in now, as the account page lists them: the address and the
-- browser (in a few words) a session was opened from, when it was last seen, and when
-- its person last confirmed it is them (the password or a code re-entered): a change on
-- the account page needs that within RECENT_SIGN_IN seconds.
ALTER TABLE authz_login_sessions ADD COLUMN created_from text;
ALTER TABLE authz_login_sessions ADD COLUMN created_agent text;
ALTER TABLE authz_login_sessions ADD COLUMN last_seen_at timestamptz;
ALTER TABLE authz_login_sessions ADD COLUMN confirmed_at timestamptz;
