"""JSON from outside (request bodies, fetched documents, token headers), decoded within
bounds: its size and its nesting depth are checked before the decoder runs.

msgspec, like every recursive decoder, has no depth limit of its own: `[[[[...` ten
thousand deep ends in a `RecursionError`, which would answer 500 and log a traceback.
The depth is found by one scan that skips strings and counts `[` and `{` (RFC 8259 §2:
only arrays and objects nest); a body with fewer brackets than the limit cannot be too
deep and is not scanned at all. RFC 8259 §9 lets a parser limit both size and depth.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import msgspec

from .errors import InvalidRequestError

MAX_DEPTH = 32  # the deepest document of any schema here nests 5 levels
MAX_BYTES = 1024 * 1024

# A string (to step over: brackets inside it do not count; an unterminated one runs to
# the end, which the decoder then refuses), or one bracket.
_TOKENS = re.compile(rb'"(?:[^"\\]++|\\.)*+"?|[\[\]{}]', re.DOTALL)
_OPENERS = (ord("["), ord("{"))
_QUOTE = ord('"')


def nested_deeper_than(body: bytes, limit: int) -> bool:
    """True when arrays and objects in `body` nest more than `limit` levels deep."""
    if body.count(b"[") + body.count(b"{") <= limit:
        return False
    depth = 0
    for token in _TOKENS.finditer(body):
        first = body[token.start()]
        if first == _QUOTE:
            continue
        if first in _OPENERS:
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


def decode_json(
    body: bytes,
    *,
    into: Any = Any,
    invalid: Callable[[str], Exception] = InvalidRequestError,
    what: str = "the body",
    max_bytes: int = MAX_BYTES,
    max_depth: int = MAX_DEPTH,
) -> Any:
    """`body` decoded as `into`. Too large, nested too deeply or not JSON: raises
    `invalid(description)` (the caller's error: `invalid_request`, `invalid_client_metadata`,
    ...). JSON of the wrong shape raises msgspec.ValidationError, for the caller to map."""
    if len(body) > max_bytes:
        raise invalid(f"{what} is larger than {max_bytes} bytes")
    if nested_deeper_than(body, max_depth):
        raise invalid(f"{what} nests arrays and objects more than {max_depth} levels deep")
    try:
        return msgspec.json.decode(body, type=into)
    except msgspec.ValidationError:
        raise
    except (msgspec.DecodeError, UnicodeDecodeError):
        # msgspec raises the second for a string that is not UTF-8 (RFC 8259 §8.1).
        raise invalid(f"{what} is not valid JSON") from None
