-- A step-up is the same sign-in (issue 36): a new approval of the same client from the
-- same browser sign-in whose scope includes all of a live grant's ends that grant when
-- its code is redeemed (reason `stepped_up`). The grant keeps the digest of the login
-- session it was approved in (never the session id itself), and, when it replaced
-- earlier approvals of that sign-in, when the first of them was approved: the
-- connected-apps page shows one sign-in whose access grew, and when.
ALTER TABLE authz_grants ADD COLUMN session_hash bytea;
ALTER TABLE authz_grants ADD COLUMN first_approved_at timestamptz;
