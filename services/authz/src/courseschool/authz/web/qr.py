"""QR codes drawn here, as inline SVG (segno): the authenticator app's secret never
leaves for a third-party image service, and the page loads nothing more."""

from __future__ import annotations

import io
import re

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
    # A viewBox instead of a fixed size, so the stylesheet's width scales the whole code
    # (quiet zone included) instead of cutting off its right and bottom.
    size = re.search(r'width="(\d+)" height="(\d+)"', svg)
    if size is not None:
        w, h = size.groups()
        svg = svg.replace(size.group(0), f'viewBox="0 0 {w} {h}"', 1)
    escaped = Markup.escape(label)
    # segno's SVG is made of numbers and fixed markup only; the label is escaped.
    return Markup(svg.replace("<svg ", f'<svg role="img" aria-label="{escaped}" focusable="false" ', 1))  # noqa: S704
