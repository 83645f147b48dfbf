"""Finding 20: the all-in-one (`run`) bounds the time a client takes to send a request's
head (slowloris): a client that sends its headers byte by byte, or opens a connection
and sends nothing, is disconnected within HEADER_READ_TIMEOUT (plus a margin for a busy
machine), while a normal client is served meanwhile."""

from __future__ import annotations

import asyncio
import socket
import time
from urllib.parse import urlsplit

import httpx

from courseschool.common.cli import HEADER_READ_TIMEOUT

from .conftest import Platform

BOUND = HEADER_READ_TIMEOUT + 5  # seconds: the timeout, plus a margin for a loaded machine
REQUEST = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slow\r\nX-Padding: " + b"x" * 400 + b"\r\n\r\n"


def _connect(platform: Platform) -> socket.socket:
    parts = urlsplit(platform.address)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=BOUND + 5)
    return sock


def _closed(sock: socket.socket) -> bool:
    """True once the server has closed the connection (a read returns nothing or fails)."""
    sock.setblocking(False)
    try:
        return sock.recv(4096) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        sock.setblocking(True)


def _drip(platform: Platform, interval: float) -> tuple[bool, int, float]:
    """Send REQUEST one byte at a time; (closed by the server?, bytes sent, seconds)."""
    sock = _connect(platform)
    started = time.monotonic()
    sent = 0
    try:
        for byte in REQUEST:
            if _closed(sock):
                return True, sent, time.monotonic() - started
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                return True, sent, time.monotonic() - started
            sent += 1
            if time.monotonic() - started > BOUND:
                return False, sent, time.monotonic() - started
            time.sleep(interval)
        return False, sent, time.monotonic() - started
    finally:
        sock.close()


def _idle(platform: Platform) -> tuple[bool, float]:
    """Open a connection and send nothing; (closed by the server within BOUND?, seconds)."""
    sock = _connect(platform)
    started = time.monotonic()
    try:
        sock.settimeout(BOUND)
        try:
            closed = sock.recv(4096) == b""
        except TimeoutError:
            closed = False
        except OSError:
            closed = True
        return closed, time.monotonic() - started
    finally:
        sock.close()


async def test_a_slow_or_silent_client_is_disconnected_while_others_are_served(platform: Platform) -> None:
    slow = asyncio.create_task(asyncio.to_thread(_drip, platform, 0.25))
    silent = asyncio.create_task(asyncio.to_thread(_idle, platform))
    async with httpx.AsyncClient(timeout=5) as http:
        while not slow.done():  # a normal client is served throughout
            assert (await http.get(f"{platform.address}/healthz")).status_code == 200
            await asyncio.sleep(1)
    closed, sent, seconds = await slow
    assert closed and sent < len(REQUEST), f"still open after {seconds:.1f} s and {sent} of {len(REQUEST)} bytes"
    assert seconds < BOUND
    closed, seconds = await silent
    assert closed, f"a connection that sent nothing was still open after {seconds:.1f} s"
