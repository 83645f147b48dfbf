"""A TCP forwarder in front of the test Redis, to give a client the network faults a
deployment sees: new connections held back (a slow reconnect) and traffic that stops
without the connection closing (a silent partition)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from urllib.parse import parse_qs, urlsplit


class TcpProxy:
    def __init__(self, redis_url: str) -> None:
        parts = urlsplit(redis_url)
        self._unix_path = parts.path if parts.scheme == "unix" else None  # the embedded Redis
        self._upstream = (parts.hostname or "127.0.0.1", parts.port or 6379)
        self._db = parse_qs(parts.query).get("db", ["0"])[0] if self._unix_path else parts.path.strip("/") or "0"
        self._auth = f"{parts.username or ''}:{parts.password}@" if parts.password else ""
        self._accepting = asyncio.Event()  # cleared: new connections wait
        self._accepting.set()
        self._flowing = asyncio.Event()  # cleared: bytes stop in both directions
        self._flowing.set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._server: asyncio.Server | None = None
        self.port = 0

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    @property
    def url(self) -> str:
        """The same Redis database, reached through this proxy."""
        return f"redis://{self._auth}127.0.0.1:{self.port}/{self._db}"

    async def close(self) -> None:
        self._accepting.set()
        self._flowing.set()
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def hold_new_connections(self) -> None:
        self._accepting.clear()

    def release_new_connections(self) -> None:
        self._accepting.set()

    def stall(self) -> None:
        """Stop forwarding, keeping every connection open: nothing is sent or closed."""
        self._flowing.clear()

    def resume(self) -> None:
        self._flowing.set()

    async def _accept(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        self._writers.add(client_writer)
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._accepting.wait()
            if self._unix_path:
                server_reader, server_writer = await asyncio.open_unix_connection(self._unix_path)
            else:
                server_reader, server_writer = await asyncio.open_connection(*self._upstream)
            self._writers.add(server_writer)
            try:
                await asyncio.gather(self._pump(client_reader, server_writer), self._pump(server_reader, client_writer))
            finally:
                server_writer.close()
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            self._tasks.discard(task)
            client_writer.close()

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while chunk := await reader.read(65536):
                await self._flowing.wait()
                writer.write(chunk)
                await writer.drain()
        finally:
            writer.close()  # the other side closed: so does this one
            self._writers.discard(writer)


@contextlib.asynccontextmanager
async def redis_proxy(redis_url: str) -> AsyncIterator[TcpProxy]:
    proxy = TcpProxy(redis_url)
    await proxy.start()
    try:
        yield proxy
    finally:
        await proxy.close()
