"""Servers that only say which version they are: enough of PostgreSQL's start-up
protocol, or of Redis's RESP (2 and 3), for a client to connect and read the version, so that a
test can point a service at a server older than the supported range
(courseschool.common.server_versions) without installing one."""

from __future__ import annotations

import asyncio
import contextlib
import struct
from collections.abc import AsyncIterator

SSL_REQUEST = 80877103


def _message(kind: bytes, body: bytes) -> bytes:
    return kind + struct.pack("!I", len(body) + 4) + body


def _parameter(name: str, value: str) -> bytes:
    return _message(b"S", name.encode() + b"\0" + value.encode() + b"\0")


async def _postgres_session(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, version: str) -> None:
    try:
        while True:
            (length,) = struct.unpack("!I", await reader.readexactly(4))
            body = await reader.readexactly(length - 4)
            if struct.unpack("!I", body[:4])[0] == SSL_REQUEST:
                writer.write(b"N")  # no TLS here: the client goes on in the clear
                continue
            break  # the start-up message: whoever it is, they are in
        writer.write(_message(b"R", struct.pack("!I", 0)))  # AuthenticationOk
        for name, value in (
            ("server_version", version),
            ("server_encoding", "UTF8"),
            ("client_encoding", "UTF8"),
            ("DateStyle", "ISO, MDY"),
            ("integer_datetimes", "on"),
            ("standard_conforming_strings", "on"),
        ):
            writer.write(_parameter(name, value))
        writer.write(_message(b"K", struct.pack("!II", 4242, 2424)))  # BackendKeyData
        writer.write(_message(b"Z", b"I"))  # ReadyForQuery, idle
        await writer.drain()
        # Anything more (a query) is answered by closing: the version is all there is.
        await reader.read(1)
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


def _bulk(text: str) -> bytes:
    data = text.encode()
    return b"$%d\r\n%s\r\n" % (len(data), data)


async def _read_command(reader: asyncio.StreamReader) -> list[bytes]:
    header = await reader.readline()
    if not header.startswith(b"*"):
        raise ConnectionError("not a RESP array")
    words = []
    for _ in range(int(header[1:])):
        size = int((await reader.readline())[1:])
        words.append((await reader.readexactly(size + 2))[:-2])
    return words


async def _redis_session(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, version: str) -> None:
    try:
        while True:
            command = await _read_command(reader)
            name = command[0].upper()
            if name == b"HELLO":  # redis-py speaks RESP3, as Redis has since 6.0
                fields = {"server": "redis", "version": version, "proto": 3, "id": 1, "mode": "standalone"}
                writer.write(b"%%%d\r\n" % len(fields))
                for key, value in fields.items():
                    writer.write(_bulk(key) + (b":%d\r\n" % value if isinstance(value, int) else _bulk(value)))
            elif name == b"INFO":
                writer.write(_bulk(f"# Server\r\nredis_version:{version}\r\nredis_mode:standalone\r\n"))
            elif name == b"PING":
                writer.write(b"+PONG\r\n")
            elif name in (b"CLIENT", b"SELECT"):
                writer.write(b"+OK\r\n")
            else:
                writer.write(b"-ERR unknown command '%s'\r\n" % command[0])
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError, ValueError):
        pass
    finally:
        writer.close()


@contextlib.asynccontextmanager
async def old_postgres(version: str = "14.11") -> AsyncIterator[str]:
    """A DSN of a 'PostgreSQL' that reports `version` and accepts anyone."""
    server = await asyncio.start_server(lambda r, w: _postgres_session(r, w, version), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres?sslmode=disable"


@contextlib.asynccontextmanager
async def old_redis(version: str = "6.2.14") -> AsyncIterator[str]:
    """A URL of a 'Redis' that reports `version` in INFO."""
    server = await asyncio.start_server(lambda r, w: _redis_session(r, w, version), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        yield f"redis://127.0.0.1:{port}/0"
