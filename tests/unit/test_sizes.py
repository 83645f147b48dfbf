"""Sizes a newcomer can read (issue 27, item 8): no product module over 300 lines, no
class over 150, no logic function over 60. A module that grows past them is split by
responsibility. Only data written as code (an OpenAPI document's paths, the demo
school's content) may be longer, and only when listed below with the reason. The bench
is held to the same limits (issue 43, item 6: split by section)."""

from __future__ import annotations

import ast

from .product_source import PRODUCT, ROOT

MAX_MODULE, MAX_CLASS, MAX_FUNCTION = 300, 150, 60
# The bench's Python (bench/node_modules, the peer's npm packages, is not ours).
BENCH = ROOT / "bench"

# "<module path relative to ROOT>::<qualified name>" of functions that are data tables:
# they return one literal (an OpenAPI path item, its examples) and hold no logic.
DATA_FUNCTIONS = {
    # The OpenAPI descriptions of the authorization server's endpoints: literal path
    # items, each operation's parameters, bodies and examples.
    "services/authz/src/courseschool/authz/openapi/__init__.py::authz_openapi",
    "services/authz/src/courseschool/authz/openapi/account.py::_apps",
    "services/authz/src/courseschool/authz/openapi/oversight.py::oversight_paths",
    "services/authz/src/courseschool/authz/openapi/registration.py::configuration_paths",
    "services/authz/src/courseschool/authz/openapi/security.py::security_paths",
    "services/authz/src/courseschool/authz/openapi/tokens.py::_token_paths",
    # The discovery service's own paths in the merged document.
    "services/discovery/src/courseschool/discovery/openapi.py::discovery_paths",
    # The resource API's path items for a collection and for its computed areas.
    "services/resource-api/src/courseschool/resource_api/openapi/areas.py::_collection",
    "services/resource-api/src/courseschool/resource_api/openapi/computed.py::_storage",
}


def _span(node: ast.AST) -> int:
    assert isinstance(node, ast.stmt) and node.end_lineno is not None
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    return node.end_lineno - first + 1


def _walk(node: ast.AST, prefix: str, found: dict[str, tuple[str, int]]) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.ClassDef):
            name = f"{prefix}{child.name}"
            found[name] = ("class", _span(child))
            _walk(child, f"{name}.", found)
        elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            name = f"{prefix}{child.name}"
            found[name] = ("function", _span(child))
            _walk(child, f"{name}.", found)
        else:
            _walk(child, prefix, found)


def _oversized() -> dict[str, str]:
    """Every module, class and function over its limit: its key -> what it measures."""
    over: dict[str, str] = {}
    for base in (*PRODUCT, BENCH):
        for path in sorted(base.rglob("*.py")):
            if "node_modules" in path.relative_to(base).parts:
                continue
            module = str(path.relative_to(ROOT))
            text = path.read_text()
            lines = len(text.splitlines())
            if lines > MAX_MODULE:
                over[module] = f"module of {lines} lines (at most {MAX_MODULE})"
            found: dict[str, tuple[str, int]] = {}
            _walk(ast.parse(text, module), "", found)
            for name, (kind, size) in found.items():
                limit = MAX_CLASS if kind == "class" else MAX_FUNCTION
                if size > limit:
                    over[f"{module}::{name}"] = f"{kind} of {size} lines (at most {limit})"
    return over


def test_no_module_class_or_logic_function_is_over_its_limit() -> None:
    over = {k: v for k, v in _oversized().items() if k not in DATA_FUNCTIONS}
    assert not over, "split by responsibility:\n" + "\n".join(f"{k}: {v}" for k, v in sorted(over.items()))


def test_every_exemption_is_still_needed() -> None:
    over = _oversized()
    stale = sorted(DATA_FUNCTIONS - set(over))
    assert not stale, f"within the limits now: drop them from the lists: {stale}"
