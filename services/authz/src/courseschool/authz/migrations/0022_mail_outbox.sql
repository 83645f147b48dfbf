-- E-mail to people (issue 39), through the SMTP relay the operator configures
-- (SMTP_URL): each message is put here in the statement that records what it tells of
-- (a new connection's notice; a school's ending or blocking of an app), then sent by a
-- task of its own (mail/delivery.py), one message per lease, retried with backoff,
-- marked sent once the relay took it, abandoned after MAIL_MAX_ATTEMPTS.
-- `details` holds what the message says (the app's name, the device, the address), kept
-- as it was when it happened; the recipient's address is read at sending time.
-- `created_at` is the application's time (housekeeping removes rows 30 days old); the
-- delivery's own moments (lease, retries, sent, abandoned) are PostgreSQL's, like the
-- webhook outbox's.
CREATE TABLE authz_mail_outbox (
    id              bigserial   PRIMARY KEY,
    message_id      uuid        NOT NULL DEFAULT gen_random_uuid(),  -- the Message-ID, the same on every try
    kind            text        NOT NULL,  -- new_connection, school_ended_access, school_blocked_app
    user_id         uuid        NOT NULL REFERENCES authz_users (id) ON DELETE CASCADE,
    details         jsonb       NOT NULL,
    created_at      timestamptz NOT NULL,
    attempts        integer     NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    sent_at         timestamptz,
    abandoned_at    timestamptz,
    last_error      text
);
CREATE INDEX authz_mail_outbox_due ON authz_mail_outbox (next_attempt_at)
    WHERE sent_at IS NULL AND abandoned_at IS NULL;
CREATE INDEX authz_mail_outbox_created ON authz_mail_outbox (created_at);

-- The notice on our pages says what the mail says: the device the approval came from is
-- the grant's (created_agent); whether the app was already connected (then it is a new
-- sign-in of it, not a new app) is decided when the approval is made.
ALTER TABLE authz_notices ADD COLUMN already_connected boolean NOT NULL DEFAULT false;
