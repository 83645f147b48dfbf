"""`make run`'s mail catcher: an SMTP server on loopback (aiosmtpd) that keeps every
message the platform sends as a file, DATA_DIR/mail/<time>-<n>.eml (owner-only), so a
developer reads what people would receive without a relay, and the messages travel the
same way as in a deployment (the outbox, then SMTP). Started only when SMTP_URL is unset;
`run`'s banner says where the files go."""

from __future__ import annotations

import itertools
import os
import socket
import time
from pathlib import Path
from typing import Any

MAIL_DIR = "mail"
CAUGHT_FROM = "Course School <no-reply@courseschool.localhost>"


class _Keep:
    """aiosmtpd's handler: each message accepted is written to its own file."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder
        self._count = itertools.count(1)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # aiosmtpd calls it by this name
        name = f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{next(self._count)}.eml"
        fd = os.open(self._folder / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(envelope.original_content)
        return "250 2.0.0 Kept"


class MailCatcher:
    """The catcher for one `run`: `start()` gives the SMTP_URL to send to."""

    def __init__(self, data_dir: Path) -> None:
        self.folder = (data_dir / MAIL_DIR).resolve()
        self._controller: Any = None

    def start(self) -> str:
        from aiosmtpd.controller import Controller  # the development runner's only: not in the image

        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        port = _free_port()
        self._controller = Controller(_Keep(self.folder), hostname="127.0.0.1", port=port)
        self._controller.start()
        return f"smtp+plain://127.0.0.1:{port}"

    def stop(self) -> None:
        if self._controller is not None:
            self._controller.stop()
            self._controller = None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
