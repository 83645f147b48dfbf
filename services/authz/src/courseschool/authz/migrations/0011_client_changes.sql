-- Every change of a client row is announced on the `authz_clients` channel (payload: the
-- client_id; empty after a TRUNCATE, meaning "all"), delivered at commit. Each process
-- keeps the clients it authenticates in memory and drops an entry when it hears of it
-- (storage/clients.py), so no writer, whichever code path or tool, can leave a stale copy.
CREATE FUNCTION authz_clients_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        PERFORM pg_notify('authz_clients', '');
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM pg_notify('authz_clients', OLD.client_id);
    ELSE
        PERFORM pg_notify('authz_clients', NEW.client_id);
        IF TG_OP = 'UPDATE' AND OLD.client_id <> NEW.client_id THEN
            PERFORM pg_notify('authz_clients', OLD.client_id);
        END IF;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER authz_clients_changed AFTER INSERT OR UPDATE OR DELETE ON authz_clients
    FOR EACH ROW EXECUTE FUNCTION authz_clients_changed();
CREATE TRIGGER authz_clients_truncated AFTER TRUNCATE ON authz_clients
    FOR EACH STATEMENT EXECUTE FUNCTION authz_clients_changed();
