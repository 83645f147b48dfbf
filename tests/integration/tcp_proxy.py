"""A TCP forwarder in front of the test Redis or PostgreSQL, to give a client the
network faults a deployment sees: new connections held back (a slow reconnect) and
traffic that stops without the connection closing (a silent partition)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from urllib.parse import parse_qs, urlsplit


class TcpProxy:
    """Listens on a free port of 127.0.0.1 and forwards to `host`:`port`, or to the unix
    socket `unix_path` (the embedded servers listen on one)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, unix_path: str | None = None) -> None:
        self._upstream = (host, port)
        self._unix_path = unix_path
        self.url = ""  # the client's address of the server, through this proxy
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
async def _running(proxy: TcpProxy, url: Callable[[int], str]) -> AsyncIterator[TcpProxy]:
    await proxy.start()
    proxy.url = url(proxy.port)
    try:
        yield proxy
    finally:
        await proxy.close()


def redis_proxy(redis_url: str) -> contextlib.AbstractAsyncContextManager[TcpProxy]:
    """The same Redis database, reached through a proxy (`proxy.url`)."""
    parts = urlsplit(redis_url)
    auth = f"{parts.username or ''}:{parts.password}@" if parts.password else ""
    if parts.scheme == "unix":  # the embedded Redis
        db = parse_qs(parts.query).get("db", ["0"])[0]
        proxy = TcpProxy(unix_path=parts.path)
    else:
        db = parts.path.strip("/") or "0"
        proxy = TcpProxy(parts.hostname or "127.0.0.1", parts.port or 6379)
    return _running(proxy, lambda port: f"redis://{auth}127.0.0.1:{port}/{db}")


def postgres_proxy(dsn: str) -> contextlib.AbstractAsyncContextManager[TcpProxy]:
    """The same PostgreSQL database, reached through a proxy (`proxy.url`)."""
    parts = urlsplit(dsn)
    socket_dir = parse_qs(parts.query).get("host", [""])[0]
    port = parts.port or 5432
    if socket_dir.startswith("/"):  # the embedded PostgreSQL
        proxy = TcpProxy(unix_path=f"{socket_dir}/.s.PGSQL.{port}")
    else:
        proxy = TcpProxy(parts.hostname or "127.0.0.1", port)
    userinfo = parts.netloc.rpartition("@")[0]
    return _running(proxy, lambda local: f"postgresql://{userinfo}@127.0.0.1:{local}{parts.path}")
