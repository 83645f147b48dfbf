"""Trusted domains: hosts whose Client ID Metadata Documents may list fixed https
callbacks on themselves. Without the mark a document's redirect URIs are loopback
only, as a self-registered client's are; fixed https callbacks are an
administrator's decision, like an integration."""

from __future__ import annotations

import re
from typing import Any

from courseschool.common.errors import InvalidRequestError, NotFoundError, fit_description

from .base import AdminBase

# A DNS name as a URL holds it (RFC 1123 §2.1 labels; IDNs as their xn-- A-labels),
# matched exactly: no wildcard, no port, no scheme.
_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")


def trusted_host(value: str) -> str:
    """The host as it is stored and matched: lower case, without a final dot."""
    host = value.strip().lower().removesuffix(".")
    if not 0 < len(host) <= 253 or not all(_LABEL.fullmatch(label) for label in host.split(".")):
        raise InvalidRequestError("a trusted domain is a host name such as apps.example.com (no scheme, port or *)")
    return host


class DomainsAdmin(AdminBase):
    async def list_domains(self) -> list[dict[str, Any]]:
        return await self.c.trusted_domains.list()

    async def trust_domain(self, host: str) -> dict[str, Any]:
        host = trusted_host(host)
        domain = await self.c.trusted_domains.add(host, created_by=self.actor)
        await self._audit("domain_trusted", host=host)
        return domain

    async def untrust_domain(self, host: str) -> dict[str, Any]:
        """Documents on the host are held to loopback callbacks again from their next use."""
        host = trusted_host(host)
        if not await self.c.trusted_domains.remove(host):
            raise NotFoundError(f"{fit_description(host)} is not a trusted domain", detail=f"host as given: {host}")
        await self._audit("domain_untrusted", host=host)
        return {"host": host, "trusted": False}
