"""What an area's document must satisfy beyond its model's types: the cross-field rules
the areas of `registry.py` name, and the one validation every write goes through (the
model, then the area's rule, then no NUL anywhere). Also the PATCH body's type."""

from __future__ import annotations

import functools
import typing
from collections.abc import Callable
from typing import Any, Protocol

import msgspec
from msgspec import UNSET, Struct, UnsetType


class Ruled(Protocol):
    """What validation reads of an area: its model and its cross-field rule (each
    `registry.AreaSpec` has both; the registry names the rules of this module, so this
    module does not name the registry)."""

    @property
    def model(self) -> type[Struct] | None: ...

    @property
    def check(self) -> Callable[[dict[str, Any]], None] | None: ...


class RuleError(ValueError):
    """A value breaks a rule that spans fields (answered 422)."""


@functools.cache
def patch_type(model: type[Struct]) -> type[Struct]:
    """The model with every field optional: what a PATCH body may hold."""
    hints = typing.get_type_hints(model, include_extras=True)
    fields = [(f, hints[f] | UnsetType, UNSET) for f in model.__struct_fields__]
    return msgspec.defstruct(f"{model.__name__}Patch", fields, forbid_unknown_fields=True, kw_only=True)


def validate_document(spec: Ruled, data: dict[str, Any]) -> dict[str, Any]:
    """The area's model, then its cross-field rule; the JSON-ready document.
    Raises msgspec.ValidationError or RuleError."""
    assert spec.model is not None
    item = msgspec.convert(data, spec.model)
    if spec.check is not None:
        spec.check(msgspec.structs.asdict(item))
    document = msgspec.to_builtins(item)
    _no_nul(document)
    return document


def _no_nul(value: Any) -> None:
    """Postgres text cannot hold U+0000; refuse it as bad input rather than fail later."""
    if isinstance(value, str):
        if "\x00" in value:
            raise RuleError("text must not contain NUL (U+0000) characters")
    elif isinstance(value, dict):
        for item in value.values():
            _no_nul(item)
    elif isinstance(value, list):
        for item in value:
            _no_nul(item)


def dates_in_order(start: str, end: str) -> Callable[[dict[str, Any]], None]:
    def check(item: dict[str, Any]) -> None:
        if item.get(start) and item.get(end) and item[end] < item[start]:
            raise RuleError(f"{end} must not be before {start}")

    return check


def order_adds_up(item: dict[str, Any]) -> None:
    lines = sum(i.quantity * i.unit_price for i in item["items"])
    if item["subtotal"] != lines:
        raise RuleError("subtotal must equal the sum of quantity x unit_price over the items")
    if item["total"] != item["subtotal"] - item["discount"]:
        raise RuleError("total must equal subtotal minus discount")


def coupon_makes_sense(item: dict[str, Any]) -> None:
    dates_in_order("valid_from", "valid_until")(item)
    if item["discount_type"] == "percent" and item["amount"] > 100:
        raise RuleError("a percent discount is at most 100")
    if item["discount_type"] == "fixed" and item["currency"] is None:
        raise RuleError("a fixed discount needs a currency")
