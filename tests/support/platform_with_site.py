"""The all-in-one app as `run` builds it (`courseschool.platform.app.build`), with the one
difference no setting can make: the authorization server fetches Client ID Metadata
Documents from a test's own HTTPS site (on loopback, certified by the test's CA; `tls.py`,
`site_web`). The platform itself fetches from the public web only.

For the end-to-end tests of metadata-document clients, started like the platform
(tests/e2e/conftest.py, `running_platform`) with its environment:

    python -m tests.support.platform_with_site --ca CA_FILE --port N

It serves the app with uvicorn in this one process, on a database already migrated
and seeded (the session's platform did that); settings come from the environment as
`run`'s do."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import uvicorn

from courseschool.common.logging import configure_logging
from courseschool.common.web import server_app
from courseschool.platform.app import build

from .tls import site_web


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.support.platform_with_site")
    parser.add_argument("--ca", type=Path, required=True, help="the test site's CA certificate (PEM)")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    configure_logging(os.environ.get("LOG_LEVEL", "info"), os.environ.get("LOG_FORMAT", "json"))
    router = build({}, public_probes=True, document_web=site_web(args.ca))
    uvicorn.run(server_app(router, router.apps, ""), host="127.0.0.1", port=args.port, log_config=None)


if __name__ == "__main__":
    main()
