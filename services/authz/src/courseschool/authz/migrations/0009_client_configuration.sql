-- client_secret_basic (RFC 6749 §2.3.1) as a registrable method, and the RFC 7592 client
-- configuration endpoint: a self-registered client keeps the hash of its registration
-- access token (administrators' integrations and metadata-document clients have none).
ALTER TABLE authz_clients DROP CONSTRAINT authz_clients_token_endpoint_auth_method_check;
ALTER TABLE authz_clients ADD CONSTRAINT authz_clients_token_endpoint_auth_method_check
    CHECK (token_endpoint_auth_method IN ('none', 'client_secret_post', 'client_secret_basic'));
ALTER TABLE authz_clients ADD COLUMN registration_token_hash bytea;
