-- Apps a school's owner or admin blocked: no one at that school may approve them again,
-- and their grants there ended when the block was made.
CREATE TABLE authz_school_blocks (
    school_id  uuid        NOT NULL REFERENCES authz_schools (id) ON DELETE CASCADE,
    client_id  text        NOT NULL,
    blocked_at timestamptz NOT NULL,
    blocked_by uuid        REFERENCES authz_users (id) ON DELETE SET NULL,
    PRIMARY KEY (school_id, client_id)
);
