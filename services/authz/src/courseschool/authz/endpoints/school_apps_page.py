"""The school's apps page (`/oauth/school/apps`) read in one use case: the apps people
at the steward's school connected (`school_apps.py`), what each person's sign-ins did
(the resource API's record, `connected_apps.activity_of`), and the school's rules for
apps (`app_approvals.py`)."""

from __future__ import annotations

import msgspec

from courseschool.common.activity import GrantActivity

from ..families import AccountPages
from ..protocol.models import User
from ..storage.school_apps import BlockedApp
from .account import school_name
from .app_approvals import AppRules, app_rules
from .connected_apps import activity_of
from .school_apps import SchoolApp, school_apps


class SchoolAppsPage(msgspec.Struct, frozen=True, kw_only=True):
    school_name: str
    apps: list[SchoolApp]
    blocked: list[BlockedApp]
    # What each person's sign-ins of each app did, by (client id, user id); None: the
    # resource API did not answer, and the page says so beside everything else.
    activity: dict[tuple[str, str], list[GrantActivity]] | None
    rules: AppRules  # the school's policy, approvals and people's requests


async def school_apps_page(c: AccountPages, user: User) -> SchoolAppsPage:
    """Everything the page shows to `user`, a steward (the routers' guard checked it)."""
    apps, blocked = await school_apps(c, user)
    record = await activity_of(c, user, [g for app in apps for person in app.people for g in person.grant_ids])
    return SchoolAppsPage(
        school_name=await school_name(c, user),
        apps=apps,
        blocked=blocked,
        activity=None
        if record is None
        else {
            (app.client_id, person.user_id): [record[g] for g in person.grant_ids if g in record]
            for app in apps
            for person in app.people
        },
        rules=await app_rules(c, user),
    )
