"""Postgres stores (plain SQL next to its mapping) and the Redis interaction store."""
