"""Rows no request needs any more, removed in bounded batches: each rule deletes at most
`batch` rows per statement and runs at most `rounds` statements per pass, and rows
locked by a request or by another replica's pass are skipped, so that several replicas
may sweep at once and no pass holds a lock for long."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import asyncpg


class SweepRule(NamedTuple):
    table: str
    key: str  # the primary key
    condition: str  # what may go; $1 is the batch size, $2... the rule's own arguments


# One bounded batch of a rule ($1: its size); rows another transaction holds are skipped.
# The keys are taken once, as an array (an InitPlan), never as `IN (SELECT ...)`: as the
# inner side of a nested-loop semi-join the planner may run that subquery again for
# every row of the table, and each run locks the next $1 rows (those the statement has
# already deleted are skipped), so one batch deleted every matching row. Which plan is
# chosen depends on the table's statistics: it showed only under load.
_BATCH = """
DELETE FROM {table} WHERE {key} = ANY(ARRAY(
    SELECT {key} FROM {table} WHERE {condition} LIMIT $1 FOR UPDATE SKIP LOCKED))"""


async def sweep(
    pool: asyncpg.Pool,
    rules: Mapping[str, SweepRule],
    arguments: Mapping[str, Sequence[object]] | None = None,
    *,
    batch: int,
    rounds: int,
) -> dict[str, int]:
    """One pass over every rule (with its `arguments`, if any): rows removed per rule."""
    done: dict[str, int] = {}
    for name, rule in rules.items():
        statement = _BATCH.format(table=rule.table, key=rule.key, condition=rule.condition)
        args = (batch, *(arguments or {}).get(name, ()))
        done[name] = 0
        for _ in range(rounds):
            status = await pool.execute(statement, *args)
            count = int(status.rsplit(" ", 1)[1])
            done[name] += count
            if count < batch:
                break
    return done
