from __future__ import annotations

from .flow import BASE_URL, Flow


async def test_code_flow_issues_tokens_and_userinfo(flow: Flow) -> None:
    reg = await flow.register()
    user = await flow.user("owner")
    callback, verifier, params = await flow.authorize(reg, user)
    assert callback["iss"] == BASE_URL
    assert callback["state"] == params["state"]
    response = await flow.exchange(reg, callback["code"], verifier)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["token_type"] == "Bearer"
    assert body["scope"] == "openid profile email courses:read"
    info = await flow.client.get("/api/oauth/userinfo", headers={"Authorization": f"Bearer {body['access_token']}"})
    assert info.status_code == 200, info.text
    assert info.json() == {
        "sub": user["id"],
        "name": "A Owner",
        "preferred_username": user["email"].split("@")[0],
        "email": user["email"],
        "email_verified": True,
    }
