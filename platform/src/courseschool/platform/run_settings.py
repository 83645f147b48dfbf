"""What `python -m courseschool.platform run --help` says of its settings."""

RUN_SETTINGS = """settings (environment variables):
  PORT                 the port, as --port (8000); `make run PORT=8080` passes it
  HOST                 the address to listen on (127.0.0.1: this machine only)
  BASE_URL             the public origin (http://127.0.0.1:PORT); set it behind a proxy
  DATA_DIR             the embedded servers' data and the key-encryption key (.data)
  DATABASE_URL         a PostgreSQL server to use instead of the embedded one
  REDIS_URL            a Redis server to use instead of the embedded one
  REDIS_SENTINEL_MASTER, REDIS_SENTINELS   Redis with Sentinel: the master's name and
                       the sentinels (host:port,host:port); REDIS_URL then gives the
                       database, credentials and TLS, the sentinels the address
  REDIS_SENTINEL_PASSWORD, REDIS_SENTINEL_USERNAME, REDIS_SENTINEL_TLS
                       sentinels that ask for a password (their own), an ACL user, or
                       speak TLS (with REDIS_URL's ssl_* options, its CA among them)
  KEY_ENCRYPTION_KEY   seals the signing keys (default: made once, kept in DATA_DIR)
  INTERNAL_TOKEN       the bearer token /metrics asks for (default: a new one each run,
                       printed at start)
  DEMO_EMAIL, DEMO_PASSWORD   the demo school owner's sign-in
  SMTP_URL, MAIL_FROM  send e-mail through this relay (smtp:// STARTTLS, smtps:// TLS,
                       credentials in the URL) from this address; unset: every message
                       is caught in DATA_DIR/mail/ as an .eml file (the banner says where)
  EVENTS_WEBHOOK_URL, EVENTS_WEBHOOK_SECRET
                       tell security events and new connections to this HTTPS receiver,
                       each signed with the secret (32 characters or more), in order per
                       person; unset: none is sent (they stay in `admin audit list`)
  EVENTS_WEBHOOK_CA_BUNDLE, EVENTS_WEBHOOK_TIMEOUT, EVENTS_WEBHOOK_MAX_ATTEMPTS,
  EVENTS_WEBHOOK_INTERVAL   the receiver's private CA; seconds per send (5); tries before
                       a delivery is abandoned (12); seconds between passes (2)
  LOG_LEVEL, LOG_FORMAT       info; auto (console in a terminal, else JSON)
  RATE_*               abuse limits (development-sized here, printed at start)
  FORWARDED_ALLOW_IPS  proxies whose X-Forwarded-For is believed (none)"""
