"""`/auth.md`: the human-readable walkthrough of the authentication flow.

The text lives in `templates/auth.md`; the parts that must never drift from the
code are generated here: the scope table (from the shared scope registry), the
roles that can grant them, and the table of API areas (from the resource API's
area registry). Placeholders are `{{ name }}`; nothing else in the template is
special, so the braces of shell and JSON in it are safe.
"""

from __future__ import annotations

import re
from importlib import resources
from urllib.parse import quote

from courseschool.common.dpop import ALGORITHMS as DPOP_ALGORITHMS
from courseschool.common.scopes import AREAS, IDENTITY_SCOPES, ROLE_CAPS, ROLES, SCOPES
from courseschool.resource_api.areas.registry import AREA_SPECS, AreaSpec

API = "/api/v1"
PLACEHOLDER = re.compile(r"\{\{\s*([a-z_]+)\s*\}\}")
NONE = "—"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def scope_table() -> str:
    """One row per identity scope, one per area (its `:read` / `:write` pair, as the
    interface document lists them), each access described in its own words."""
    rows = ["| Scope | What it grants |", "| --- | --- |"]
    rows += [f"| `{s.name}` | {_cell(s.description)} |" for s in IDENTITY_SCOPES]
    for area in AREAS:
        scopes = [s for s in SCOPES if s.area == area.name]
        names = " / ".join(f"`{s.name}`" for s in scopes)
        said = []
        if "read" in area.accesses:
            said.append(f"`:read`: see {area.sees}")
        if "write" in area.accesses:
            said.append(f"`:write`: {area.changes}")
        rows.append(f"| {names} | {_cell('; '.join(said))} |")
    return "\n".join(rows)


def role_summary() -> str:
    """One line per role: the scopes a user of that role can grant."""
    identity = {s.name for s in IDENTITY_SCOPES}
    reads = {s.name for s in SCOPES if s.access == "read"}
    lines = []
    for role in ROLES:
        cap = ROLE_CAPS[role]
        if cap >= {s.name for s in SCOPES}:
            what = "every scope"
        else:
            parts = []
            if identity <= cap:
                parts.append("the identity scopes (" + ", ".join(f"`{s.name}`" for s in IDENTITY_SCOPES) + ")")
            rest = [s.name for s in SCOPES if s.name in cap and s.name not in identity]
            if reads <= cap:
                parts.append("every `:read` scope")
                rest = [n for n in rest if n not in reads]
            parts += [f"`{n}`" for n in rest]
            what = ", ".join(parts) if parts else "nothing"
        lines.append(f"- **{role}**: {what}")
    return "\n".join(lines)


def _anonymous(spec: AreaSpec) -> str:
    if spec.public:
        hidden = ", ".join(f"`{f}`" for f in spec.private_fields)
        without = f", without {hidden}" if hidden else ""
        return f"yes: published items only{without} (filter with `?school=<slug>`)"
    if spec.kind == "upload":
        return f"downloads only: `GET {API}/{spec.path}/{{id}}`"
    return "no (403)"


def area_table() -> str:
    rows = ["| Path | Read scope | Write scope | Anonymous? |", "| --- | --- | --- | --- |"]
    for spec in AREA_SPECS:
        read = f"`{spec.read_scope}`" if spec.readable else NONE
        write = f"`{spec.write_scope}`" if spec.writable else f"{NONE} (read-only)"
        if not spec.readable:
            read = f"{NONE} (write-only)"
        rows.append(f"| `{API}/{spec.path}` | {read} | {write} | {_anonymous(spec)} |")
    return "\n".join(rows)


def _template() -> str:
    return resources.files(__package__).joinpath("templates/auth.md").read_text(encoding="utf-8")


def render_walkthrough(base_url: str) -> bytes:
    """The walkthrough for the platform at `base_url`, as UTF-8 Markdown."""
    base_url = base_url.rstrip("/")
    values = {
        "base_url": base_url,
        "issuer_urlencoded": quote(base_url, safe=""),  # the issuer is the base URL
        "scope_table": scope_table(),
        "role_summary": role_summary(),
        "area_table": area_table(),
        "dpop_algs": " ".join(DPOP_ALGORITHMS),
    }

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            raise KeyError(f"templates/auth.md names an unknown placeholder {{{{ {name} }}}}")
        return values[name]

    return PLACEHOLDER.sub(fill, _template()).encode("utf-8")
