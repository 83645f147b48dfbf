-- RFC 7591 §2: the pages a client says describe it (its home page, privacy policy and
-- terms of service). Self-declared: the consent page shows them as the app's own claim.
ALTER TABLE authz_clients
    ADD COLUMN client_uri text,
    ADD COLUMN policy_uri text,
    ADD COLUMN tos_uri text;
