-- What the housekeeping job (storage/housekeeping.py) finds by age, by index, so that
-- each of its bounded batches costs the same at a million rows as at a thousand.
CREATE INDEX authz_codes_expires ON authz_codes (expires_at);
CREATE INDEX authz_refresh_tokens_created ON authz_refresh_tokens (created_at);
CREATE INDEX authz_grants_created ON authz_grants (created_at);
CREATE INDEX authz_grants_revoked ON authz_grants (revoked_at) WHERE revoked_at IS NOT NULL;
CREATE INDEX authz_login_sessions_expires ON authz_login_sessions (expires_at);

-- A user's grants of one client (the grants a new approval replaces, what was allowed
-- before): one index for both, so no plan reads every grant of a busy client's index
-- (with stale statistics the planner ANDed the client's and the user's, 1 ms a call).
CREATE INDEX authz_grants_user_client ON authz_grants (user_id, client_id);
DROP INDEX authz_grants_user;

-- Every rotation updates a token row, every index of the table gets an entry for it:
-- this one was never read (a successor is found by its own primary key).
DROP INDEX authz_refresh_tokens_replaced_by;

-- Room in each page for the row's next version, so that marking a code consumed or a
-- grant used (columns no index holds) is a heap-only update that writes no index.
ALTER TABLE authz_codes SET (fillfactor = 80);
ALTER TABLE authz_grants SET (fillfactor = 80);
