"""RFC 6749 §5.2: `error_description` holds only %x20-21 / %x23-5B / %x5D-7E (printable
ASCII without `"` and `\\`). The errors module checks it where an error is made, so a
description outside the set fails the test that makes it; text a caller sent goes
through `fit_description` first. A walk over the product source checks the texts no test
happens to reach."""

from __future__ import annotations

import ast
import base64
from pathlib import Path

import pytest

from courseschool.common import errors
from courseschool.common.bearer import basic_credentials, presented_token
from courseschool.common.errors import (
    InvalidClientError,
    InvalidGrantError,
    InvalidRequestError,
    OAuthError,
    PlatformError,
    ValidationFailedError,
    fit_description,
    invalid_description_characters,
)

from .product_source import PRODUCT, ROOT

ALLOWED = "".join(chr(c) for c in [0x20, 0x21, *range(0x23, 0x5C), *range(0x5D, 0x7F)])


def _error_classes() -> list[type[PlatformError]]:
    found: list[type[PlatformError]] = []
    pending: list[type[PlatformError]] = [PlatformError]
    while pending:
        cls = pending.pop()
        found.append(cls)
        pending.extend(cls.__subclasses__())
    return [c for c in found if c.__module__ == errors.__name__]


def test_every_allowed_character_is_accepted() -> None:
    assert InvalidRequestError(ALLOWED).description == ALLOWED
    assert invalid_description_characters(ALLOWED) == []


@pytest.mark.parametrize("cls", _error_classes(), ids=lambda c: c.__name__)
@pytest.mark.parametrize("bad", ['a "quoted" word', "a back\\slash", "RFC 6749 §5.2", "déjà", "two\nlines", "a\ttab"])
def test_a_description_outside_the_set_fails_where_the_error_is_made(cls: type[PlatformError], bad: str) -> None:
    if cls is ValidationFailedError:  # quotes the caller's document: fitted, not refused
        assert invalid_description_characters(cls(bad).description) == []
        return
    kwargs = {"scope": "x"} if cls is errors.InsufficientScopeError else {}
    kwargs |= {"retry_after": 1} if cls is errors.TooManyRequestsError else {}
    with pytest.raises(ValueError, match="RFC 6749"):
        cls(bad, **kwargs)  # type: ignore[arg-type]


def test_the_log_only_detail_and_the_page_advice_may_say_anything() -> None:
    err = InvalidGrantError("the refresh token is invalid", detail="grant «g-1» revoked", advice="Réessayez.")
    assert err.detail == "grant «g-1» revoked" and err.body() == {
        "error": "invalid_grant",
        "error_description": "the refresh token is invalid",
    }


def test_text_a_caller_sent_is_fitted_before_it_is_quoted() -> None:
    fitted = fit_description('scope "ü\\x"\n')
    assert fitted == "scope ???x??"
    assert InvalidRequestError(f"unknown {fitted}").description == "unknown scope ???x??"


def test_a_validators_message_quoting_the_document_is_fitted_by_its_error() -> None:
    err = ValidationFailedError('Object contains unknown field `naïve"`')
    assert err.description == "Object contains unknown field `na?ve?`"


def test_the_basic_credentials_refusal_is_plain_ascii() -> None:
    """It cited 'RFC 6749 §2.3.1' to every client: '§' is outside §5.2's set."""
    header = "Basic " + base64.b64encode(b"no-colon-here").decode()
    with pytest.raises(InvalidClientError) as info:
        basic_credentials(header)
    assert invalid_description_characters(info.value.description) == []
    assert "2.3.1" in info.value.description


def test_the_bearer_refusals_are_plain_ascii() -> None:
    for header in ("Token abc", "Bearer", "Bearer a b", "Basic !!!"):
        with pytest.raises(OAuthError) as info:
            presented_token(header)
        assert invalid_description_characters(info.value.description) == []


# -- every description written in the product's source ----------------------------------


def _modules() -> list[Path]:
    return sorted(p for base in PRODUCT for p in base.rglob("*.py"))


def _platform_error_names(trees: dict[Path, ast.Module]) -> set[str]:
    """PlatformError and every class of the product derived from it (by base name)."""
    names = {"PlatformError"}
    grew = True
    while grew:
        grew = False
        for tree in trees.values():
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef) and node.name not in names:
                    bases = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}
                    if bases & names:
                        names.add(node.name)
                        grew = True
    return names | {"basic_refusal"}


def _literal_text(arg: ast.expr, constants: dict[str, str]) -> str | None:
    """The text the source wrote for a description: a string, the literal parts of an
    f-string (what it interpolates is checked where it is made), or a module constant."""
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.JoinedStr):
        return "".join(v.value for v in arg.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
    if isinstance(arg, ast.Name):
        return constants.get(arg.id)
    return None


def test_every_description_in_the_source_is_inside_the_set() -> None:
    trees = {path: ast.parse(path.read_text(), str(path)) for path in _modules()}
    makers = _platform_error_names(trees)
    bad: list[str] = []
    for path, tree in trees.items():
        constants = {
            t.id: node.value.value
            for node in tree.body
            if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
            for t in node.targets
            if isinstance(t, ast.Name)
        }
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            if name not in makers:
                continue
            text = _literal_text(node.args[0], constants)
            if text is not None and invalid_description_characters(text):
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno}: {text!r}")
    assert not bad, "descriptions outside RFC 6749 §5.2's characters:\n" + "\n".join(bad)
