"""Settings of the authorization server (environment variables, upper-cased names)."""

from __future__ import annotations

from courseschool.common.ratelimit import Rate, parse_rate
from courseschool.common.resource import canonical_resource
from courseschool.common.settings import BaseSettings

from .mail.relay import from_address, parse_smtp_url

RATE_NAMES = (
    "rate_register_per_ip",
    "rate_token_per_ip",
    "rate_token_per_client",
    "rate_introspect_per_ip",
    "rate_introspect_per_client",
    "rate_login_per_ip",
    "rate_authorize_per_ip",
    "rate_logout_per_ip",
    "rate_client_configuration_per_ip",
    "rate_client_configuration_per_client",
    "rate_password_reset_per_ip",
    "rate_password_reset_per_account",
    "rate_invitations_per_owner",
    "rate_access_request_per_person",
)


# Settings that must be a positive number of seconds, and positive counts.
_SECONDS = (
    "access_token_ttl",
    "id_token_ttl",
    "code_ttl",
    "interaction_ttl",
    "session_ttl",
    "refresh_token_idle_ttl",
    "refresh_token_absolute_ttl",
    "key_rotation_interval",
    "key_publish_lead",
    "key_reload_interval",
    "housekeeping_interval",
    "invitation_ttl",
    "password_reset_ttl",
    "recent_sign_in",
    "access_request_ttl",
)
_COUNTS = (
    "login_lockout_threshold",
    "login_lockout_base",
    "login_source_threshold",
    "login_account_ceiling",
    "login_slow_cooldown",
    "grants_per_app",
    "housekeeping_batch",
    "housekeeping_rounds",
)


class AccountSettings(BaseSettings, kw_only=True, frozen=True):
    """People's accounts (issue 40), checked with the rest by AuthzSettings."""

    # Single-use links by e-mail: an invitation (`admin users invite`) is valid this
    # long, a password reset ("Forgot your password?") this long.
    invitation_ttl: int = 48 * 3600
    password_reset_ttl: int = 30 * 60
    # A change on the account or security page needs the password or a code entered
    # within this many seconds (a sign-in, or a confirmation asked for then).
    recent_sign_in: int = 300
    # "Forgot your password?": requests per address, and messages per address typed in
    # (beyond it the page answers the same and nothing is sent).
    rate_password_reset_per_ip: str = "10/900"
    rate_password_reset_per_account: str = "3/900"
    # Invitations an owner sends from the school's people page (the admin CLI: no limit).
    rate_invitations_per_owner: str = "30/3600"
    # Requests for the school's approval of an app, per person (each one e-mails every
    # owner and admin of the school).
    rate_access_request_per_person: str = "5/3600"


class AuthzSettings(AccountSettings, kw_only=True, frozen=True):
    # 32 random bytes, base64url: seals private signing keys at rest. Required in
    # production; the embedded default generates one and keeps it in its data folder.
    key_encryption_key: str | None = None
    access_token_ttl: int = 600
    id_token_ttl: int = 600
    code_ttl: int = 60
    interaction_ttl: int = 900
    session_ttl: int = 43200
    # Refresh tokens: unused for longer than the idle limit, or older than the absolute
    # limit counted from the first grant, they stop working.
    refresh_token_idle_ttl: int = 14 * 86400
    refresh_token_absolute_ttl: int = 90 * 86400
    # An immediate retry with a just-rotated refresh token gets the same answer back.
    refresh_token_grace: int = 10
    # One grant per sign-in: a user may hold this many live grants of one client (one per
    # computer or browser they signed in on); one more ends the least recently used.
    grants_per_app: int = 10
    # Signing keys: each signs for KEY_ROTATION_INTERVAL; its successor is published
    # KEY_PUBLISH_LEAD before it signs; replicas reload keys every KEY_RELOAD_INTERVAL.
    key_rotation_interval: int = 30 * 86400
    key_publish_lead: int = 3600
    key_reload_interval: int = 60
    # Extra resource identifiers tokens may be bound to, space-separated; the resource
    # API at BASE_URL is always known.
    extra_resources: str = ""

    # Client ID Metadata Documents: client_ids that are HTTPS URLs of the client's metadata.
    cimd_enabled: bool = True
    cimd_max_bytes: int = 5120
    cimd_timeout: float = 3.0
    cimd_cache_min: int = 60  # a fetched document is kept at least this long...
    cimd_cache_max: int = 86400  # ...and at most this long, within its Cache-Control max-age
    cimd_failure_ttl: int = 60  # a failed fetch is remembered this long

    # Abuse limits, LIMIT/SECONDS; sign-in lockout (README, "Security model"): an
    # address is locked out of an account for LOGIN_LOCKOUT_BASE seconds, doubling, once
    # it has LOGIN_LOCKOUT_THRESHOLD failures there within 15 minutes, and out of every
    # account after LOGIN_SOURCE_THRESHOLD failures; an account with
    # LOGIN_ACCOUNT_CEILING failures from anywhere gives each address one attempt per
    # LOGIN_SLOW_COOLDOWN seconds.
    rate_register_per_ip: str = "20/3600"
    rate_token_per_ip: str = "300/60"
    rate_token_per_client: str = "120/60"
    rate_login_per_ip: str = "30/300"
    # Introspection (RFC 7662) is asked by resource servers, a few known callers each
    # asking for many users' tokens (every token, uncached, while the revocation feed is
    # down): limits of their own, far above a client's token requests.
    rate_introspect_per_ip: str = "30000/60"
    rate_introspect_per_client: str = "30000/60"
    # Anonymous, and each call holds a pending request in Redis for INTERACTION_TTL;
    # generous, since a whole school may sign in from behind one address.
    rate_authorize_per_ip: str = "120/60"
    # Sign-out (/oauth/logout, GET and POST): anonymous like the authorization endpoint,
    # and limited the same way.
    rate_logout_per_ip: str = "120/60"
    # The client configuration endpoint (RFC 7592: a client reads, replaces or deletes
    # its registration): each request per address and per client id named in the path,
    # counted before the registration access token is checked. A client needs it rarely.
    rate_client_configuration_per_ip: str = "60/3600"
    rate_client_configuration_per_client: str = "30/3600"
    login_lockout_threshold: int = 5
    login_lockout_base: int = 30
    login_source_threshold: int = 20
    login_account_ceiling: int = 20
    login_slow_cooldown: int = 10
    # Password hashing off the event loop: this many at once (0: one per core), and at
    # most this many more waiting; beyond that a sign-in is refused with 503.
    password_hash_workers: int = 0
    password_hash_queue: int = 32
    # argon2id's cost (passwords.py): passes, memory in KiB, lanes. By default RFC 9106's
    # second recommended option; never below OWASP's floor (two passes over 19 MiB). A
    # stored hash of other parameters is replaced at its next sign-in.
    password_time_cost: int = 3
    password_memory_kib: int = 65536
    password_parallelism: int = 4
    # Dynamically registered clients that never complete a grant are removed after this.
    unused_client_ttl: int = 7 * 86400
    # Housekeeping (storage/housekeeping.py): a pass this often; revoked grants stay on
    # record (admin grants list, connected apps) this long after their revocation.
    housekeeping_interval: int = 300
    revoked_grant_retention: int = 30 * 86400
    # Per pass and rule: at most HOUSEKEEPING_ROUNDS statements of HOUSEKEEPING_BATCH rows.
    housekeeping_batch: int = 5000
    housekeeping_rounds: int = 10
    # A request for a school's approval of an app waits this long, then expires (housekeeping).
    access_request_ttl: int = 14 * 86400
    # Events (authz_events: sign-ins, consents, security, admin actions) stay this long.
    event_retention: int = 365 * 86400
    # An operator's HTTPS webhook for security events and new connections (webhook.py).
    events_webhook_url: str | None = None
    events_webhook_secret: str | None = None
    events_webhook_ca_bundle: str | None = None  # a private CA the receiver's certificate is from
    events_webhook_timeout: float = 5.0
    events_webhook_max_attempts: int = 12
    events_webhook_interval: float = 2.0
    # E-mail to people (mail/): through the SMTP relay SMTP_URL names (smtp:// STARTTLS,
    # smtps:// TLS, credentials in the URL; mail/relay.py), from MAIL_FROM; unset: no
    # e-mail is sent (the pages still tell everything). MAIL_TIMEOUT bounds one message's
    # whole conversation with the relay; a message is tried MAIL_MAX_ATTEMPTS times.
    smtp_url: str | None = None
    mail_from: str | None = None
    smtp_ca_bundle: str | None = None  # a private CA the relay's certificate is from
    mail_timeout: float = 30.0
    mail_max_attempts: int = 10
    mail_interval: float = 2.0
    # Where the resource API answers /internal/activity (what apps did, for the pages);
    # the all-in-one reaches it in-process.
    resource_internal_url: str = "http://127.0.0.1:8002"
    # The admin API's bearer credential (/internal/admin); unset: the admin API is off.
    admin_token: str | None = None

    def rate(self, name: str) -> Rate:
        return parse_rate(getattr(self, name), name)

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in _SECONDS:
            if getattr(self, name) <= 0:
                raise ValueError(f"{name.upper()} must be a positive number of seconds")
        for name in RATE_NAMES:
            self.rate(name)
        for name in _COUNTS:
            if getattr(self, name) < 1:
                raise ValueError(f"{name.upper()} must be positive")
        if self.password_hash_workers < 0 or self.password_hash_queue < 0:
            raise ValueError("PASSWORD_HASH_WORKERS and PASSWORD_HASH_QUEUE must not be negative")
        _check_password_cost(self)
        if self.admin_token is not None and len(self.admin_token) < 32:
            raise ValueError("ADMIN_TOKEN must be at least 32 characters")
        if self.key_publish_lead >= self.key_rotation_interval:
            raise ValueError("KEY_PUBLISH_LEAD must be shorter than KEY_ROTATION_INTERVAL")
        _check_deliveries(self)
        if self.event_retention < 86400:
            raise ValueError("EVENT_RETENTION must be at least a day (86400 seconds)")
        if self.revoked_grant_retention < 86400:
            raise ValueError("REVOKED_GRANT_RETENTION must be at least a day (86400 seconds)")
        if not 0 <= self.refresh_token_grace <= 60:
            raise ValueError("REFRESH_TOKEN_GRACE must be between 0 and 60 seconds")

    @property
    def cookie_secure(self) -> bool:
        return self.base_url.startswith("https://")


def _check_password_cost(s: AuthzSettings) -> None:
    if s.password_time_cost < 2 or s.password_memory_kib < 19456 or not 1 <= s.password_parallelism <= 64:
        raise ValueError(
            "PASSWORD_TIME_COST must be at least 2 and PASSWORD_MEMORY_KIB at least 19456 (OWASP's floor"
            " for argon2id), PASSWORD_PARALLELISM 1 to 64"
        )


def _check_deliveries(s: AuthzSettings) -> None:
    """The events webhook's and the e-mail's settings."""
    if s.events_webhook_url is not None:
        if not s.events_webhook_url.startswith("https://"):
            raise ValueError("EVENTS_WEBHOOK_URL must be an https URL")
        if not s.events_webhook_secret or len(s.events_webhook_secret) < 32:
            raise ValueError("EVENTS_WEBHOOK_SECRET (at least 32 characters) signs the webhook's deliveries")
    if not 0 < s.events_webhook_timeout <= 30 or s.events_webhook_max_attempts < 1:
        raise ValueError("EVENTS_WEBHOOK_TIMEOUT must be 0 to 30 seconds, EVENTS_WEBHOOK_MAX_ATTEMPTS positive")
    if s.smtp_url is not None:
        parse_smtp_url(s.smtp_url)
        if not s.mail_from:
            raise ValueError("MAIL_FROM (the address messages come from) is needed with SMTP_URL")
    if s.mail_from is not None:
        from_address(s.mail_from)
    if not 0 < s.mail_timeout <= 120 or s.mail_max_attempts < 1 or s.mail_interval <= 0:
        raise ValueError("MAIL_TIMEOUT must be 0 to 120 seconds, MAIL_MAX_ATTEMPTS and MAIL_INTERVAL positive")


def resources(settings: AuthzSettings) -> tuple[str, frozenset[str]]:
    """The default resource (the API at BASE_URL) and every resource tokens may be for."""
    default = canonical_resource(settings.base_url) or settings.base_url
    extra = {canonical_resource(r) for r in settings.extra_resources.split()}
    return default, frozenset({default, *(r for r in extra if r)})
