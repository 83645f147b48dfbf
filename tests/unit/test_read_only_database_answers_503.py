"""A write refused because the database server no longer takes writes (a primary demoted
or fenced during a failover, a standby reached) is an outage like a server out of reach:
the JSON 503 with Retry-After, never a 500. Any other refusal of the database is still a bug."""

from __future__ import annotations

import asyncpg
from litestar import Litestar, post
from litestar.testing import TestClient

from courseschool.common.answers import answer_error


@post("/read-only")
async def read_only() -> None:
    raise asyncpg.ReadOnlySQLTransactionError("cannot execute INSERT in a read-only transaction")


@post("/undefined-table")
async def undefined_table() -> None:
    raise asyncpg.UndefinedTableError('relation "nowhere" does not exist')


def test_a_read_only_server_is_answered_503_and_another_refusal_500() -> None:
    app = Litestar([read_only, undefined_table], exception_handlers={Exception: answer_error})
    with TestClient(app) as client:
        refused = client.post("/read-only")
        assert refused.status_code == 503, refused.text
        assert refused.json()["error"] == "temporarily_unavailable"
        assert refused.headers["retry-after"] == "1"
        assert client.post("/undefined-table").status_code == 500
