-- One grant per sign-in (issue 24): the connected-apps page names each sign-in by the
-- browser it was approved in. Only a short form ("Firefox on Linux") is kept, made from
-- the User-Agent header when the approval is given; the header itself is never stored.
ALTER TABLE authz_grants ADD COLUMN created_agent text;
