"""The client directory: every lookup of a client by id, over both kinds of client
(registered ones in Postgres, and those a Client ID Metadata Document describes)."""

from __future__ import annotations

import msgspec

from courseschool.common.clock import Clock

from ..protocol.client_id_metadata import MetadataDocumentError, check_url, client_from_document, is_metadata_url
from ..protocol.client_names import reserved_name_problem
from ..protocol.models import Client
from .client_metadata import MetadataDocumentFetcher
from .clients import PgClientStore
from .trusted_domains import PgTrustedDomainStore


class ClientDirectory:
    """The `ClientStore` port over both kinds of client: registered ones in Postgres,
    and those identified by a metadata document URL. A document's client is built
    from its (cached) document at every use, and recorded in Postgres only when a user
    approves it (`record`, before the grant that refers to it): an anonymous request
    with a new URL stores no row. Once recorded, an administrator's `disabled` holds."""

    def __init__(
        self,
        clients: PgClientStore,
        fetcher: MetadataDocumentFetcher | None,
        clock: Clock,
        domains: PgTrustedDomainStore,
        *,
        approved_only: bool = False,
    ) -> None:
        self._clients = clients
        self._fetcher = fetcher
        self._clock = clock
        self._domains = domains
        self._approved_only = approved_only

    def approved(self) -> ClientDirectory:
        """This directory as the token endpoint sees it: a document's client exists
        there only once a user approved it (nothing else can hold a code or token), so
        an unknown URL is never fetched."""
        return ClientDirectory(self._clients, self._fetcher, self._clock, self._domains, approved_only=True)

    async def get(self, client_id: str) -> Client | None:
        if self._fetcher is None or not is_metadata_url(client_id):
            return await self._clients.get(client_id)
        return (await self.resolve(client_id))[0]

    async def resolve(self, url: str) -> tuple[Client | None, MetadataDocumentError | None]:
        """(client, None), or (None, why the document cannot be used)."""
        assert self._fetcher is not None
        recorded = await self._clients.get(url)
        if recorded is not None and recorded.verified_origin is None:
            return None, MetadataDocumentError("the URL is the client_id of a client registered another way")
        if recorded is None and self._approved_only:
            return None, MetadataDocumentError("no user has approved this client")
        try:
            document = await self._fetcher.document(url, approved=recorded is not None)
            trusted = await self._domains.is_trusted(check_url(url))
            client = client_from_document(url, document, now=self._clock.now(), trusted_host=trusted)
        except MetadataDocumentError as exc:
            return None, exc
        # A declared name (not the host, shown when there is none) is checked whenever it is
        # new, as registration and RFC 7592 updates check theirs.
        renamed = recorded is None or recorded.client_name != client.client_name
        if renamed and client.client_name and document.get("client_name"):
            reserved = reserved_name_problem(client.client_name, await self._clients.integration_names())
            if reserved:
                return None, MetadataDocumentError(f"the document's {reserved}")
        if recorded is None:
            return client, None
        return msgspec.structs.replace(
            client, disabled=recorded.disabled, client_id_issued_at=recorded.client_id_issued_at
        ), None

    async def record(self, client: Client) -> Client | None:
        """Record (or refresh) a document's client as a user approves it; None when its
        URL is the id of a client registered another way."""
        return await self._clients.record_document_client(client)
