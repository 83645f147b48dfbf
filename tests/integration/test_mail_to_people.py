"""E-mail to people, through the operator's SMTP relay (SMTP_URL), from a durable outbox:
a new connection sends its person one message naming the app, the device, the address
and the time (a new sign-in of an app already connected says so; a step-up in the same
browser sends nothing); a school's ending or blocking of an app sends each person whose
access ended one message; a relay that refuses is tried again later and a message it
took is never sent again; a relay that hangs delays no request; STARTTLS and credentials
are used, and a relay without STARTTLS is refused. A real SMTP server (aiosmtpd) on
loopback stands in for the relay; every message is parsed as a mail reader would."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import msgspec
import pytest

from courseschool.authz.app import create_app
from courseschool.authz.endpoints.school_apps import block, end_access
from courseschool.authz.mail.delivery import MailDelivery, lease_for
from courseschool.authz.maintenance import housekeeping
from courseschool.authz.settings import AuthzSettings

from ..support.smtp import SmtpRelay, silent_relay, smtp_relay
from ..support.tls import make_ca_and_server_cert
from .conftest import serve
from .flow import BASE_URL, Flow, Lifecycle

FIREFOX_ON_LINUX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
CHROME_ON_MACOS = (
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Safari/537.36"
)
MAIL_FROM = "Course School <no-reply@school.example>"


def _with_mail(settings: AuthzSettings, smtp_url: str, **more: Any) -> AuthzSettings:
    return AuthzSettings(
        **{
            **msgspec.structs.asdict(settings),
            "smtp_url": smtp_url,
            "mail_from": MAIL_FROM,
            "mail_timeout": 10.0,
            "mail_interval": 3600.0,  # the test sends each pass itself
            **more,
        }
    )


@pytest.fixture
async def mailed(
    authz_settings: AuthzSettings, clean_db: Any, redis_client: Any
) -> AsyncIterator[tuple[Flow, SmtpRelay]]:
    with smtp_relay() as relay:
        settings = _with_mail(authz_settings, f"smtp+plain://127.0.0.1:{relay.port}")
        async with serve(create_app(settings)) as client:
            yield Flow(client, clean_db, redis_client), relay


def _components(flow: Flow) -> Any:
    return flow.client.app.state.authz  # type: ignore[attr-defined]


async def _send(flow: Flow) -> int:
    return await _components(flow).mail.deliver_due()


async def _connect(flow: Flow, user: dict[str, str], reg: dict[str, Any], agent: str, **extra: str) -> dict[str, Any]:
    """A browser of its own (`agent`) signs in and approves; the code is exchanged."""
    flow.client.cookies.clear()
    flow.client.headers["User-Agent"] = agent
    return await flow.tokens(reg, user, **extra)


def _text(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",))
    assert part is not None
    return part.get_content()


def _html(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("html",))
    assert part is not None
    return part.get_content()


async def test_a_second_browser_sends_one_email_naming_the_device(mailed: tuple[Flow, SmtpRelay]) -> None:
    flow, relay = mailed
    user = await flow.user("owner")
    reg = await flow.register(client_name="Laptop Agent")
    await _connect(flow, user, reg, CHROME_ON_MACOS)
    assert await _send(flow) == 1
    first = relay.accepted[0].message
    assert first["Subject"] == "«Laptop Agent» was connected to your Course School account"
    assert "Chrome on macOS" in _text(first)

    await _connect(flow, user, reg, FIREFOX_ON_LINUX)
    assert await _send(flow) == 1
    assert await _send(flow) == 0
    assert len(relay.accepted) == 2
    second = relay.accepted[1]
    assert second.rcpt_tos == [user["email"]] and second.mail_from == "no-reply@school.example"
    message = second.message
    assert message["To"].addresses[0].addr_spec == user["email"]
    assert message["From"] == MAIL_FROM
    assert message["Subject"] == "A new sign-in of «Laptop Agent» to your Course School account"
    assert re.fullmatch(r"<[0-9a-f-]{36}@school\.example>", message["Message-ID"])
    assert message["Auto-Submitted"] == "auto-generated"
    text = _text(message)
    for said in ("Laptop Agent", "Firefox on Linux", "127.0.0.1", " UTC", f"{BASE_URL}/oauth/apps", "Acme School"):
        assert said in text, said
    assert "a name the app chose itself" in text  # a self-registered name: nobody checked it
    # The scopes granted, in the consent page's words (flow.tokens asks for these).
    assert "What it may do:\n- Your identity: see\n- Courses: see\n" in text.replace("\r\n", "\n")
    assert "courses:read" not in text
    html = _html(message)
    assert "Firefox on Linux" in html and "Laptop Agent" in html and "<li>Courses: see</li>" in html
    assert set(re.findall(r'href="([^"]*)"', html)) == {f"{BASE_URL}/oauth/apps"}  # our pages only
    assert not re.search(r"\bsrc=|url\(|@import", html)  # nothing fetched from anywhere


async def test_a_step_up_in_the_same_browser_sends_nothing(mailed: tuple[Flow, SmtpRelay]) -> None:
    flow, relay = mailed
    user = await flow.user("owner")
    reg = await flow.register(client_name="Growing Agent")
    await _connect(flow, user, reg, FIREFOX_ON_LINUX, scope="openid courses:read")
    more = await flow.tokens(reg, user, scope="openid courses:read courses:write")  # the same browser sign-in
    assert more["scope"] == "openid courses:read courses:write"
    assert await _send(flow) == 1
    assert len(relay.accepted) == 1 and "was connected" in relay.accepted[0].message["Subject"]


async def test_a_refusing_relay_then_accepting_delivers_once(mailed: tuple[Flow, SmtpRelay]) -> None:
    flow, relay = mailed
    relay.refuse = 1
    user = await flow.user("owner")
    await _connect(flow, user, await flow.register(client_name="Retried"), FIREFOX_ON_LINUX)
    assert await _send(flow) == 0
    row = await flow.pool.fetchrow(
        "SELECT attempts, sent_at, last_error, next_attempt_at > now() AS later FROM authz_mail_outbox"
    )
    assert (row["attempts"], row["sent_at"], row["last_error"], row["later"]) == (1, None, "SMTPDataError 451", True)
    assert await _send(flow) == 0  # not due yet: the backoff holds it
    await flow.pool.execute("UPDATE authz_mail_outbox SET next_attempt_at = now()")
    assert await _send(flow) == 1
    await flow.pool.execute("UPDATE authz_mail_outbox SET next_attempt_at = now() - interval '1 day'")
    assert await _send(flow) == 0  # sent: never again
    assert len(relay.accepted) == 1
    assert await flow.count("authz_mail_outbox WHERE sent_at IS NOT NULL AND attempts = 2") == 1


async def test_a_message_is_abandoned_after_the_last_try(
    mailed: tuple[Flow, SmtpRelay], authz_settings: AuthzSettings
) -> None:
    flow, relay = mailed
    relay.refuse = 10
    await _connect(flow, await flow.user("owner"), await flow.register(client_name="Doomed"), FIREFOX_ON_LINUX)
    settings = _with_mail(authz_settings, f"smtp+plain://127.0.0.1:{relay.port}", mail_max_attempts=2)
    delivery = MailDelivery(settings, flow.pool, _components(flow).clock)
    for _ in range(3):
        assert await delivery.deliver_due() == 0
        await flow.pool.execute("UPDATE authz_mail_outbox SET next_attempt_at = now()")
    row = await flow.pool.fetchrow("SELECT attempts, abandoned_at IS NOT NULL AS abandoned FROM authz_mail_outbox")
    assert (row["attempts"], row["abandoned"]) == (2, True)
    await delivery.sample()
    metrics = (await flow.client.get("/metrics", headers={"Authorization": "Bearer internal-test-token"})).text
    assert 'courseschool_mail_outbox_messages{state="abandoned"} 1.0' in metrics
    assert 'courseschool_mail_outbox_messages{state="pending"} 0.0' in metrics


async def test_a_permanent_refusal_abandons_the_message_at_once(mailed: tuple[Flow, SmtpRelay]) -> None:
    """RFC 5321 §4.2.1: a 5yz reply will not change on a later try; the message is given up
    on the first time, and the next one is still sent."""
    flow, relay = mailed
    relay.refuse, relay.refusal = 1, "550 5.1.1 No such mailbox"
    user = await flow.user("owner")
    await _connect(flow, user, await flow.register(client_name="Bounced"), FIREFOX_ON_LINUX)
    assert await _send(flow) == 0
    row = await flow.pool.fetchrow(
        "SELECT attempts, last_error, abandoned_at IS NOT NULL AS gone FROM authz_mail_outbox"
    )
    assert (row["attempts"], row["last_error"], row["gone"]) == (1, "SMTPDataError 550", True)
    await flow.pool.execute("UPDATE authz_mail_outbox SET next_attempt_at = now() - interval '1 day'")
    assert await _send(flow) == 0 and relay.accepted == []  # never tried again
    await _connect(flow, user, await flow.register(client_name="Delivered"), CHROME_ON_MACOS)
    assert await _send(flow) == 1 and len(relay.accepted) == 1


async def test_a_relay_that_hangs_delays_no_request(
    authz_settings: AuthzSettings, clean_db: Any, redis_client: Any
) -> None:
    async with silent_relay() as (port, connections):
        settings = _with_mail(authz_settings, f"smtp+plain://127.0.0.1:{port}", mail_timeout=10.0)
        async with serve(create_app(settings)) as client:
            flow = Flow(client, clean_db, redis_client)
            user = await flow.user("owner")
            await _connect(flow, user, await flow.register(client_name="First"), FIREFOX_ON_LINUX)
            sending = asyncio.create_task(_send(flow))
            async with asyncio.timeout(10):  # the relay took the connection and says nothing
                while not connections:
                    await asyncio.sleep(0.01)
            reg = await flow.register(client_name="Second")
            tokens = await _connect(flow, user, reg, CHROME_ON_MACOS)  # a whole sign-in meanwhile
            assert (await Lifecycle(flow).refresh(reg, tokens["refresh_token"])).status_code == 200
            assert not sending.done()  # every request above was answered while it hung
            assert await sending == 0  # then the time limit ended the try
            rows = await flow.pool.fetch("SELECT attempts, last_error FROM authz_mail_outbox ORDER BY id")
            # The pass ended at the first failure: the relay is not asked again until the next.
            assert [(r["attempts"], r["last_error"]) for r in rows] == [(1, "timeout"), (0, None)]
    assert lease_for(10.0) > 10.0  # the lease outlasts the send


async def test_starttls_and_credentials_are_used(
    authz_settings: AuthzSettings, clean_db: Any, redis_client: Any, tmp_path: Path
) -> None:
    ca, cert, key = make_ca_and_server_cert(tmp_path)
    with smtp_relay(certs=(cert, key), credentials=("mailer", "p@ss word")) as relay:
        url = f"smtp://mailer:p%40ss%20word@127.0.0.1:{relay.port}"
        settings = _with_mail(authz_settings, url, smtp_ca_bundle=str(ca))
        async with serve(create_app(settings)) as client:
            flow = Flow(client, clean_db, redis_client)
            await _connect(flow, await flow.user("owner"), await flow.register(client_name="Tls"), FIREFOX_ON_LINUX)
            assert await _send(flow) == 1
        assert relay.logins == ["mailer"] and len(relay.accepted) == 1

        wrong = _with_mail(authz_settings, f"smtp://mailer:wrong@127.0.0.1:{relay.port}", smtp_ca_bundle=str(ca))
        await clean_db.execute("UPDATE authz_mail_outbox SET sent_at = NULL, next_attempt_at = now()")
        assert await MailDelivery(wrong, clean_db, _components(flow).clock).deliver_due() == 0
        assert await clean_db.fetchval("SELECT last_error FROM authz_mail_outbox") == "SMTPAuthenticationError 535"
        assert len(relay.accepted) == 1


async def test_a_relay_without_starttls_is_refused(
    mailed: tuple[Flow, SmtpRelay], authz_settings: AuthzSettings
) -> None:
    """smtp:// requires STARTTLS: credentials and messages never travel in the clear."""
    flow, relay = mailed
    await _connect(flow, await flow.user("owner"), await flow.register(client_name="Clear"), FIREFOX_ON_LINUX)
    settings = _with_mail(authz_settings, f"smtp://127.0.0.1:{relay.port}")
    assert await MailDelivery(settings, flow.pool, _components(flow).clock).deliver_due() == 0
    assert relay.accepted == []
    assert await flow.pool.fetchval("SELECT last_error FROM authz_mail_outbox") == "SMTPException"


async def test_a_school_ending_or_blocking_an_app_tells_each_person_once(mailed: tuple[Flow, SmtpRelay]) -> None:
    flow, relay = mailed
    school = await flow.school("acme")
    steward = await flow.user("owner", school=school)
    one = await flow.user("student", school=school)
    two = await flow.user("lecturer", school=school)
    reg = await flow.register(client_name="Homework Helper")
    await _connect(flow, one, reg, FIREFOX_ON_LINUX, scope="openid courses:read")
    await _connect(flow, one, reg, CHROME_ON_MACOS, scope="openid courses:read")  # two sign-ins: one message
    await _connect(flow, two, reg, FIREFOX_ON_LINUX, scope="openid courses:read")
    await _connect(flow, steward, reg, FIREFOX_ON_LINUX, scope="openid courses:read")
    assert await _send(flow) == 4  # the connections
    relay.accepted.clear()
    account = _components(flow).account_pages
    owner = await account.users.get(steward["id"])

    assert await end_access(account, owner, reg["client_id"], one["id"], ip="127.0.0.1") == 2
    assert await _send(flow) == 1
    ended = relay.accepted[0]
    assert ended.rcpt_tos == [one["email"]]
    assert ended.message["Subject"] == "Your school ended «Homework Helper»'s access to your Course School account"

    relay.accepted.clear()
    assert await block(account, owner, reg["client_id"], ip="127.0.0.1") == 2  # two's and the steward's own
    assert await _send(flow) == 1  # the steward who blocked it is not told
    blocked = relay.accepted[0]
    assert blocked.rcpt_tos == [two["email"]]
    assert blocked.message["Subject"] == "Your school blocked «Homework Helper»"
    assert "cannot be connected again while the block holds" in _text(blocked.message)


async def test_without_smtp_nothing_is_queued(flow: Flow) -> None:
    await flow.tokens(await flow.register(client_name="Quiet"), await flow.user("owner"))
    assert await flow.count("authz_notices") == 1  # the pages still tell it
    assert await flow.count("authz_mail_outbox") == 0
    assert _components(flow).mail is None


async def test_messages_go_after_thirty_days(mailed: tuple[Flow, SmtpRelay]) -> None:
    flow, _ = mailed
    await _connect(flow, await flow.user("owner"), await flow.register(client_name="Old"), FIREFOX_ON_LINUX)
    assert await _send(flow) == 1
    assert (await housekeeping(_components(flow)))["mail"] == 0
    await flow.pool.execute("UPDATE authz_mail_outbox SET created_at = created_at - interval '31 days'")
    assert (await housekeeping(_components(flow)))["mail"] == 1
    assert await flow.count("authz_mail_outbox") == 0
