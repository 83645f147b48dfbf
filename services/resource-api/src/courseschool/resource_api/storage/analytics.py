"""Figures computed from a school's data over a period: students, members, orders and
revenue (paid orders, per currency), and enrolments per course. The period is a
parameter of every statement, never PostgreSQL's now(): its default end is the
application's clock (web/query.py, `period`)."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import asyncpg

_COUNTS = """
SELECT area, count(*) AS n FROM api_items
WHERE school_id = $1 AND area IN ('students', 'members', 'courses')
GROUP BY area
"""
_REVENUE = """
SELECT data->>'currency' AS currency, count(*) AS orders, coalesce(sum((data->>'total')::bigint), 0)::bigint AS revenue
FROM api_items
WHERE school_id = $1 AND area = 'orders' AND data->>'status' = 'paid'
  AND (data->>'placed_at')::timestamptz >= $2 AND (data->>'placed_at')::timestamptz < $3
GROUP BY 1 ORDER BY 1
"""
_ENROLMENTS = """
SELECT e->>'course_id' AS course_id, count(*) AS enrolments
FROM api_items s, jsonb_array_elements(s.data->'enrollments') e
WHERE s.school_id = $1 AND s.area = 'students'
  AND (e->>'enrolled_at')::timestamptz >= $2 AND (e->>'enrolled_at')::timestamptz < $3
GROUP BY 1 ORDER BY 2 DESC, 1
"""
_NEW_STUDENTS = """
SELECT count(*) FROM api_items WHERE school_id = $1 AND area = 'students' AND created_at >= $2 AND created_at < $3
"""


async def school_figures(pool: asyncpg.Pool, school_id: str, start: dt.datetime, end: dt.datetime) -> dict[str, Any]:
    school = uuid.UUID(school_id)
    async with pool.acquire() as conn:
        counts = {r["area"]: r["n"] for r in await conn.fetch(_COUNTS, school)}
        revenue = await conn.fetch(_REVENUE, school, start, end)
        enrolments = await conn.fetch(_ENROLMENTS, school, start, end)
        new_students = await conn.fetchval(_NEW_STUDENTS, school, start, end)
    return {
        "period": {"from": start.isoformat(), "to": end.isoformat()},
        "totals": {
            "students": counts.get("students", 0),
            "members": counts.get("members", 0),
            "courses": counts.get("courses", 0),
        },
        "new_students": new_students,
        "orders_paid": sum(r["orders"] for r in revenue),
        "revenue": [{"currency": r["currency"], "amount": r["revenue"], "orders": r["orders"]} for r in revenue],
        "enrolments_per_course": [{"course_id": r["course_id"], "enrolments": r["enrolments"]} for r in enrolments],
    }
