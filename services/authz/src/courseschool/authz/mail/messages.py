"""What an e-mail to a person says, as an `email.message.EmailMessage` (RFC 5322, MIME
RFC 2045-2049): a plain-text part and a simple HTML one, from the Jinja templates beside
this module (the HTML autoescaped, like the pages), with no image, style sheet or font
from anywhere, and links to our own pages only (BASE_URL).

Every header is set through the message, which encodes it (RFC 2047) and refuses a value
with a line break; and an app's or a person's name is first reduced to printable text
(`shown_name`): no control character, line or paragraph separator, or invisible format
character (a right-to-left override) of a name chosen by whoever registered an app
reaches a header or a line of the message."""

from __future__ import annotations

import time
import unicodedata
from datetime import UTC, datetime
from email.headerregistry import Address
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import format_datetime
from functools import cache
from typing import TYPE_CHECKING, Any

import msgspec

from ..storage.access_requests import ACCESS_REQUEST_DECIDED, ACCESS_REQUESTED
from ..storage.mail_outbox import NEW_CONNECTION, SCHOOL_BLOCKED_APP, SCHOOL_ENDED_ACCESS
from .account_messages import ACCOUNT_KINDS, account_message
from .relay import from_address

NAME_LIMIT = 80
UNNAMED = "An unnamed application"

if TYPE_CHECKING:
    from jinja2 import Environment


@cache
def _templates() -> Environment:
    """The messages' templates, made at the first message: the admin command, which only
    queues messages, never imports the template engine."""
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

    return Environment(
        loader=PackageLoader("courseschool.authz.mail", "templates"),
        autoescape=select_autoescape(["html"], default_for_string=False, default=False),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
    )


def shown_name(name: str | None, *, unnamed: str = UNNAMED, limit: int = NAME_LIMIT) -> str:
    """A name as a message shows it: format characters (Cf) dropped, other controls and
    separators (Cc, Zl, Zp) made spaces, runs of white space one space, at most
    NAME_LIMIT characters; `unnamed` when nothing is left."""
    kept = []
    for ch in name or "":
        category = unicodedata.category(ch)
        if category == "Cf":
            continue
        kept.append(" " if category in ("Cc", "Zl", "Zp") else ch)
    cleaned = " ".join("".join(kept).split())
    if len(cleaned) > limit:
        cleaned = cleaned[: limit - 1].rstrip() + "…"
    return cleaned or unnamed


def utc_text(epoch: int) -> str:
    """A moment as the pages write it: "23 Nov 2026, 14:21 UTC"."""
    t = time.gmtime(epoch)
    return f"{t.tm_mday} {time.strftime('%b %Y, %H:%M', t)} UTC"


class Sender(msgspec.Struct, frozen=True, kw_only=True):
    """Who the messages are from and where their links go."""

    mail_from: str  # MAIL_FROM: an address, or "Name <address>"
    base_url: str  # our pages' origin: the only links a message carries


class Recipient(msgspec.Struct, frozen=True, kw_only=True):
    email: str
    name: str


def _subject(kind: str, app: str, details: dict[str, Any]) -> str:
    if kind == NEW_CONNECTION:
        if details.get("already_connected"):
            return f"A new sign-in of «{app}» to your Course School account"
        return f"«{app}» was connected to your Course School account"
    if kind == SCHOOL_ENDED_ACCESS:
        return f"Your school ended «{app}»'s access to your Course School account"
    if kind == SCHOOL_BLOCKED_APP:
        return f"Your school blocked «{app}»"
    if kind == ACCESS_REQUESTED:
        return f"{shown_name(details.get('requester'), unnamed='Someone')} asks your school to approve «{app}»"
    if kind == ACCESS_REQUEST_DECIDED:
        decision = details.get("decision")
        said = {"approved": "approved", "declined": "declined"}.get(str(decision), "did not decide")
        return f"Your school {said} your request for «{app}»"
    raise ValueError(f"no message of kind {kind!r}")


def _granted(scope: object) -> list[str]:
    """What a grant lets the app do, one line per area in the consent page's words
    ("Courses: see and change"); the words are the pages', imported at the first message."""
    from ..web.scope_words import scope_lines

    names = scope.split() if isinstance(scope, str) else []
    return [f"{line.title}: {line.access}" for line in scope_lines(names)]


def _request_values(details: dict[str, Any], sender: Sender) -> dict[str, Any]:
    """What a message about a request for the school's approval says beyond the app."""
    reason, note = details.get("reason"), details.get("note")
    return {
        "requester": shown_name(details.get("requester"), unnamed="Someone"),
        "requester_email": shown_name(details.get("requester_email"), unnamed=""),
        "requester_role": shown_name(details.get("requester_role"), unnamed=""),
        "reason": shown_name(reason, unnamed="", limit=500) if reason else None,
        "note": shown_name(note, unnamed="", limit=500) if note else None,
        "decision": str(details.get("decision") or ""),
        "school_url": sender.base_url.rstrip("/") + "/oauth/school/apps",
    }


def build_message(
    kind: str, details: dict[str, Any], *, to: Recipient, sender: Sender, message_id: str, now: int
) -> EmailMessage:
    """The message of `kind` (storage/mail_outbox.KINDS) telling `to` of `details`.
    `message_id`: the same on every try of one message (a relay that took it twice can
    tell)."""
    app = shown_name(details.get("client_name"))
    origin = details.get("verified_origin")
    person = shown_name(to.name, unnamed="")
    values = {
        "kind": kind,
        "person": person,
        "app": app,
        "verified_origin": shown_name(origin, unnamed="") if origin else None,
        "school": shown_name(details.get("school_name"), unnamed="your school"),
        "device": shown_name(details.get("device"), unnamed="") or None,
        "address": shown_name(details.get("address"), unnamed="") or None,
        "at": utc_text(int(details.get("at") or now)),
        "already_connected": bool(details.get("already_connected")),
        "granted": _granted(details.get("scope")),
        "apps_url": sender.base_url.rstrip("/") + "/oauth/apps",
    }
    template = "new_connection" if kind == NEW_CONNECTION else "school_acted"
    if kind in ACCOUNT_KINDS:
        values["until"] = utc_text(int(details.get("expires_at") or now))
        template, subject, values = account_message(kind, details, base_url=sender.base_url, shown=values)
    else:
        subject = _subject(kind, app, details)
    if kind in (ACCESS_REQUESTED, ACCESS_REQUEST_DECIDED):
        template, values = "access_request", values | _request_values(details, sender)
    message = EmailMessage(policy=SMTP)
    message["From"] = sender.mail_from
    message["To"] = Address(display_name=person, addr_spec=to.email)
    message["Subject"] = subject
    message["Date"] = format_datetime(datetime.fromtimestamp(now, UTC))
    message["Message-ID"] = f"<{message_id}@{from_address(sender.mail_from).domain}>"
    message["Auto-Submitted"] = "auto-generated"  # RFC 3834: no auto-reply to it
    message.set_content(_templates().get_template(f"{template}.txt").render(values))
    message.add_alternative(_templates().get_template(f"{template}.html").render(values), subtype="html")
    return message
