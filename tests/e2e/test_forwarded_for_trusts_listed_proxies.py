"""Finding 11: the per-IP limits count the address our proxy-headers middleware finds,
in both servers: `serve` (granian) believes X-Forwarded-For only from FORWARDED_ALLOW_IPS
and reads it from the right, `*` included; the all-in-one (`run`) trusts no proxy unless
told, so a loopback caller cannot pick a fresh address with a forged header."""

from __future__ import annotations

import secrets

from .conftest import running_platform
from .test_serve import _register, authz_serve


def _address() -> str:
    """A fresh address of the IPv6 documentation prefix (RFC 3849): no earlier run counted it."""
    return f"2001:db8:{secrets.token_hex(2)}:{secrets.token_hex(2)}::{secrets.token_hex(2)}"


_forged = _real = _address


def test_star_takes_the_rightmost_entry_not_the_one_the_caller_wrote(database_url, redis_url, kek, tmp_path) -> None:
    """Behind a proxy that appends (`$proxy_add_x_forwarded_for`), the leftmost entries are
    the caller's own: with `*`, a fresh forged one per request must not reset the budget."""
    with authz_serve(
        database_url, redis_url, kek, tmp_path / "authz.log", FORWARDED_ALLOW_IPS="*", RATE_REGISTER_PER_IP="2/600"
    ) as (base, _):
        caller = _real()
        statuses = [_register(base, f"{_forged()}, {caller}") for _ in range(3)]
        assert statuses == [201, 201, 429], statuses
        # The rightmost entry is the caller: another one has a budget of its own.
        assert _register(base, f"{_forged()}, {_real()}") == 201


def test_a_chain_of_listed_proxies_is_skipped_from_the_right(database_url, redis_url, kek, tmp_path) -> None:
    with authz_serve(
        database_url,
        redis_url,
        kek,
        tmp_path / "authz.log",
        FORWARDED_ALLOW_IPS="127.0.0.1, 10.0.0.0/8",
        RATE_REGISTER_PER_IP="2/600",
    ) as (base, _):
        caller = _real()
        statuses = [_register(base, f"{_forged()}, {caller}, 10.0.0.7") for _ in range(3)]
        assert statuses == [201, 201, 429], statuses


def test_the_all_in_one_trusts_no_proxy_by_default(database_url, redis_url, kek, tmp_path) -> None:
    """`run` on loopback, no FORWARDED_ALLOW_IPS: every request of a loopback caller counts
    against 127.0.0.1 whatever X-Forwarded-For says."""
    with running_platform(
        database_url, redis_url, kek, tmp_path, extra_env={"RATE_REGISTER_PER_IP": "2/600"}
    ) as platform:
        statuses = [_register(platform.address, _forged()) for _ in range(3)]
        assert statuses[2] == 429, statuses
