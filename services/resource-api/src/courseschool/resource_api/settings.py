"""Settings of the resource API (environment variables, upper-cased names)."""

from __future__ import annotations

from courseschool.common.settings import BaseSettings


class ResourceSettings(BaseSettings, kw_only=True, frozen=True):
    resource_name: str = "Course School API"
