"""`common.raw.read_body`: a raw route's body, whole, within its limit."""

from __future__ import annotations

from typing import Any

import pytest

from courseschool.common.errors import InvalidRequestError, PayloadTooLargeError
from courseschool.common.raw import read_body


def _receiving(*messages: dict[str, Any]) -> Any:
    queue = list(messages)

    async def receive() -> dict[str, Any]:
        return queue.pop(0)

    return receive


def _scope(**headers: str) -> dict[str, Any]:
    return {"type": "http", "headers": [(k.replace("_", "-").encode(), v.encode()) for k, v in headers.items()]}


async def test_chunks_are_joined_up_to_the_last() -> None:
    receive = _receiving(
        {"type": "http.request", "body": b"ab", "more_body": True},
        {"type": "http.request", "body": b"", "more_body": True},
        {"type": "http.request", "body": b"cd", "more_body": False},
    )
    assert await read_body(_scope(), receive, 4) == b"abcd"
    assert await read_body(_scope(), _receiving({"type": "http.request"}), 4) == b""


async def test_past_the_limit_is_refused_announced_or_counted() -> None:
    never = _receiving()  # an announced size past the limit is refused before reading
    with pytest.raises(PayloadTooLargeError):
        await read_body(_scope(content_length="5"), never, 4)
    counted = _receiving(
        {"type": "http.request", "body": b"abc", "more_body": True},
        {"type": "http.request", "body": b"de", "more_body": False},
    )
    with pytest.raises(PayloadTooLargeError):
        await read_body(_scope(content_length="2"), counted, 4)  # a Content-Length that lies is no help


async def test_a_request_that_ends_early_is_refused() -> None:
    receive = _receiving({"type": "http.request", "body": b"ab", "more_body": True}, {"type": "http.disconnect"})
    with pytest.raises(InvalidRequestError, match="ended before"):
        await read_body(_scope(), receive, 4)
