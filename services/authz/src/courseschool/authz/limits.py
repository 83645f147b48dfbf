"""The authorization server's abuse limits: request rates per address and per
client (fixed windows in Redis, shared by every replica) and the sign-in lockout."""

from __future__ import annotations

import msgspec
import redis.asyncio as aioredis

from courseschool.common.errors import TooManyRequestsError
from courseschool.common.ratelimit import Cooldown, Lockout, RateLimiter

from .settings import RATE_NAMES, AuthzSettings

WINDOW = 900  # failures are counted over 15 minutes
CAP = 3600  # a lock doubles up to an hour


class Limits:
    def __init__(self, settings: AuthzSettings, redis: aioredis.Redis) -> None:
        self._limiter = RateLimiter(redis, "authz:rate")
        # Parsed once: the limits are checked on every token request.
        self._rates = {name: settings.rate(name) for name in RATE_NAMES}
        self.sign_in = SignInLimits(settings, redis)

    async def count(self, rate_name: str, key: str, *more: tuple[str, str]) -> None:
        """Count one request against the named rates (in order, one Redis call); 429 at
        the first that is exceeded."""
        decision = await self._limiter.hit(
            f"{rate_name}:{key}", self._rates[rate_name], *((f"{n}:{k}", self._rates[n]) for n, k in more)
        )
        if not decision.allowed:
            raise TooManyRequestsError("too many requests; slow down", retry_after=decision.retry_after)


class Refusal(msgspec.Struct, frozen=True):
    rule: str  # "address", "address_at_account" or "account_slowed"
    retry_after: int
    message: str


class SignInLimits:
    """The sign-in lockout, made to hurt the one guessing rather than the account's
    owner (security review, finding 5; the README's "Security model"). Failures count
    per (account, address), per address, and per account:

    - an address with LOGIN_LOCKOUT_THRESHOLD failures at an account is locked out of
      that account (LOGIN_LOCKOUT_BASE seconds, doubling, at most an hour), and one
      with LOGIN_SOURCE_THRESHOLD failures at any accounts is locked out of all;
    - an account with LOGIN_ACCOUNT_CEILING failures from anywhere is slowed, never
      locked: for the next 15 minutes each address gets one attempt at it per
      LOGIN_SLOW_COOLDOWN seconds, so the owner's first try from a clean address is
      checked as usual.

    `account` is a key derived from the canonical email (protocol/emails.py), `ip`
    the caller's address as the web layer gives it."""

    def __init__(self, settings: AuthzSettings, redis: aioredis.Redis) -> None:
        base = settings.login_lockout_base
        self._pair = Lockout(
            redis, "authz:login", threshold=settings.login_lockout_threshold, window=WINDOW, base=base, cap=CAP
        )
        self._source = Lockout(
            redis, "authz:login:source", threshold=settings.login_source_threshold, window=WINDOW, base=base, cap=CAP
        )
        # "Locked" here means "slowed": past the ceiling, for a whole window after each failure.
        self._account = Lockout(
            redis,
            "authz:login:account",
            threshold=settings.login_account_ceiling,
            window=WINDOW,
            base=WINDOW,
            cap=WINDOW,
        )
        self._slow = Cooldown(redis, "authz:login:slow", seconds=settings.login_slow_cooldown)

    async def refusal(self, account: str, ip: str) -> Refusal | None:
        """Why this address may not try this account now (None: it may). An attempt at
        a slowed account starts the address's wait there."""
        if locked := await self._source.locked_for(ip):
            return Refusal("address", locked, "too many failed sign-ins from this address; try again later")
        if locked := await self._pair.locked_for(_pair(account, ip)):
            return Refusal("address_at_account", locked, "too many failed sign-ins for this account; try again later")
        if await self._account.locked_for(account) and (wait := await self._slow.take(_pair(account, ip))):
            return Refusal(
                "account_slowed", wait, "this account has had many failed sign-ins; wait a moment between attempts"
            )
        return None

    async def failed(self, account: str, ip: str) -> list[str]:
        """Count a failure; the rules it made bite (for the audit log)."""
        triggered = []
        if await self._pair.failed(_pair(account, ip)):
            triggered.append("address_at_account")
        if await self._source.failed(ip):
            triggered.append("address")
        if await self._account.failed(account):
            triggered.append("account_slowed")
        return triggered

    async def succeeded(self, account: str, ip: str) -> None:
        """The address knew the password: its failures at this account are forgotten
        (not the address's own count, nor the account's: a sign-in to the attacker's
        own account, or the owner's, must not reset the attack's)."""
        await self._pair.succeeded(_pair(account, ip))


def _pair(account: str, ip: str) -> str:
    return f"{account}:{ip}"
