-- Clients identified by the HTTPS URL of their metadata document
-- (draft-ietf-oauth-client-id-metadata-document): recorded on first use so grants
-- can refer to them; `verified_origin` is the host the document was fetched from.
ALTER TABLE authz_clients ADD COLUMN verified_origin text;
