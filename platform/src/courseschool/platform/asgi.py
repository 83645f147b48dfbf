"""The all-in-one ASGI app for a production server of one's choice, built from the
environment alone (DATABASE_URL, REDIS_URL, KEY_ENCRYPTION_KEY, INTERNAL_TOKEN,
RS_CLIENT_ID, RS_CLIENT_SECRET, BASE_URL): no embedded servers, no migrations.

    uvicorn courseschool.platform.asgi:app
    granian --interface asgi courseschool.platform.asgi:app
"""

import os

from courseschool.common.logging import configure_logging

from .app import build

configure_logging(os.environ.get("LOG_LEVEL", "info"), os.environ.get("LOG_FORMAT", "json"))
app = build({})
