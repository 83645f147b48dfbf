-- One canonical form of every email, unique, for every lookup and every sign-in
-- lockout key (protocol/emails.py: NFKC, full case folding, NFKC; security review,
-- finding 6). PostgreSQL's lower() found users by another rule than the lockout's.
--
-- SQL can compute that form exactly only for ASCII addresses, where it is ASCII
-- lower-casing (lower() under the "C" collation, whatever the database's locale).
-- Rather than give any other address a form the application would never match (or
-- silently merge two users), this migration refuses, saying which rows to change.
DO $$
DECLARE
    found text;
BEGIN
    SELECT string_agg(id::text, ', ') INTO found FROM authz_users WHERE email !~ '^[ -~]*$';
    IF found IS NOT NULL THEN
        RAISE EXCEPTION 'authz_users: emails with non-ASCII characters cannot be canonicalised in SQL (users %)', found
            USING HINT = 'Give these users ASCII emails (or remove them), then migrate again.';
    END IF;
END $$;

ALTER TABLE authz_users ADD COLUMN email_canonical text;
UPDATE authz_users SET email_canonical = lower(btrim(email, ' ') COLLATE "C");

DO $$
DECLARE
    found text;
BEGIN
    SELECT string_agg(email_canonical, ', ') INTO found
    FROM (SELECT email_canonical FROM authz_users GROUP BY 1 HAVING count(*) > 1) AS shared;
    IF found IS NOT NULL THEN
        RAISE EXCEPTION 'authz_users: several users share the email %', found
            USING HINT = 'Keep one user per email (change or remove the others), then migrate again.';
    END IF;
END $$;

ALTER TABLE authz_users ALTER COLUMN email_canonical SET NOT NULL;
DROP INDEX authz_users_email;
CREATE UNIQUE INDEX authz_users_email_canonical ON authz_users (email_canonical);
