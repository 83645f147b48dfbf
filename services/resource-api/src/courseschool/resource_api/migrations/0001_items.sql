-- The data of every school's resource areas. Each area's documents are validated by
-- its model before they are written (see areas/models.py). Schools are owned by the
-- authorization server; `api_schools` only maps public slugs to ids for the catalogue.
CREATE TABLE api_schools (
    id    uuid PRIMARY KEY,
    slug  text NOT NULL UNIQUE
);

CREATE TABLE api_items (
    id          uuid        PRIMARY KEY,
    school_id   uuid        NOT NULL,
    area        text        NOT NULL,
    unique_key  text,                      -- the area's unique field (slug, code, email), normalised
    published   boolean     NOT NULL DEFAULT false,
    data        jsonb       NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE UNIQUE INDEX api_items_unique_key ON api_items (school_id, area, unique_key) WHERE unique_key IS NOT NULL;
CREATE INDEX api_items_school_page ON api_items (area, school_id, created_at, id);
CREATE INDEX api_items_public_page ON api_items (area, created_at, id) WHERE published;

CREATE TABLE api_singletons (
    school_id   uuid        NOT NULL,
    area        text        NOT NULL,
    owner       text        NOT NULL DEFAULT '',  -- '' school-wide; the user id for per-user areas
    data        jsonb       NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (school_id, area, owner)
);

CREATE TABLE api_files (
    id           uuid        PRIMARY KEY,
    school_id    uuid        NOT NULL,
    filename     text        NOT NULL,
    content_type text        NOT NULL,
    size         integer     NOT NULL,
    sha256       bytea       NOT NULL,
    content      bytea       NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX api_files_school ON api_files (school_id, created_at);
