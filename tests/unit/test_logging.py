"""The request line: written straight as JSON in production's format, through
structlog in the console format, with the request's context either way; and every
structlog event in JSON carries the same standard fields."""

from __future__ import annotations

import json

import pytest
import structlog

from courseschool.common.logging import configure_logging, get_logger, request_line


@pytest.fixture(autouse=True)
def _restore_logging():
    """configure_logging binds the (captured) stderr: put back what the session had."""
    import logging

    from courseschool.common import logging as ours

    root = logging.getLogger()
    handlers, level, stream, config = root.handlers[:], root.level, ours._request_stream, structlog.get_config()
    yield
    structlog.contextvars.clear_contextvars()
    structlog.configure(**config)
    root.handlers[:], ours._request_stream = handlers, stream
    root.setLevel(level)


def test_request_line_in_json_has_the_context_and_standard_fields(capsys) -> None:
    configure_logging("info", "json")
    structlog.contextvars.bind_contextvars(request_id="req-7")
    request_line(method="GET", path="/api/oauth/jwks", status=200, ms=0.42)
    get_logger("t").info("other_event", n=1)
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert lines[0] == {
        "request_id": "req-7",
        "method": "GET",
        "path": "/api/oauth/jwks",
        "status": 200,
        "ms": 0.42,
        "event": "request_handled",
        "level": "info",
        "timestamp": lines[0]["timestamp"],
    }
    assert lines[0]["timestamp"].endswith("Z") and "T" in lines[0]["timestamp"]
    # The fast path keeps the shape structlog gives every other event.
    assert set(lines[1]) == {"n", "event", "level", "timestamp", "request_id"}
    assert len(lines[1]["timestamp"]) == len(lines[0]["timestamp"])


def test_request_line_in_the_console_format_goes_through_structlog(capsys) -> None:
    configure_logging("info", "console")
    structlog.contextvars.bind_contextvars(request_id="req-8")
    request_line(method="POST", path="/api/oauth/token", status=400, ms=3.5)
    err = capsys.readouterr().err
    assert "request_handled" in err and "req-8" in err and "/api/oauth/token" in err
    with pytest.raises(json.JSONDecodeError):
        json.loads(err.splitlines()[0])


def test_json_lines_render_values_that_are_not_json_by_nature(capsys) -> None:
    configure_logging("info", "json")
    get_logger("t").warning("odd_values", error=ValueError("boom"), seen={3})
    line = json.loads(capsys.readouterr().err)
    assert line["error"] == "boom" and line["seen"] == [3] and line["level"] == "warning"


def test_audit_events_are_written_even_when_the_log_level_is_warning(capsys) -> None:
    """The admin CLI runs at warning level; its actions must still be on record."""
    from courseschool.common.logging import audit

    configure_logging("warning", "json")
    get_logger("x").info("dropped_info")
    audit("user_role_set", actor="admin-cli", subject="u-1", role="student")
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert [line["event"] for line in lines] == ["user_role_set"]
    assert lines[0]["actor"] == "admin-cli" and lines[0]["audit"] is True and lines[0]["level"] == "info"


class _Writes:
    """A stderr that keeps each write apart, as an unbuffered stream hands each write to
    the shared file or pipe (PYTHONUNBUFFERED: every write is a system call)."""

    def __init__(self) -> None:
        self.writes: list[str] = []

    def write(self, text: str) -> int:
        self.writes.append(text)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def test_every_log_record_is_one_whole_line_in_one_write(monkeypatch) -> None:
    """Two workers share stderr: a record written as two parts (the record, then its
    newline) can have the other worker's record land between them."""
    import logging

    stream = _Writes()
    monkeypatch.setattr("sys.stderr", stream)
    configure_logging("info", "json")
    get_logger("t").info("structlog_event", n=1)
    get_logger("t").warning("structlog_warning", error="X")
    logging.getLogger("granian").warning("a standard library record")
    request_line(method="GET", path="/", status=200, ms=0.1)
    assert len(stream.writes) == 4, stream.writes
    for text in stream.writes:
        assert text.endswith("\n") and text.count("\n") == 1, repr(text)
        json.loads(text)
