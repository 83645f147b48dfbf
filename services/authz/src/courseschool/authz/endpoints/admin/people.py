"""Schools and the people of the schools."""

from __future__ import annotations

import re
import time
from typing import Any

from courseschool.common.errors import ConflictError, InvalidRequestError, fit_description
from courseschool.common.scopes import parse_scope, writes_lost
from courseschool.common.secrets import new_token

from ..invitations import check_person, check_role, invite
from ..password_reset import check_password_rule, end_sessions_and_grants
from .base import AdminBase, unknown

_SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


class PeopleAdmin(AdminBase):
    async def list_schools(self) -> list[dict[str, Any]]:
        return await self.c.admin_store.schools()

    async def create_school(self, *, slug: str, name: str) -> dict[str, Any]:
        if not _SLUG.match(slug) or len(slug) > 60 or not 0 < len(name) <= 200:
            raise InvalidRequestError("slug must be lower-case words joined by '-', name 1 to 200 characters")
        if await self.c.admin_store.school(slug):
            raise ConflictError(
                f"a school with the slug {fit_description(slug)} exists", detail=f"slug as given: {slug}"
            )
        school = await self.c.admin_store.create_school(slug, name)
        await self._audit("school_created", subject=school["id"], slug=slug)
        return school

    async def list_users(self, *, school: str | None = None) -> list[dict[str, Any]]:
        return await self.c.admin_store.users(school)

    async def user(self, ref: str) -> dict[str, Any]:
        found = await self.c.admin_store.user(ref)
        if found is None:
            raise unknown("user", ref)
        return found

    async def create_user(
        self, *, school: str, email: str, name: str, role: str, password: str | None = None
    ) -> dict[str, Any]:
        found = await self.c.admin_store.school(school)
        if found is None:
            raise unknown("school", school)
        check_role(role)
        check_person(email, name)
        if await self.c.admin_store.user(email):
            raise ConflictError(
                f"a user with the email {fit_description(email)} exists", detail=f"email as given: {email}"
            )
        secret = password or new_token(12)
        _check_password(secret)
        user = await self.c.users.create(
            school_id=found["id"],
            email=email,
            name=name,
            preferred_username=email.split("@")[0],
            role=role,
            password_hash=await self.c.passwords.hash(secret),
        )
        await self._audit("user_created", subject=user.id, role=role, school=found["slug"])
        out = await self.user(user.id)
        return {**out, "password": secret} if password is None else out

    async def invite_user(self, *, school: str, email: str, name: str, role: str) -> dict[str, Any]:
        """endpoints/invitations.invite, to any school as any role."""
        found = await self.c.admin_store.school(school)
        if found is None:
            raise unknown("school", school)
        invited = await invite(self.c, found, email=email, name=name, role=role)
        await self._audit(
            "user_invited", subject=invited.user_id, role=invited.role, school=found["slug"], again=invited.again
        )
        out = await self.user(invited.user_id)
        return {**out, "invited_until": _iso(invited.until), "invitation": "queued for e-mail"}

    async def set_role(self, ref: str, role: str) -> dict[str, Any]:
        """The new role caps every grant from the next use on (a refresh narrows the
        scope to it); grants holding a write scope the new role does not allow end now,
        and the resource servers hear of it at once."""
        check_role(role)
        user = await self.user(ref)
        await self.c.admin_store.set_role(user["id"], role)
        lost = writes_lost(user["role"], role)
        grants = await self.c.admin_store.live_grants_of_user(user["id"])
        affected = [grant_id for grant_id, scope in grants.items() if lost & set(parse_scope(scope))]
        ended = await self._end_grants(affected, "role_changed")
        await self._audit(
            "user_role_set", subject=user["id"], role=role, previous_role=user["role"], grants_ended=ended
        )
        return {**await self.user(user["id"]), "grants_ended": ended}

    async def disable_user(self, ref: str) -> dict[str, Any]:
        """The user can no longer sign in; their sessions and grants end now."""
        user = await self.user(ref)
        await self.c.admin_store.set_disabled(user["id"], True)
        ended = await self._end_grants(list(await self.c.admin_store.live_grants_of_user(user["id"])), "user_disabled")
        await self._audit("user_disabled", subject=user["id"], grants_ended=ended)
        return {**await self.user(user["id"]), "grants_ended": ended}

    async def enable_user(self, ref: str) -> dict[str, Any]:
        user = await self.user(ref)
        await self.c.admin_store.set_disabled(user["id"], False)
        await self._audit("user_enabled", subject=user["id"])
        return await self.user(user["id"])

    async def reset_password(self, ref: str, password: str | None = None) -> dict[str, Any]:
        """A new password; whoever held the old one loses what it gave them: the user's
        sign-in sessions and grants end now."""
        user = await self.user(ref)
        secret = password or new_token(12)
        _check_password(secret)
        await self.c.users.set_password_hash(user["id"], await self.c.passwords.hash(secret))
        ended = await end_sessions_and_grants(self.c, user["id"])
        await self._audit("password_reset", subject=user["id"], grants_ended=ended)
        shown = {"password": secret} if password is None else {}
        return {"id": user["id"], "email": user["email"], "grants_ended": ended, **shown}

    async def reset_second_factors(self, ref: str) -> dict[str, Any]:
        """Forget the person's authenticator app, recovery codes and passkeys (they lost
        their phone): they sign in with their password again, and set up a new app where their
        school requires one (asked right after the password)."""
        user = await self.user(ref)
        removed = await self.c.second_factors.reset(user["id"])
        await self.c.admin_store.end_sessions(user["id"])  # a browser signed in with the old factors
        told = await self.c.mail.account_changed(user["id"], {"change": "second_factors_reset"}, now=self.c.clock.now())
        await self._audit(
            "second_factors_reset",
            subject=user["id"],
            totp=removed["totp"],
            recovery_codes=removed["recovery_codes"],
            passkeys=removed["passkeys"],
            sessions_ended=True,
            mailed=told,
        )
        return {"id": user["id"], "email": user["email"], "removed": removed, "sessions_ended": True}


def _check_password(password: str) -> None:
    check_password_rule(password)


def _iso(epoch: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))
