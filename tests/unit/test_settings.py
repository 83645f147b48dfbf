"""Settings from the environment: defaults, conversion, errors naming the variable."""

from __future__ import annotations

import pytest

from courseschool.authz.settings import AuthzSettings
from courseschool.common.settings import SettingsError, load_settings


def test_defaults_apply_with_an_empty_environment() -> None:
    s = load_settings(AuthzSettings, {})
    assert s.base_url == "http://127.0.0.1:8000"
    assert s.issuer == "http://127.0.0.1:8000"
    assert (s.access_token_ttl, s.id_token_ttl, s.code_ttl, s.interaction_ttl, s.session_ttl) == (
        600,
        600,
        60,
        900,
        43200,
    )
    assert s.log_level == "info"
    assert s.log_format == "auto"
    assert s.database_url is None and s.redis_url is None and s.key_encryption_key is None
    assert (s.db_pool_min, s.db_pool_max) == (0, 10)  # connections open on demand
    assert s.extra_resources == ""
    assert s.cookie_secure is False


def test_explicit_environ_is_used_not_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACCESS_TOKEN_TTL", "not-a-number")
    assert load_settings(AuthzSettings, {}).access_token_ttl == 600


@pytest.mark.parametrize(
    ("env", "attr", "expected"),
    [
        ({"ACCESS_TOKEN_TTL": "120"}, "access_token_ttl", 120),
        ({"CODE_TTL": "30"}, "code_ttl", 30),
        ({"ACCESS_TOKEN_TTL": ""}, "access_token_ttl", 600),  # empty = unset
        ({"BASE_URL": "https://auth.example.com"}, "issuer", "https://auth.example.com"),
        ({"BASE_URL": "https://auth.example.com"}, "cookie_secure", True),
        ({"BASE_URL": "http://127.0.0.1:9000"}, "base_url", "http://127.0.0.1:9000"),
        ({"LOG_LEVEL": "debug"}, "log_level", "debug"),
        ({"EXTRA_RESOURCES": "https://a https://b"}, "extra_resources", "https://a https://b"),
        ({"HOUSEKEEPING_BATCH": "200"}, "housekeeping_batch", 200),
        ({"HOUSEKEEPING_ROUNDS": "3"}, "housekeeping_rounds", 3),
        ({"base_url": "https://ignored.example.com"}, "base_url", "http://127.0.0.1:8000"),  # names are upper-case
    ],
)
def test_environment_values_are_converted(env: dict[str, str], attr: str, expected: object) -> None:
    assert getattr(load_settings(AuthzSettings, env), attr) == expected


def test_overrides_win_over_the_environment() -> None:
    s = load_settings(AuthzSettings, {"CODE_TTL": "30"}, code_ttl=45, session_ttl=None)
    assert s.code_ttl == 45
    assert s.session_ttl == 43200  # a None override is ignored


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("ACCESS_TOKEN_TTL", "abc"),
        ("ACCESS_TOKEN_TTL", "1.5"),
        ("ACCESS_TOKEN_TTL", "0"),
        ("ACCESS_TOKEN_TTL", "-5"),
        ("ID_TOKEN_TTL", "soon"),
        ("ID_TOKEN_TTL", "0"),
        ("CODE_TTL", "-1"),
        ("INTERACTION_TTL", "0"),
        ("SESSION_TTL", "x"),
        ("DB_POOL_MAX", "many"),
        ("LOG_LEVEL", "loud"),
        ("LOG_FORMAT", "xml"),
        ("HOUSEKEEPING_INTERVAL", "0"),
        ("HOUSEKEEPING_BATCH", "0"),
        ("HOUSEKEEPING_ROUNDS", "-1"),
        ("REVOKED_GRANT_RETENTION", "3600"),  # less than a day
    ],
)
def test_bad_value_is_a_settings_error_naming_the_variable(variable: str, value: str) -> None:
    with pytest.raises(SettingsError) as info:
        load_settings(AuthzSettings, {variable: value})
    assert variable in str(info.value)


@pytest.mark.parametrize(
    "base_url",
    [
        "http://127.0.0.1:8000/",  # trailing slash
        "https://auth.example.com/",
        "https://auth.example.com/oauth",  # path
        "https://auth.example.com?x=1",  # query
        "https://auth.example.com#f",  # fragment
        "ftp://auth.example.com",  # scheme
        "auth.example.com",  # not absolute
        "https://",
    ],
)
def test_base_url_that_is_not_a_bare_origin_is_refused(base_url: str) -> None:
    with pytest.raises(SettingsError):
        load_settings(AuthzSettings, {"BASE_URL": base_url})


@pytest.mark.parametrize("base_url", ["http://127.0.0.1:8000/", "https://auth.example.com/oauth", "ftp://a.example"])
def test_bad_base_url_error_names_the_variable(base_url: str) -> None:
    with pytest.raises(SettingsError) as info:
        load_settings(AuthzSettings, {"BASE_URL": base_url})
    assert "BASE_URL" in str(info.value)
