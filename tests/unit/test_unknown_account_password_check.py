"""A sign-in for an account that does not exist verifies the password against a stand-in
hash, so that both paths cost one argon2id verification (no account enumeration by
timing). The stand-in is made at the first such check, not when the module is imported:
every admin command imports it and would pay a hash it never uses."""

from __future__ import annotations

import subprocess
import sys

from argon2 import extract_parameters

from courseschool.authz import passwords


def test_an_unknown_account_is_checked_at_the_cost_of_a_real_one() -> None:
    assert passwords.verify_password(None, "no such account: equalise timing") is False
    # Today's parameters, as a real account's hash: the same memory and time costs.
    assert extract_parameters(passwords._dummy_hash(passwords.DEFAULT)) == extract_parameters(
        passwords.hash_password("pw")
    )


def test_the_stand_in_has_the_configured_parameters() -> None:
    """An operator's parameters (PASSWORD_*): the stand-in costs what their hashes cost."""
    floor = passwords.hasher(time_cost=2, memory_kib=19456, parallelism=1)
    assert passwords.verify_password(None, "no such account: equalise timing", floor) is False
    made = extract_parameters(passwords._dummy_hash(floor))
    assert made == extract_parameters(passwords.hash_password("pw", floor))
    assert (made.time_cost, made.memory_cost, made.parallelism) == (2, 19456, 1)


def test_importing_the_module_hashes_nothing() -> None:
    probe = (
        "from courseschool.authz import passwords as p; "
        "import sys; sys.stdout.write(str(p._dummy_hash.cache_info().currsize))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60).stdout
    assert out == "0"
