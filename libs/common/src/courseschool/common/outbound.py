"""The TLS settings of the HTTP clients this process opens to other servers (httpx).

httpx builds a TLS context for every client made with `verify=True`, even one that only
ever speaks plain HTTP to a neighbour, and building one reads the whole CA bundle: tens
of milliseconds of CPU each, several per app started. A context may be shared by any
number of clients and connections, so each process builds the default one once per
trust setting and hands it to every client."""

from __future__ import annotations

import functools
import ssl

import httpx


def default_tls(*, trust_env: bool = True) -> ssl.SSLContext:
    """httpx's own default (its CA bundle, or SSL_CERT_FILE / SSL_CERT_DIR where
    `trust_env`), built once in this process."""
    return _built(trust_env)


@functools.cache
def _built(trust_env: bool) -> ssl.SSLContext:
    # Cached on the one positional value: every spelling of a call shares one context.
    return httpx.create_ssl_context(trust_env=trust_env)
