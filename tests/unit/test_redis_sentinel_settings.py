"""Issue 41, item 2: Redis with Sentinel as settings beside REDIS_URL, for every service
(BaseSettings) and the platform's runner. The client made from them is exercised against
real sentinels in tests/faults/test_redis_failover.py."""

from __future__ import annotations

import msgspec
import pytest

from courseschool.authz.settings import AuthzSettings
from courseschool.common.redis import SentinelRedis, SentinelTarget, create_redis, parse_sentinels
from courseschool.common.settings import BaseSettings, SettingsError, load_settings
from courseschool.discovery.settings import DiscoverySettings
from courseschool.platform.run import PlatformSettings, redis_settings
from courseschool.platform.run_settings import RUN_SETTINGS
from courseschool.resource_api.settings import ResourceSettings

SENTINEL = {
    "REDIS_URL": "redis://:secret@redis/3",
    "REDIS_SENTINEL_MASTER": "courseschool",
    "REDIS_SENTINELS": "10.0.0.1:26379, sentinel-b:26380,[fd00::3]:26381,sentinel-d",
}


@pytest.mark.parametrize("cls", [AuthzSettings, ResourceSettings, DiscoverySettings, PlatformSettings])
def test_every_service_reads_the_sentinels(cls: type) -> None:
    settings = load_settings(cls, SENTINEL)
    assert settings.redis_sentinel == SentinelTarget(
        "courseschool",
        (("10.0.0.1", 26379), ("sentinel-b", 26380), ("fd00::3", 26381), ("sentinel-d", 26379)),
    )


def test_a_process_without_redis_may_share_the_sentinel_settings() -> None:
    """The migration step reads no REDIS_URL; the services refuse to serve without one."""
    only = {k: v for k, v in SENTINEL.items() if k != "REDIS_URL"}
    assert load_settings(AuthzSettings, only).redis_sentinel is not None


def test_without_sentinels_redis_url_is_the_server() -> None:
    assert load_settings(AuthzSettings, {"REDIS_URL": "redis://redis:6379/0"}).redis_sentinel is None


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"REDIS_SENTINEL_MASTER": "courseschool", "REDIS_URL": "redis://r/0"}, "REDIS_SENTINELS"),
        ({"REDIS_SENTINELS": "s:26379", "REDIS_URL": "redis://r/0"}, "REDIS_SENTINEL_MASTER"),
        ({**SENTINEL, "REDIS_SENTINELS": "s:port"}, "'s:port' is not host:port"),
        ({**SENTINEL, "REDIS_SENTINELS": "s:70000"}, "'s:70000' is not host:port"),
        ({**SENTINEL, "REDIS_SENTINELS": " , "}, "no sentinel address"),
        ({**SENTINEL, "REDIS_URL": "unix:///run/redis.sock"}, "REDIS_URL: with Sentinel"),
    ],
)
def test_a_sentinel_setting_wrong_or_alone_stops_start_up(env: dict[str, str], named: str) -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(AuthzSettings, env)
    assert named in str(caught.value)


def test_the_runner_passes_them_to_the_services_and_says_so() -> None:
    assert "REDIS_SENTINEL_MASTER, REDIS_SENTINELS" in RUN_SETTINGS
    assert "REDIS_SENTINEL_PASSWORD, REDIS_SENTINEL_USERNAME, REDIS_SENTINEL_TLS" in RUN_SETTINGS


ASKED = {
    **SENTINEL,
    "REDIS_SENTINEL_USERNAME": "platform",
    "REDIS_SENTINEL_PASSWORD": "s3ntinel",
    "REDIS_SENTINEL_TLS": "1",
}


@pytest.mark.parametrize("cls", [AuthzSettings, ResourceSettings, DiscoverySettings, PlatformSettings])
def test_every_service_reads_how_the_sentinels_are_asked(cls: type) -> None:
    target = load_settings(cls, ASKED).redis_sentinel
    assert (target.username, target.password, target.tls) == ("platform", "s3ntinel", True)
    assert "s3ntinel" not in repr(target) and "password='***'" in repr(target)
    plain = load_settings(cls, SENTINEL).redis_sentinel
    assert (plain.username, plain.password, plain.tls) == (None, None, False)


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"REDIS_URL": "redis://r/0", "REDIS_SENTINEL_PASSWORD": "pw"}, "REDIS_SENTINEL_PASSWORD: how the sentinels"),
        ({"REDIS_URL": "redis://r/0", "REDIS_SENTINEL_TLS": "true"}, "REDIS_SENTINEL_TLS: how the sentinels"),
        ({**SENTINEL, "REDIS_SENTINEL_USERNAME": "platform"}, "REDIS_SENTINEL_USERNAME needs REDIS_SENTINEL_PASSWORD"),
        ({**SENTINEL, "REDIS_SENTINEL_TLS": "maybe"}, "REDIS_SENTINEL_TLS"),
        ({**SENTINEL, "REDIS_SENTINEL_PASSWORD": "change-me"}, "REDIS_SENTINEL_PASSWORD: the placeholder"),
    ],
)
def test_how_the_sentinels_are_asked_wrong_or_alone_stops_start_up(env: dict[str, str], named: str) -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(AuthzSettings, env)
    assert named in str(caught.value)


async def test_the_sentinels_are_asked_with_their_own_credentials_and_the_url_s_tls_options() -> None:
    """The master's password is not the sentinels'; with TLS, the URL's CA is theirs too.
    A sentinel that fails is not retried: the next one is asked."""
    target = SentinelTarget("courseschool", parse_sentinels("127.0.0.1:26395"), "platform", "s3ntinel", True)
    client = create_redis("rediss://:master-pw@ignored/5?ssl_ca_certs=/etc/ca.pem", target)
    try:
        assert client.sentinels is not None
        (sentinel,) = client.sentinels.sentinels
        asked = sentinel.connection_pool.connection_kwargs
        assert (asked["username"], asked["password"]) == ("platform", "s3ntinel")
        assert sentinel.connection_pool.connection_class.__name__ == "SSLConnection"
        assert asked["ssl_ca_certs"] == "/etc/ca.pem"
        assert asked["retry"].get_retries() == 0
        assert client.connection_pool.connection_kwargs["password"] == "master-pw"
    finally:
        await client.aclose()


@pytest.mark.parametrize("env", [SENTINEL, ASKED, {"REDIS_URL": "redis://r/0"}], ids=["sentinels", "asked", "none"])
def test_the_runner_gives_its_apps_every_redis_setting_as_set(env: dict[str, str]) -> None:
    """`platform run` builds the three apps itself: each Redis setting reaches them."""
    settings = load_settings(PlatformSettings, env)
    given = redis_settings(settings, "redis://embedded:1/0")
    assert set(given) == {f.name for f in msgspec.structs.fields(BaseSettings) if f.name.startswith("redis_")}
    apps = load_settings(AuthzSettings, {}, **given)
    assert apps.redis_sentinel == settings.redis_sentinel and apps.redis_url == "redis://embedded:1/0"


async def test_sentinels_without_credentials_are_asked_in_plain_text() -> None:
    client = create_redis("rediss://:master-pw@ignored/5", SentinelTarget("m", parse_sentinels("127.0.0.1:26395")))
    try:
        assert client.sentinels is not None
        (sentinel,) = client.sentinels.sentinels
        asked = sentinel.connection_pool.connection_kwargs
        assert asked.get("password") is None and asked.get("username") is None
        assert sentinel.connection_pool.connection_class.__name__ == "Connection"
    finally:
        await client.aclose()


async def test_the_client_takes_the_url_s_database_credentials_and_tls() -> None:
    """Nothing is connected here: what the pool will ask for, the sentinels where."""
    target = SentinelTarget("courseschool", parse_sentinels("127.0.0.1:26395"))
    client = create_redis("rediss://user:pw@ignored-host:1/5", target)
    try:
        assert isinstance(client, SentinelRedis) and client.sentinels is not None
        kwargs = client.connection_pool.connection_kwargs
        assert (kwargs["db"], kwargs["username"], kwargs["password"]) == (5, "user", "pw")
        assert "host" not in kwargs and "port" not in kwargs
        assert client.connection_pool.connection_class.__name__ == "SentinelManagedSSLConnection"
        sentinel = client.sentinels.sentinels[0].connection_pool.connection_kwargs
        assert (sentinel["host"], sentinel["port"]) == ("127.0.0.1", 26395)
    finally:
        await client.aclose()
