-- What the housekeeping job (storage/housekeeping.py) finds by age, by index, so that
-- each of its bounded batches costs the same at a million rows as at a thousand.
CREATE INDEX authz_codes_expires ON authz_codes (expires_at);
CREATE INDEX authz_refresh_tokens_created ON authz_refresh_tokens (created_at);
CREATE INDEX authz_refresh_tokens_sealed ON authz_refresh_tokens (consumed_at) WHERE replay IS NOT NULL;
CREATE INDEX authz_grants_created ON authz_grants (created_at);
CREATE INDEX authz_grants_revoked ON authz_grants (revoked_at) WHERE revoked_at IS NOT NULL;
CREATE INDEX authz_login_sessions_expires ON authz_login_sessions (expires_at);
