"""`make run` catches every message the platform sends, where its banner says (an .eml
file per message under the data folder): a newcomer reads the e-mail of a new connection
without any relay, after it travelled the way it does in a deployment (the outbox, then
SMTP, to the catcher)."""

from __future__ import annotations

import asyncio
import email
import re
from email.message import EmailMessage
from email.policy import default
from pathlib import Path

from ..support.oauth_client import code_flow
from .conftest import Platform


async def test_a_new_connection_is_caught_where_the_banner_says(platform: Platform) -> None:
    said = re.search(r"^  Mail: caught in (\S+)/ \(\.eml files\)$", platform.output(), flags=re.M)
    assert said, platform.output()
    folder = Path(said.group(1))
    await code_flow(platform.base_url, platform.email, platform.password, "openid", client_name="Caught CLI")
    async with asyncio.timeout(30):  # the delivery's next pass (MAIL_INTERVAL, 2 s)
        while not (caught := _caught(folder, "Caught CLI")):
            await asyncio.sleep(0.2)
    message = caught[0]
    assert message["To"].addresses[0].addr_spec == platform.email
    assert message["From"].addresses[0].addr_spec == "no-reply@courseschool.localhost"
    body = message.get_body(preferencelist=("plain",))
    assert body is not None and f"{platform.base_url}/oauth/apps" in body.get_content()
    assert all(oct(path.stat().st_mode & 0o777) == "0o600" for path in folder.glob("*.eml"))


def _caught(folder: Path, app: str) -> list[EmailMessage]:
    found = []
    for path in sorted(folder.glob("*.eml")):
        message = email.message_from_bytes(path.read_bytes(), policy=default)
        assert isinstance(message, EmailMessage)
        if app in str(message["Subject"]):
            found.append(message)
    return found
