r"""The all-in-one ASGI app for a production server of one's choice, built from the
environment alone (DATABASE_URL, REDIS_URL, KEY_ENCRYPTION_KEY, INTERNAL_TOKEN,
RS_CLIENT_ID, RS_CLIENT_SECRET, BASE_URL, FORWARDED_ALLOW_IPS): no embedded servers,
no migrations. /healthz, /readyz and /metrics answer only with the internal token
(`Authorization: Bearer INTERNAL_TOKEN`), and the client address is read from
X-Forwarded-For by our own middleware, so the server must not rewrite it itself:

    granian --interface asgi --http 1 --http1-header-read-timeout 10000 --respawn-failed-workers \
        courseschool.platform.asgi:app
    uvicorn --no-proxy-headers courseschool.platform.asgi:app   # no header read timeout: behind a proxy only

(`python -m courseschool.platform run` serves the same app under granian with these settings.)
`--respawn-failed-workers`: a worker that dies (killed by the OOM killer, a crash in a
native library) is replaced; without it granian stops the whole server at the first
worker lost. `--workers N` as the machine allows.
"""

import os

from courseschool.common.logging import configure_logging
from courseschool.common.settings import BaseSettings, load_settings
from courseschool.common.web import server_app

from .app import build

configure_logging(os.environ.get("LOG_LEVEL", "info"), os.environ.get("LOG_FORMAT", "json"))
router = build({})
app = server_app(router, router.apps, load_settings(BaseSettings).forwarded_allow_ips)
