"""A singleton area's one value: the school's (`school`, `settings`), or each user's
(`per_user`: `preferences`). Until it is first written it reads as its first value:
the model's defaults and what the area takes from its school (its name, say)."""

from __future__ import annotations

from typing import Any

import msgspec

from courseschool.common.errors import NotFoundError

from .activity import ReadCounter
from .areas.registry import AreaSpec
from .auth.verifier import Principal
from .schools import SchoolDirectory
from .service import actor, school_of, validated
from .storage.items import PgItemStore


class Singletons:
    def __init__(self, items: PgItemStore, schools: SchoolDirectory, reads: ReadCounter) -> None:
        self.items = items
        self.schools = schools
        self.reads = reads

    async def get(self, spec: AreaSpec, principal: Principal) -> dict[str, Any]:
        stored = await self.items.get_singleton(spec, school_of(principal), _owner(spec, principal))
        if stored is None:
            stored = await self._first_value(spec, principal)
        if stored is None:
            raise NotFoundError(f"the {spec.path} has not been set up yet")
        self.reads.count(principal, spec.name)
        return stored

    async def update(self, spec: AreaSpec, principal: Principal, changes: dict[str, Any]) -> dict[str, Any]:
        school_id, owner = school_of(principal), _owner(spec, principal)
        current = await self.items.get_singleton(spec, school_id, owner) or await self._first_value(spec, principal)
        current = {k: v for k, v in (current or {}).items() if k != "updated_at"}
        data = validated(spec, {**current, **changes})
        return await self.items.put_singleton(spec, school_id, owner, data, actor(principal))

    async def _first_value(self, spec: AreaSpec, principal: Principal) -> dict[str, Any] | None:
        """What a singleton holds before it is first written: the model's defaults, and
        what the area takes from its school (the school's name, say)."""
        assert spec.model is not None
        seeded: dict[str, Any] = {}
        if spec.from_school is not None:
            school = await self.schools.find(school_of(principal))
            if school is not None and school.name:
                seeded = spec.from_school(school)
        try:
            return msgspec.to_builtins(msgspec.convert(seeded, spec.model))
        except msgspec.ValidationError:  # the model has required fields nothing provides
            return None


def _owner(spec: AreaSpec, principal: Principal) -> str:
    """Whose value it is: the user's for a `per_user` area, else the school's ("")."""
    return principal.sub or "" if spec.per_user else ""
