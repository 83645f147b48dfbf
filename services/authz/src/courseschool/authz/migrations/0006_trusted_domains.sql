-- Hosts an administrator trusts: a Client ID Metadata Document served from one of them
-- may list fixed https callbacks on that same host. Every other document's redirect
-- URIs are loopback only, like a self-registered client's.
CREATE TABLE authz_trusted_domains (
    host        text        PRIMARY KEY CHECK (host = lower(host) AND length(host) BETWEEN 1 AND 253),
    created_by  text        NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
