"""What apps did with their grants, as the resource API recorded it: read from its
`GET /internal/activity` (with INTERNAL_TOKEN) for the connected-apps page and the
school's apps page. Activity is a view, not a control: when the resource API cannot
answer, the pages say so and show everything else (`None` here), never an error."""

from __future__ import annotations

import httpx
import msgspec

from courseschool.common.activity import MAX_GRANTS, PATH, GrantActivity, decode_answer
from courseschool.common.logging import get_logger

log = get_logger(__name__)


class ActivityReader:
    def __init__(self, http: httpx.AsyncClient | None, internal_token: str | None) -> None:
        self._http = http
        self._token = internal_token

    async def of_grants(
        self, grant_ids: list[str], *, school_id: str, days: int = 30, changed_limit: int = 20
    ) -> dict[str, GrantActivity] | None:
        """Activity by grant id (a grant that did nothing in the period is absent);
        None when the resource API is not reachable or not configured."""
        if self._http is None or not self._token:
            return None
        found: dict[str, GrantActivity] = {}
        for start in range(0, len(grant_ids), MAX_GRANTS):
            params: list[tuple[str, str | int | float | bool | None]] = [("school_id", school_id), ("days", days)]
            params += [("changed_limit", changed_limit)]
            params += [("grant_id", g) for g in grant_ids[start : start + MAX_GRANTS]]
            try:
                response = await self._http.get(PATH, params=params, headers={"Authorization": f"Bearer {self._token}"})
                response.raise_for_status()
                answer = decode_answer(response.content)
            except (httpx.HTTPError, msgspec.DecodeError, msgspec.ValidationError) as exc:
                log.warning("activity_unavailable", error=type(exc).__name__)
                return None
            found.update({g.grant_id: g for g in answer.grants})
        return found
