-- The connected-apps page: when a grant last had a token issued, and where it was approved from.
ALTER TABLE authz_grants
    ADD COLUMN last_used_at timestamptz,  -- the last code exchange or refresh of the grant
    ADD COLUMN created_from text;         -- the address the approval came from (web.http.client_ip)

-- Grants made before this migration: their last issue is the newest refresh token, or the
-- code's redemption for a client without refresh tokens. Where they were approved from was
-- not recorded, and stays unknown.
UPDATE authz_grants g SET last_used_at = coalesce(
    (SELECT max(rt.created_at) FROM authz_refresh_tokens rt WHERE rt.grant_id = g.id),
    (SELECT max(c.consumed_at) FROM authz_codes c WHERE c.grant_id = g.id)
);
