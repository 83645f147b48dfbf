"""Security review finding 7 and issue 24: look-alike client names. A self-registered or
metadata-document client cannot take the platform's name or an integration's (compared
by the UTS #39 confusable skeleton, after NFKC, in any case, without marks) nor hide
control or bidirectional characters in its name, and the sign-in and consent pages say
whose word a name is."""

from __future__ import annotations

import re
from typing import Any

import pytest

from courseschool.authz.endpoints.admin import AdminService

from ..support.tls import HttpsServer
from . import cimd
from .flow import BASE_URL, REDIRECT_URI, Flow, pkce_pair

HTTPS_CALLBACK = "https://partner.example.com/oauth/callback"
SELF_DECLARED = "not verified by your school"
ADMINISTRATOR_MADE = "An app your school's administrator set up."


async def integration(flow: Flow, name: str) -> dict[str, Any]:
    made = await AdminService(flow.client.app.state.authz.administration).create_integration(
        name=name, redirect_uris=[HTTPS_CALLBACK]
    )
    return {"client_id": made["client_id"], "client_secret": made["client_secret"], "redirect_uris": [HTTPS_CALLBACK]}


async def register(flow: Flow, name: str) -> Any:
    return await flow.client.post("/api/oauth/register", json={"client_name": name, "redirect_uris": [REDIRECT_URI]})


async def consent_page(flow: Flow, reg: dict[str, Any]) -> str:
    """The consent page this client's authorization request shows a signed-in person."""
    _, challenge = pkce_pair()
    start = await flow.start(flow.authorize_params(reg, challenge))
    assert start.status_code == 303, start.text
    interaction = start.headers["location"]
    assert (await flow.login(interaction, await flow.user())).status_code == 303
    page, _ = await flow.page(interaction)
    assert page.status_code == 200 and "Allow" in page.text
    return page.text


@pytest.mark.parametrize(
    "name",
    [
        "CRM",
        "crm",
        "CRM (Verified)",
        "CRM (verified)",
        "CRM - Official",
        "[Official] CRM",
        "CRM ✓",
        "Verified: C.R.M.",
        "\uff23\uff32\uff2d",  # full-width letters: NFKC makes them ASCII
        "C R M",
        "\u0421RM",  # CYRILLIC CAPITAL LETTER ES
        "\u0441rm",  # its small letter, in lower case
        "C\u0301R\u0308M",  # combining marks
        "CRRN",  # "rn" reads as "m"
    ],
)
async def test_an_integrations_name_cannot_be_registered(flow: Flow, name: str) -> None:
    await integration(flow, "CRM")
    response = await register(flow, name)
    assert response.status_code == 400, response.text
    assert response.json()["error"] == "invalid_client_metadata"
    assert "integration" in response.json()["error_description"]
    assert "confusable skeleton" in response.json()["error_description"]
    assert await flow.count("authz_clients WHERE NOT is_integration") == 0


@pytest.mark.parametrize(
    "name",
    [
        "Course School",
        "course school",  # case
        "C\u043eurse Sch\u043e\u043el",  # CYRILLIC SMALL LETTER O
        "\u0421ourse School",  # CYRILLIC CAPITAL LETTER ES
        "\uff23\uff4f\uff55\uff52\uff53\uff45 \uff33\uff43\uff48\uff4f\uff4f\uff4c",  # full-width
        "Co\u0308urse\u0301 Scho\u0323ol",  # combining marks
        "C0urse Sch00l (Official)",
    ],
)
async def test_the_platforms_name_cannot_be_registered(flow: Flow, name: str) -> None:
    response = await register(flow, name)
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["error"] == "invalid_client_metadata"
    assert "Course School, the platform's own name" in body["error_description"]
    assert await flow.count("authz_clients") == 0


async def test_the_platforms_name_cannot_be_taken_by_an_update(flow: Flow) -> None:
    """RFC 7592 §2.2: the same rule for a registration's replacement metadata."""
    reg = await flow.register(client_name="Helper")
    body = {"client_id": reg["client_id"], "client_name": "\u0421ourse School", "redirect_uris": [REDIRECT_URI]}
    response = await flow.client.put(
        reg["registration_client_uri"].removeprefix(BASE_URL),
        headers={"Authorization": f"Bearer {reg['registration_access_token']}"},
        json=body,
    )
    assert response.status_code == 400 and response.json()["error"] == "invalid_client_metadata", response.text
    assert await flow.count("authz_clients WHERE client_name = 'Helper'") == 1


@pytest.mark.parametrize("name", ["CRM Helper", "My CRM", "Verified CRM Sync"])
async def test_other_names_stay_free(flow: Flow, name: str) -> None:
    await integration(flow, "CRM")
    response = await register(flow, name)
    assert response.status_code == 201, response.text
    assert response.json()["client_name"] == name


@pytest.mark.parametrize(
    "name",
    [
        "\u202eMRC",  # right-to-left override: shows as "CRM"
        "Good\u2066App\u2069",  # isolates
        "CRM\x1b[2J",  # an ANSI sequence
        "C\u200bRM",  # zero-width space
        "App\x07",
        "App\x85",  # C1 control (next line)
        "App\ue000",  # private use
        "Two\u2028Lines",
    ],
)
async def test_hidden_characters_in_client_name_are_refused(flow: Flow, name: str) -> None:
    response = await register(flow, name)
    assert response.status_code == 400, response.text
    assert response.json()["error"] == "invalid_client_metadata"
    assert "control" in response.json()["error_description"]
    assert await flow.count("authz_clients") == 0


async def sign_in_page(flow: Flow, reg: dict[str, Any]) -> str:
    """The sign-in page this client's authorization request shows a person not signed in."""
    _, challenge = pkce_pair()
    start = await flow.start(flow.authorize_params(reg, challenge))
    assert start.status_code == 303, start.text
    page, _ = await flow.page(start.headers["location"])
    assert page.status_code == 200 and 'name="password"' in page.text
    return page.text


async def test_sign_in_page_marks_a_self_registered_name_as_self_declared(flow: Flow) -> None:
    """Issue 24: the sign-in page tells the same truth as the consent page."""
    reg = await flow.register(client_name="Acme Helper")
    page = await sign_in_page(flow, reg)
    assert "An app that calls itself <strong>«<bdi" in page and "Acme Helper" in page and SELF_DECLARED in page
    assert "Acme Helper</bdi></strong> wants" not in page and ADMINISTRATOR_MADE not in page
    assert re.search(r'<input id="email"[^>]* autofocus>', page)  # focus starts in the email field


async def test_sign_in_page_names_an_integration_as_the_administrators(flow: Flow) -> None:
    reg = await integration(flow, "Partner CRM")
    page = await sign_in_page(flow, reg)
    assert '<strong><bdi class="client">Partner CRM</bdi></strong> wants to connect' in page
    assert ADMINISTRATOR_MADE in page and SELF_DECLARED not in page and "calls itself" not in page


async def test_sign_in_page_marks_a_metadata_documents_name_as_self_declared(cimd_flow: Flow, site) -> None:
    server, _ = site
    reg = publish(server, "/agent-signin.json", "Agent Smith")
    page = await sign_in_page(cimd_flow, reg)
    assert "An app that calls itself" in page and SELF_DECLARED in page and "Verified domain" in page


async def test_consent_page_marks_a_self_registered_name_as_self_declared(flow: Flow) -> None:
    reg = await flow.register(client_name="Acme Helper")
    page = await consent_page(flow, reg)
    assert "It calls itself" in page and "«<bdi" in page and "Acme Helper" in page and SELF_DECLARED in page
    assert ADMINISTRATOR_MADE not in page


async def test_consent_page_says_an_integration_was_set_up_by_the_administrator(flow: Flow) -> None:
    reg = await integration(flow, "Partner CRM")
    page = await consent_page(flow, reg)
    assert ADMINISTRATOR_MADE in page and "Partner CRM" in page
    assert SELF_DECLARED not in page and "calls itself" not in page


# -- Client ID Metadata Documents: the same rules for their names ---------------------------------


def publish(server: HttpsServer, path: str, name: str) -> dict[str, Any]:
    """A metadata document with this client_name (the shared helper); the client as a flow uses it."""
    url = cimd.publish(server, path, client_name=name)
    return {"client_id": url, "redirect_uris": [cimd.LOOPBACK]}


async def test_metadata_document_name_with_hidden_characters_is_refused(cimd_flow: Flow, site) -> None:
    server, _ = site
    reg = publish(server, "/rlo.json", "\u202eMRC")
    from .test_client_metadata_documents import _refused

    assert "control" in await _refused(cimd_flow, reg["client_id"])  # one page for every cause; the cause is logged
    assert await cimd_flow.count("authz_clients") == 0


async def test_metadata_document_name_is_shown_as_self_declared(cimd_flow: Flow, site) -> None:
    server, _ = site
    reg = publish(server, "/agent.json", "Agent Smith")
    page = await consent_page(cimd_flow, reg)
    assert "It calls itself" in page and SELF_DECLARED in page and "Verified domain" in page
    assert ADMINISTRATOR_MADE not in page


async def test_a_metadata_document_may_not_take_an_integrations_name(cimd_flow, site) -> None:
    from .test_client_metadata_documents import _refused

    await cimd_flow.integration("Partner CRM")
    server, _ = site
    reg = publish(server, "/crm.json", "Partner CRM (Verified)")
    assert "name of an integration" in await _refused(cimd_flow, reg["client_id"])
    look_alike = publish(server, "/crm2.json", "P\u0430rtner \u0421RM")  # Cyrillic a and Es
    assert "name of an integration" in await _refused(cimd_flow, look_alike["client_id"])
    assert await cimd_flow.count("authz_clients WHERE client_id LIKE 'https://%'") == 0


@pytest.mark.parametrize(
    "name", ["Course School", "\uff43\uff4f\uff55\uff52\uff53\uff45 school", "\u0421\u043eurse Sch\u043eol"]
)
async def test_a_metadata_document_may_not_take_the_platforms_name(cimd_flow: Flow, site, name: str) -> None:
    from .test_client_metadata_documents import _refused

    server, _ = site
    reg = publish(server, "/platform.json", name)
    assert "the platform's own name" in await _refused(cimd_flow, reg["client_id"])
    assert await cimd_flow.count("authz_clients WHERE client_id LIKE 'https://%'") == 0
