-- The resource API's copy of the schools it has met (the authorization server owns
-- them): learnt from its internal API on first use, with the name the `school`
-- singleton starts from.
ALTER TABLE api_schools ADD COLUMN name text;
