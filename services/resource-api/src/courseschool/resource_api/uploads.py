"""Uploads to `/api/v1/storage/files`: size-limited, content type checked against the
file's own first bytes, stored in Postgres (`storage/files.py`), served at a stable URL."""

from __future__ import annotations

import re

# Accepted types and the signatures their files start with (None: text, checked as UTF-8).
SIGNATURES: dict[str, tuple[bytes, ...] | None] = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "image/webp": (b"RIFF",),
    "application/pdf": (b"%PDF-",),
    "text/plain": None,
    "text/markdown": None,
    "text/csv": None,
}
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


class UploadRefused(ValueError):
    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def check_upload(content_type: str, content: bytes, max_bytes: int) -> str:
    kind = content_type.split(";")[0].strip().lower()
    if kind not in SIGNATURES:
        raise UploadRefused(f"content type {kind or '(none)'} is not accepted", 415)
    if not content:
        raise UploadRefused("the file is empty", 400)
    if len(content) > max_bytes:
        raise UploadRefused(f"the file is larger than {max_bytes} bytes", 413)
    signatures = SIGNATURES[kind]
    if signatures is None:
        try:
            content.decode("utf-8")
        except UnicodeDecodeError:
            raise UploadRefused(f"the file is not {kind} (not UTF-8 text)", 415) from None
    elif not any(content.startswith(s) for s in signatures) or (kind == "image/webp" and content[8:12] != b"WEBP"):
        raise UploadRefused(f"the file's content is not {kind}", 415)
    return kind


def safe_filename(name: str | None) -> str:
    cleaned = _SAFE_NAME.sub("_", (name or "file").rsplit("/", 1)[-1]).strip("._") or "file"
    return cleaned[:120]
