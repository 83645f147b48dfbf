-- DPoP (RFC 9449): clients that must use it, codes bound to a key at /authorize
-- (dpop_jkt, §10), and grants whose refresh tokens are bound to a public client's key (§5).
ALTER TABLE authz_clients ADD COLUMN dpop_bound_access_tokens boolean NOT NULL DEFAULT false;
ALTER TABLE authz_codes ADD COLUMN dpop_jkt text;    -- RFC 7638 thumbprint, SHA-256, base64url
ALTER TABLE authz_grants ADD COLUMN dpop_jkt text;
