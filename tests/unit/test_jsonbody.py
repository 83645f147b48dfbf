"""Bounded JSON decoding (security review finding 17): size and depth are checked before
msgspec runs, so no input reaches its recursion limit."""

from __future__ import annotations

import msgspec
import pytest

from courseschool.common.errors import InvalidClientMetadataError, InvalidRequestError
from courseschool.common.jsonbody import MAX_DEPTH, decode_json, nested_deeper_than


@pytest.mark.parametrize(
    ("body", "limit", "deeper"),
    [
        (b"[]", 1, False),
        (b"[[]]", 1, True),
        (b'{"a": [1, {"b": []}]}', 4, False),
        (b'{"a": [1, {"b": []}]}', 3, True),
        (b"[][][][][]", 1, False),  # many brackets, none nested
        (b'["[[[[[[", "{{{{{{"]', 1, False),  # brackets inside strings do not count
        (b'["\\"[[[[[[\\\\", []]', 2, False),  # an escaped quote does not end the string
        (b'["\\"[[[[[[\\\\", [[]]]', 2, True),
        (b'["unterminated [[[[[[', 1, False),  # the rest is one string: the decoder refuses it
        (b"]]]]][[", 2, False),
        (b"[" * 33 + b"]" * 33, MAX_DEPTH, True),
        (b"[" * 10_000, MAX_DEPTH, True),  # unterminated: the decoder would recurse before seeing the end
        (b"[" * 32 + b"]" * 32, MAX_DEPTH, False),
    ],
)
def test_nesting_depth_is_counted_outside_strings(body: bytes, limit: int, deeper: bool) -> None:
    assert nested_deeper_than(body, limit) is deeper


def test_ten_thousand_deep_is_refused_before_decoding() -> None:
    for body in (b"[" * 10_000 + b"]" * 10_000, b'{"a":' * 10_000 + b"1" + b"}" * 10_000):
        with pytest.raises(InvalidRequestError, match="deep"):
            decode_json(body)


def test_the_callers_error_is_raised() -> None:
    with pytest.raises(InvalidClientMetadataError, match="the client metadata nests"):
        decode_json(b"[" * 100 + b"]" * 100, invalid=InvalidClientMetadataError, what="the client metadata")
    with pytest.raises(InvalidClientMetadataError, match="not valid JSON"):
        decode_json(b"{nope", invalid=InvalidClientMetadataError)


def test_size_is_bounded() -> None:
    with pytest.raises(InvalidRequestError, match="larger than 10 bytes"):
        decode_json(b'"' + b"x" * 10 + b'"', max_bytes=10)


def test_wrong_shape_is_left_to_the_caller() -> None:
    class Point(msgspec.Struct):
        x: int

    assert decode_json(b'{"x": 1}', into=Point) == Point(x=1)
    with pytest.raises(msgspec.ValidationError):
        decode_json(b'{"x": "one"}', into=Point)


@pytest.mark.parametrize("body", [b'"\xbb"', b'{"a": "\xbb\xdc"}', b'["ok", "\xff"]'])
def test_a_string_that_is_not_utf8_is_not_json(body: bytes) -> None:
    # RFC 8259 §8.1: JSON text is UTF-8; msgspec raises UnicodeDecodeError for such a string.
    with pytest.raises(InvalidRequestError, match="not valid JSON"):
        decode_json(body)
    with pytest.raises(InvalidClientMetadataError, match="not valid JSON"):
        decode_json(body, invalid=InvalidClientMetadataError)
