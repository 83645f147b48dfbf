"""The statement that redeems an authorization code (`PgGrantStore.redeem_code`): the
code consumed, its first refresh token recorded, and the sign-ins the new grant ends.
Kept apart from `grants.py` for its size: the rules it carries are the subject."""

# One statement, so atomic without a transaction (one round trip): the code is
# consumed, its refresh token recorded, the grant marked used (and bound to the DPoP key
# of the exchange's proof, for a public client) and the sign-ins it ends ended together,
# or none of it happens.
#
# One grant per sign-in: the user's other live grants of the same client stay, with
# these exceptions ended here. A grant bound to the same DPoP key as this one
# (`dpop_jkt`, RFC 9449 §5: the same install asking again) is `replaced`. A grant
# approved in the same browser sign-in (`session_hash`) whose scope this one includes
# whole is `stepped_up`: the client asked for more and the person allowed it, so the
# sign-in goes on with the wider grant and the narrower lineage ends (the new grant
# keeps when the first of them was approved, `first_approved_at`). Past GRANTS_PER_APP
# ($7) live grants of the user and client, the least recently used are `superseded`.
# Only grants whose code was exchanged count (`last_used_at` is set by every exchange
# and rotation): an approval never exchanged holds nothing.
#
# Lock order. The grant row is touched only after the code row (through `consumed`),
# as the refresh token's foreign-key check already does; nothing locks a grant and then
# its code except deleting a client, whose cascade the foreign key faces anyway. The
# grants ended are locked after that, in id order (`locked`), and only grants another
# exchange already committed qualify (a grant being exchanged has no `last_used_at` in
# anyone else's snapshot): two exchanges never wait on each other's own grant, and lock
# the grants they end in the same order. A rotation locks one grant and then its tokens,
# a revocation one grant: neither waits on a lock an exchange holds while holding one it
# wants. Two exchanges at the bound at once may each leave the other's grant live: the
# bound is then passed by one until the next exchange.
REDEEM_CODE = """
WITH consumed AS (
    UPDATE authz_codes SET consumed_at = to_timestamp($5)
    WHERE code_hash = $1 AND consumed_at IS NULL
    RETURNING grant_id
), inserted AS (
    INSERT INTO authz_refresh_tokens (token_hash, grant_id, scope, resource, created_at)
    SELECT $2, grant_id, $3, $4, to_timestamp($5) FROM consumed WHERE $2::bytea IS NOT NULL
), new AS (
    SELECT id, user_id, client_id, scope, session_hash, COALESCE($6::text, dpop_jkt) AS dpop_jkt
    FROM authz_grants WHERE id IN (SELECT grant_id FROM consumed)
), others AS (
    SELECT e.id, e.last_used_at, COALESCE(e.first_approved_at, e.created_at) AS first_approved_at,
           CASE WHEN e.dpop_jkt = n.dpop_jkt THEN 'replaced'
                WHEN e.session_hash = n.session_hash
                     AND string_to_array(e.scope, ' ') <@ string_to_array(n.scope, ' ') THEN 'stepped_up'
           END AS replacing
    FROM authz_grants e JOIN new n ON e.user_id = n.user_id AND e.client_id = n.client_id AND e.id <> n.id
    WHERE e.revoked_at IS NULL AND e.last_used_at IS NOT NULL
), used AS (
    UPDATE authz_grants SET last_used_at = to_timestamp($5), dpop_jkt = COALESCE($6::text, dpop_jkt),
        first_approved_at = (SELECT min(first_approved_at) FROM others WHERE replacing = 'stepped_up')
    WHERE id IN (SELECT grant_id FROM consumed)
), ranked AS (
    SELECT id, replacing,
           row_number() OVER (PARTITION BY replacing IS NULL ORDER BY last_used_at DESC, id) AS recency
    FROM others
), ending AS (
    SELECT id, COALESCE(replacing, 'superseded') AS reason
    FROM ranked WHERE replacing IS NOT NULL OR recency >= $7::int
), locked AS (
    SELECT g.id FROM authz_grants g
    WHERE g.id IN (SELECT id FROM ending) AND g.revoked_at IS NULL
    ORDER BY g.id FOR UPDATE
), ended AS (
    UPDATE authz_grants g SET revoked_at = to_timestamp($5), revoke_reason = n.reason
    FROM ending n
    WHERE g.id = n.id AND g.id IN (SELECT id FROM locked) AND g.revoked_at IS NULL
    RETURNING g.id::text AS id, n.reason
)
SELECT EXISTS (SELECT 1 FROM consumed) AS consumed,
       COALESCE((SELECT json_agg(json_build_array(id, reason) ORDER BY id) FROM ended)::text, '[]') AS ended
"""
