"""The merged OpenAPI document, built from the generators exactly as the discovery
service builds it: complete (every operation and field described, every body with a
valid example), honest about the API (defaults optional, server-set fields read-only,
amounts in minor units, examples the API itself accepts) and without loose ends.
The linters and the generated TypeScript client run on the served document in
tests/e2e/test_openapi_tools.py."""

from __future__ import annotations

import copy
import json
import typing
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from courseschool.authz.openapi import authz_openapi
from courseschool.discovery.openapi import merge, merged_openapi
from courseschool.resource_api.areas import models as m
from courseschool.resource_api.areas.registry import AREA_SPECS
from courseschool.resource_api.areas.rules import validate_document
from courseschool.resource_api.openapi import resource_openapi

BASE = "https://school.example"
METHODS = ("get", "put", "post", "patch", "delete")
SERVER_SET = ("id", "school_id", "created_at", "updated_at")
# The browser endpoints, whose errors are HTML pages (never a redirect, never JSON).
PAGE_PATHS = (
    "/oauth/authorize",
    "/oauth/logout",
    "/oauth/signin",
    "/oauth/apps",
    "/oauth/apps/{grant_id}/remove",
    "/oauth/apps/remove-all",
    "/oauth/apps/{grant_id}/end",
    "/oauth/apps/{grant_id}/remove-app",
    "/oauth/school/apps",
    "/oauth/school/apps/confirm",
    "/oauth/school/apps/end",
    "/oauth/school/apps/block",
    "/oauth/school/apps/unblock",
    "/oauth/school/apps/policy",
    "/oauth/school/apps/approve",
    "/oauth/school/apps/decline",
    "/oauth/school/apps/withdraw",
    "/oauth/signin/second-step",
    "/oauth/security",
    "/oauth/security/totp",
    "/oauth/security/codes",
    "/oauth/security/confirm",
    "/oauth/security/remove-totp",
    "/oauth/security/renew-codes",
    "/oauth/school/security",
    "/oauth/school/people",
    "/oauth/security/passkeys/new",
    "/oauth/security/passkeys",
    "/oauth/security/passkeys/{passkey_id}/rename",
    "/oauth/security/passkeys/{passkey_id}/remove",
    "/oauth/signin/passkey",
    "/oauth/signin/second-step/passkey",
    "/oauth/account",
    "/oauth/account/password",
    "/oauth/account/sign-out-others",
    "/oauth/account/confirm",
    "/oauth/password/forgot",
    "/oauth/password/choose",
    "/oauth/password/done",
)


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    parts = [authz_openapi(BASE), resource_openapi(BASE, "Course School API")]
    # Through JSON, as it is served.
    return json.loads(msgspec.json.encode(merged_openapi(BASE, json.loads(msgspec.json.encode(parts)))))


def _operations(doc: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in doc["paths"].items():
        for method in METHODS:
            if method in item:
                yield path, method, item[method]


def _schemas(node: Any, where: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every object schema with properties, anywhere in the document."""
    if isinstance(node, dict):
        if isinstance(node.get("properties"), dict) and node.get("type") == "object":
            yield where, node
        for key, value in node.items():
            yield from _schemas(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _schemas(value, f"{where}/{index}")


def _validator(doc: dict[str, Any], schema: dict[str, Any]) -> Draft202012Validator:
    registry = Registry().with_resource("urn:doc", Resource.from_contents(doc, default_specification=DRAFT202012))
    rebased = json.loads(json.dumps(schema).replace('"#/components/', '"urn:doc#/components/'))
    return Draft202012Validator(rebased, registry=registry)


def test_every_operation_has_id_summary_description_declared_tags_and_security(doc: dict[str, Any]) -> None:
    declared = {t["name"]: t for t in doc["tags"]}
    assert all(t.get("description") for t in declared.values())
    used = set()
    for path, method, op in _operations(doc):
        where = f"{method.upper()} {path}"
        assert op.get("operationId") and op.get("summary") and op.get("description"), where
        assert op["tags"] and set(op["tags"]) <= set(declared), where
        used |= set(op["tags"])
        assert "security" in op, where
    assert used == set(declared), "a declared tag no operation uses"
    assert doc["info"]["license"] and doc["info"]["contact"] and doc["info"]["description"]


def test_every_body_and_response_has_an_example_the_schema_accepts(doc: dict[str, Any]) -> None:
    checked = 0
    for path, method, op in _operations(doc):
        where = f"{method.upper()} {path}"
        bodies = [("request", op["requestBody"])] if "requestBody" in op else []
        bodies += [(status, response) for status, response in op["responses"].items()]
        assert any(s.startswith(("2", "3")) for s in op["responses"]), where  # 303: the authorization endpoint
        for status, body in bodies:
            assert body.get("description"), (where, status)
            for media, content in body.get("content", {}).items():
                assert "example" in content, (where, status, media)
                if media == "application/json":
                    errors = list(_validator(doc, content["schema"]).iter_errors(content["example"]))
                    assert not errors, (where, status, errors[0].message)
                    checked += 1
        for param in op.get("parameters", []) + doc["paths"][path].get("parameters", []):
            assert param.get("description") and "example" in param, (where, param["name"])
    assert checked > 200


def test_every_error_response_is_the_error_shape_with_an_example(doc: dict[str, Any]) -> None:
    for path, method, op in _operations(doc):
        assert any(s.startswith("4") for s in op["responses"]), (method, path)
        for status, response in op["responses"].items():
            if status.startswith(("4", "5")) or status == "default":
                content = response["content"]
                if "text/html" in content:  # the browser endpoints' error pages, never a redirect
                    assert path in PAGE_PATHS and status in ("400", "403", "404", "409", "410", "429"), (path, status)
                    continue
                json_content = content["application/json"]
                assert json_content["schema"] == {"$ref": "#/components/schemas/Error"}, (method, path, status)
                assert json_content["example"]["error"], (method, path, status)


def test_every_property_of_every_schema_is_described(doc: dict[str, Any]) -> None:
    missing = [
        f"{where}/{name}"
        for where, schema in _schemas(doc)
        for name, prop in schema["properties"].items()
        if not prop.get("description")
    ]
    assert missing == []
    assert all(s.get("description") for s in doc["components"]["schemas"].values())


def test_no_unused_components_and_no_default_keyword_in_them(doc: dict[str, Any]) -> None:
    text = json.dumps({k: v for k, v in doc.items() if k != "components"})
    schemas = doc["components"]["schemas"]
    referenced: set[str] = set()
    frontier = {n for n in schemas if f'"#/components/schemas/{n}"' in text}
    while frontier:  # what the paths use, and what those use in turn
        name = frontier.pop()
        referenced.add(name)
        inner = json.dumps(schemas[name])
        frontier |= {n for n in schemas if f'"#/components/schemas/{n}"' in inner} - referenced
    assert set(schemas) - referenced == set()
    # A `default` on a named schema's property reads as "always present" to generators.
    assert '"default":' not in json.dumps(schemas)


@pytest.mark.parametrize("spec", [s for s in AREA_SPECS if s.model is not None], ids=lambda s: s.name)
def test_area_schemas_split_request_and_response(doc: dict[str, Any], spec: Any) -> None:
    schemas = doc["components"]["schemas"]
    name = spec.model.__name__
    fields = msgspec.structs.fields(spec.model)
    returned = schemas[name]
    # The item as returned: every field present, the server-set ones read-only.
    server_set = [f for f in SERVER_SET if f in returned["properties"]]
    assert server_set == (["updated_at"] if spec.kind == "singleton" else list(SERVER_SET))
    for field in server_set:
        prop = returned["properties"][field]
        assert prop["readOnly"] is True and "Set by the server" in prop["description"], field
    assert set(returned["required"]) == {f.name for f in fields} | (
        set(server_set) - {"updated_at"} if spec.kind == "singleton" else set(server_set)
    )
    # The bodies: a field with a default may be left out; the server-set ones are not there.
    if spec.kind == "collection" and spec.writable:
        create = schemas[name + "Create"]
        assert set(create["required"]) == {f.name for f in fields if f.required}
        assert set(create["properties"]) == {f.name for f in fields}
        for f in fields:
            if not f.required:
                assert (
                    "Default: `"
                    + json.dumps(
                        msgspec.to_builtins(f.default if f.default is not msgspec.NODEFAULT else f.default_factory())
                    )
                    in (create["properties"][f.name]["description"])
                ), f.name
    else:
        assert name + "Create" not in schemas
    if spec.writable:
        assert schemas[name + "Patch"]["required"] == []
        assert set(schemas[name + "Patch"]["properties"]) == {f.name for f in fields}
    else:
        assert name + "Patch" not in schemas


def _money_fields() -> list[tuple[str, str]]:
    out = []
    for model in {s.model for s in AREA_SPECS if s.model is not None} | {m.OrderItem}:
        for name, hint in typing.get_type_hints(model, include_extras=True).items():
            if typing.get_origin(hint) is typing.Annotated and m.Money.__metadata__[0] in hint.__metadata__:
                out.append((model.__name__, name))
    return out


def test_amounts_are_documented_as_integer_minor_units_with_their_currency(doc: dict[str, Any]) -> None:
    schemas = doc["components"]["schemas"]
    money = _money_fields()
    assert ("Course", "price") in money and ("OrderItem", "unit_price") in money and len(money) >= 7
    for model, field in money:
        for name in (model, model + "Create"):
            if name in schemas:
                prop = schemas[name]["properties"][field]
                currency = "the order's `currency`" if model == "OrderItem" else "`currency`"
                assert prop["type"] == "integer", (name, field)
                assert f"minor units of {currency}" in prop["description"], (name, field)
                assert "4900 is 49.00 EUR" in prop["description"], (name, field)
                assert model == "OrderItem" or "currency" in schemas[name]["properties"], (name, field)
    revenue = schemas["Figures"]["properties"]["revenue"]["items"]["properties"]["amount"]
    assert "minor units of `currency`" in revenue["description"]
    assert "minor units" in doc["info"]["description"]


def _example(doc: dict[str, Any], path: str, method: str, status: str | None = None) -> Any:
    op = doc["paths"][path][method]
    body = op["requestBody"] if status is None else op["responses"][status]
    return copy.deepcopy(body["content"]["application/json"]["example"])


@pytest.mark.parametrize("spec", [s for s in AREA_SPECS if s.model is not None], ids=lambda s: s.name)
def test_examples_pass_the_apis_own_validation(doc: dict[str, Any], spec: Any) -> None:
    """Schema-valid is not enough: the examples also keep the rules across fields
    (an order's total, a coupon's dates), as the API checks them."""
    path = f"/api/v1/{spec.path}"
    if spec.kind == "collection":
        returned = _example(doc, f"{path}/{{item_id}}", "get", "200")
        page = _example(doc, path, "get", "200")
        assert page["items"] == [returned]
    else:
        returned = _example(doc, path, "get", "200")
    stored = {k: v for k, v in returned.items() if k not in SERVER_SET}
    assert validate_document(spec, stored) == stored  # every field present, as the server returns it
    if spec.kind == "collection" and spec.writable:
        create = _example(doc, path, "post")
        assert set(create) == set(stored)
        validate_document(spec, create)
        patch = _example(doc, f"{path}/{{item_id}}", "patch")
        validate_document(spec, {**create, **patch})
    elif spec.writable:
        validate_document(spec, {**stored, **_example(doc, path, "patch")})


def test_merge_refuses_two_declarations_of_one_tag() -> None:
    one = {"tags": [{"name": "x", "description": "One thing"}]}
    other = {"tags": [{"name": "x", "description": "Another"}]}
    assert merge("T", "D", BASE, [one, one])["tags"] == one["tags"]
    with pytest.raises(ValueError, match="tag x"):
        merge("T", "D", BASE, [one, other])


def test_registration_requires_a_redirect_uri_and_token_fields_state_no_default(doc: dict[str, Any]) -> None:
    """The struct lets `redirect_uris` be absent; registration does not (400)."""
    metadata = doc["components"]["schemas"]["ClientMetadata"]
    assert metadata["required"] == ["redirect_uris"]
    assert metadata["properties"]["redirect_uris"]["minItems"] == 1
    token = doc["components"]["schemas"]["TokenResponse"]["properties"]
    assert not any("Default:" in prop["description"] for prop in token.values())
