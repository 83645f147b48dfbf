"""Administration: the one service layer behind both the internal admin API and the
command line. Every action is an audit event; disabling a user or a client ends their
grants at once (recorded in Postgres, published to the resource servers)."""

from __future__ import annotations

from .audit import AuditAdmin
from .clients import ClientsAdmin
from .domains import DomainsAdmin
from .keys import KeysAdmin
from .people import PeopleAdmin


class AdminService(PeopleAdmin, ClientsAdmin, KeysAdmin, DomainsAdmin, AuditAdmin):
    """Every administrative action, for one actor (`admin` for the API, `admin-cli`)
    acting from one source (the API caller's address, the CLI's user@host)."""


__all__ = ["AdminService"]
