-- Consent remembered for administrator-made integrations (never for public clients).
CREATE TABLE authz_consents (
    user_id    uuid        NOT NULL REFERENCES authz_users (id) ON DELETE CASCADE,
    client_id  text        NOT NULL REFERENCES authz_clients (client_id) ON DELETE CASCADE,
    scope      text        NOT NULL,
    granted_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, client_id)
);
