-- A school's block covers the software, not one registration (issue 38, T4-2), and is
-- checked where tokens are issued (T4-1). A block is kept as keys (`protocol/school_blocks.py`):
-- the client id it was made on, a metadata document's origin, a self-registered client's
-- name (its confusable keys); one row per key, so the check at a code exchange and at each
-- refresh is one lookup of the primary key by the grant's school and the client's keys.
-- `client_id` and `client_name` say which app the steward blocked (the rows of one block
-- share them); `blocked_by_role` keeps whose decision it is: an owner's is not an admin's
-- to lift (T4-7).
ALTER TABLE authz_school_blocks DROP CONSTRAINT authz_school_blocks_pkey;
ALTER TABLE authz_school_blocks
    ADD COLUMN kind text,
    ADD COLUMN key text,
    ADD COLUMN client_name text,
    ADD COLUMN blocked_by_role text;
UPDATE authz_school_blocks b SET kind = 'client', key = 'client:' || b.client_id,
    client_name = (SELECT c.client_name FROM authz_clients c WHERE c.client_id = b.client_id),
    blocked_by_role = (SELECT u.role FROM authz_users u WHERE u.id = b.blocked_by);
-- A metadata-document client blocked before: its origin from its URL. (A self-registered
-- client's name keys need the confusable data, which SQL has not: blocks made before this
-- migration cover such a client's id only, until blocked again.)
INSERT INTO authz_school_blocks (school_id, client_id, blocked_at, blocked_by, kind, key, client_name, blocked_by_role)
SELECT DISTINCT ON (school_id, key) school_id, client_id, blocked_at, blocked_by, 'origin', key, client_name,
       blocked_by_role
FROM (SELECT b.*, 'origin:' || lower(substring(b.client_id FROM '^(https://[^/?#]+)')) AS origin_key
      FROM authz_school_blocks b JOIN authz_clients c ON c.client_id = b.client_id
      WHERE c.verified_origin IS NOT NULL AND b.client_id ~ '^https://[^/?#]+') o (school_id, client_id, blocked_at,
      blocked_by, kind, old_key, client_name, blocked_by_role, key)
ORDER BY school_id, key, blocked_at;
ALTER TABLE authz_school_blocks ALTER COLUMN kind SET NOT NULL, ALTER COLUMN key SET NOT NULL,
    ADD CONSTRAINT authz_school_blocks_kind CHECK (kind IN ('client', 'origin', 'name'));
ALTER TABLE authz_school_blocks ADD PRIMARY KEY (school_id, key);
CREATE INDEX authz_school_blocks_by_app ON authz_school_blocks (school_id, client_id);
