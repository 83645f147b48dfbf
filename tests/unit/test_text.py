"""Escaping text for terminals (security review finding 18)."""

from __future__ import annotations

import msgspec

from courseschool.common.text import escape_hidden


def test_escaping_leaves_nothing_a_terminal_acts_on() -> None:
    assert escape_hidden("CRM\x1b[2J\x07\x9b\u202e") == "CRM\\x1b[2J\\x07\\x9b\\u202e"
    assert escape_hidden("a\nb\U000f0000", keep="\n") == "a\nb\\U000f0000"
    assert escape_hidden("plain Ünïcødé 🚀") == "plain Ünïcødé 🚀"


def test_json_escapes_keep_the_same_document() -> None:
    value = {"name": "\x1b[2J\x7f\x9b\u202e\u2028\U000f0000 ok"}
    escaped = escape_hidden(msgspec.json.encode(value).decode(), json=True)
    assert escaped == '{"name":"\\u001b[2J\\u007f\\u009b\\u202e\\u2028\\udb80\\udc00 ok"}'
    assert msgspec.json.decode(escaped) == value
