"""Security review finding 18: the admin command line prints what clients chose (their
names) without letting it drive the terminal: no control byte in its output but the
newlines it writes itself, in text and in JSON."""

from __future__ import annotations

import asyncio
import unicodedata

import asyncpg
import msgspec

from courseschool.authz.storage.clients import PgClientStore

from .admin_api import admin_cli
from .flow import REDIRECT_URI

# Clear the screen, set the window title, ring the bell, a C1 CSI, then reorder the rest.
HOSTILE = "Evil\x1b[2J\x1b]0;pwned\x07 \x9b31m red\x7f \u202eMRC\u2066 \u200b\ue000 \u2028next"


def hidden_characters(text: str) -> list[str]:
    """Every control, format, private-use or line-separator character but newline."""
    return [repr(ch) for ch in text if ch != "\n" and unicodedata.category(ch) in {"Cc", "Cf", "Co", "Cs", "Zl", "Zp"}]


async def stored_client(pool: asyncpg.Pool) -> str:
    """A client whose name holds all of HOSTILE, as one stored before registration refused
    such names (finding 7), or written by any other way into the table."""
    client = await PgClientStore(pool).create(
        client_id="hostile-client",
        client_name=HOSTILE,
        redirect_uris=[REDIRECT_URI],
        token_endpoint_auth_method="none",
        grant_types=["authorization_code"],
        response_types=["code"],
        application_type="native",
        scope=None,
        id_token_signed_response_alg="RS256",
        secret_hash=None,
        is_integration=False,
        now=1_800_000_000,
    )
    return client.client_id


async def test_text_output_escapes_control_characters(database_url, redis_url, kek, clean_db) -> None:
    client_id = await stored_client(clean_db)
    for args in (("clients", "list"), ("clients", "show", client_id), ("clients", "disable", client_id)):
        done = await asyncio.to_thread(admin_cli, database_url, redis_url, kek, *args)
        assert done.returncode == 0, done.stderr
        assert hidden_characters(done.stdout) == [], args
        assert "Evil\\x1b[2J\\x1b]0;pwned\\x07 \\x9b31m" in done.stdout  # shown, harmlessly
        assert "\\u202eMRC" in done.stdout


async def test_json_output_escapes_what_json_leaves_raw(database_url, redis_url, kek, clean_db) -> None:
    client_id = await stored_client(clean_db)
    for args in (("--json", "clients", "list"), ("--json", "clients", "show", client_id)):
        done = await asyncio.to_thread(admin_cli, database_url, redis_url, kek, *args)
        assert done.returncode == 0, done.stderr
        assert hidden_characters(done.stdout) == [], args
        shown = msgspec.json.decode(done.stdout)
        names = [c["client_name"] for c in shown] if isinstance(shown, list) else [shown["client_name"]]
        assert names == [HOSTILE]  # the same document: the escapes are JSON's own


async def test_error_output_escapes_control_characters(database_url, redis_url, kek, clean_db) -> None:
    done = await asyncio.to_thread(admin_cli, database_url, redis_url, kek, "clients", "show", "no\x1b[2Jsuch")
    assert done.returncode == 1
    assert hidden_characters(done.stderr) == [] and "no\\x1b[2Jsuch" in done.stderr
