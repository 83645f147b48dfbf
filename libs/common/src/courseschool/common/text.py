"""Text chosen by outsiders (client names above all), shown to people on pages and in
terminals: the characters that must not reach them as they are.

Unicode general categories (Unicode §4.5): Cc (C0 and C1 controls: ESC, U+001B, starts
ANSI terminal sequences, as does the C1 CSI, U+009B), Cf (format characters: the
bidirectional embeddings and overrides U+202A-U+202E and isolates U+2066-U+2069, which
reorder what follows them, and zero-width characters), Co (private use), Cs (surrogates),
and the line and paragraph separators Zl and Zp (a name is one line).
"""

from __future__ import annotations

import unicodedata

HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Zl", "Zp"})


def is_hidden(ch: str) -> bool:
    """A control, format, private-use, surrogate or line-breaking character."""
    return unicodedata.category(ch) in HIDDEN_CATEGORIES


def has_hidden(text: str) -> bool:
    return any(is_hidden(ch) for ch in text)


def _escape(ch: str, *, json: bool) -> str:
    code = ord(ch)
    if json:  # RFC 8259 §7: \uXXXX, as a UTF-16 surrogate pair beyond the BMP
        if code > 0xFFFF:
            code -= 0x10000
            return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
        return f"\\u{code:04x}"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def escape_hidden(text: str, *, json: bool = False, keep: str = "") -> str:
    """`text` with every hidden character (but those in `keep`) written as an escape:
    `\\x1b`, `\\u202e` as Python writes them, or, with `json`, as JSON writes them (so a
    JSON document stays the same document). What remains cannot move a terminal's cursor
    or reorder the text around it."""
    if not any(is_hidden(ch) and ch not in keep for ch in text):
        return text
    return "".join(_escape(ch, json=json) if is_hidden(ch) and ch not in keep else ch for ch in text)
