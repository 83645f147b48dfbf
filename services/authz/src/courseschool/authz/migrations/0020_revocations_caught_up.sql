-- Resource servers read the revocations recorded since their last look, every second
-- (common/revocation.py, REVOKED_SINCE): grants have an index on revoked_at (0012),
-- revoked access tokens get one here.
CREATE INDEX authz_revoked_access_tokens_revoked ON authz_revoked_access_tokens (revoked_at);
