"""argon2id's parameters are settings: RFC 9106's second recommended option by default,
never below OWASP's floor for argon2id (two passes over 19 MiB), and the hashes made and
checked are of the parameters set."""

from __future__ import annotations

import pytest
from argon2 import PasswordHasher, extract_parameters

from courseschool.authz.passwords import check_password, hash_password, hasher
from courseschool.authz.settings import AuthzSettings
from courseschool.common.settings import SettingsError, load_settings


def _settings(**environ: str) -> AuthzSettings:
    return load_settings(AuthzSettings, environ, key_encryption_key="x")


def test_the_defaults_are_rfc_9106s_second_option() -> None:
    settings = _settings()
    assert (settings.password_time_cost, settings.password_memory_kib, settings.password_parallelism) == (3, 65536, 4)
    default = PasswordHasher()
    assert (default.time_cost, default.memory_cost, default.parallelism) == (3, 65536, 4)


def test_the_floor_is_accepted() -> None:
    settings = _settings(PASSWORD_TIME_COST="2", PASSWORD_MEMORY_KIB="19456", PASSWORD_PARALLELISM="1")
    assert (settings.password_time_cost, settings.password_memory_kib, settings.password_parallelism) == (2, 19456, 1)


@pytest.mark.parametrize(
    "environ",
    [
        {"PASSWORD_TIME_COST": "1"},
        {"PASSWORD_MEMORY_KIB": "19455"},
        {"PASSWORD_MEMORY_KIB": "8192", "PASSWORD_TIME_COST": "5"},
        {"PASSWORD_PARALLELISM": "0"},
        {"PASSWORD_PARALLELISM": "65"},
    ],
)
def test_below_the_floor_is_refused_naming_the_settings(environ: dict[str, str]) -> None:
    with pytest.raises(
        SettingsError, match="PASSWORD_TIME_COST must be at least 2 and PASSWORD_MEMORY_KIB at least 19456"
    ):
        _settings(**environ)


def test_a_hash_of_other_parameters_is_replaced_by_one_of_the_set_parameters() -> None:
    floor = hasher(time_cost=2, memory_kib=19456, parallelism=1)
    old = hash_password("pw")  # the defaults
    checked = check_password(old, "pw", floor)
    assert checked.ok and checked.new_hash is not None
    made = extract_parameters(checked.new_hash)
    assert (made.time_cost, made.memory_cost, made.parallelism) == (2, 19456, 1)
    again = check_password(checked.new_hash, "pw", floor)
    assert again.ok and again.new_hash is None
    assert not check_password(checked.new_hash, "not pw", floor).ok
