"""QR codes drawn here, as inline SVG (segno): the authenticator app's secret never
leaves for a third-party image service, and the page loads nothing more."""

from __future__ import annotations

import io

import segno
from markupsafe import Markup


def qr_svg(data: str, *, label: str) -> Markup:
    """`data` as an SVG QR code, dark on light whatever the page's theme (scanners need
    it), labelled for assistive technology."""
    out = io.BytesIO()
    segno.make(data, error="m").save(
        out,
        kind="svg",
        xmldecl=False,
        svgns=True,
        svgclass="qr",
        lineclass=None,
        scale=5,
        border=4,
        dark="#000000",
        light="#ffffff",
        title=None,
    )
    svg = out.getvalue().decode()
    escaped = Markup.escape(label)
    # segno's SVG is made of numbers and fixed markup only; the label is escaped.
    return Markup(svg.replace("<svg ", f'<svg role="img" aria-label="{escaped}" focusable="false" ', 1))  # noqa: S704
