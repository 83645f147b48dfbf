-- A school's block covers the software, not one registration (issue 38, T4-2), and is
-- checked where tokens are issued (T4-1). A block is kept as keys (`protocol/school_blocks.py`):
-- the client id it was made on, a metadata document's origin, a self-registered client's
-- name (its confusable keys); one row per key, so the check at a code exchange and at each
-- refresh is one lookup of the primary key by the grant's school and the client's keys.
-- `client_id` and `client_name` say which app the steward blocked (the rows of one block
-- share them); `blocked_by_role` keeps whose decision it is: an owner's is not an admin's
-- to lift (T4-7).
--
-- Expand only: a table of its own beside `authz_school_blocks`, which the previous
-- release still reads and writes while both serve (a block made by either is written to
-- both by this release; the old table goes in a later release).
CREATE TABLE authz_school_block_keys (
    school_id       uuid        NOT NULL REFERENCES authz_schools (id) ON DELETE CASCADE,
    key             text        NOT NULL,
    kind            text        NOT NULL CHECK (kind IN ('client', 'origin', 'name')),
    client_id       text        NOT NULL,
    client_name     text,
    blocked_at      timestamptz NOT NULL,
    blocked_by      uuid        REFERENCES authz_users (id) ON DELETE SET NULL,
    blocked_by_role text,
    PRIMARY KEY (school_id, key)
);
CREATE INDEX authz_school_block_keys_by_app ON authz_school_block_keys (school_id, client_id);
-- The blocks made before: their client id, and a metadata-document client's origin from
-- its URL. (A self-registered client's name keys need the confusable data, which SQL has
-- not: blocks made before this migration cover such a client's id only, until blocked
-- again.)
INSERT INTO authz_school_block_keys (school_id, key, kind, client_id, client_name, blocked_at, blocked_by, blocked_by_role)
SELECT b.school_id, 'client:' || b.client_id, 'client', b.client_id, c.client_name, b.blocked_at, b.blocked_by, u.role
FROM authz_school_blocks b
LEFT JOIN authz_clients c ON c.client_id = b.client_id
LEFT JOIN authz_users u ON u.id = b.blocked_by;
INSERT INTO authz_school_block_keys (school_id, key, kind, client_id, client_name, blocked_at, blocked_by, blocked_by_role)
SELECT DISTINCT ON (b.school_id, 'origin:' || lower(substring(b.client_id FROM '^(https://[^/?#]+)')))
       b.school_id, 'origin:' || lower(substring(b.client_id FROM '^(https://[^/?#]+)')), 'origin', b.client_id,
       c.client_name, b.blocked_at, b.blocked_by, u.role
FROM authz_school_blocks b
JOIN authz_clients c ON c.client_id = b.client_id
LEFT JOIN authz_users u ON u.id = b.blocked_by
WHERE c.verified_origin IS NOT NULL AND b.client_id ~ '^https://[^/?#]+'
ORDER BY b.school_id, 'origin:' || lower(substring(b.client_id FROM '^(https://[^/?#]+)')), b.blocked_at
ON CONFLICT (school_id, key) DO NOTHING;
