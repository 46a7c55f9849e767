"""The link for students: the address where they open the same explorer, and its QR code."""

from __future__ import annotations

import html
from urllib.parse import urlsplit

import ipywidgets as widgets

from .._extras import extra
from ..core.arguments import instance

__all__ = [
    "SHARE_URL_VARIABLE",
    "check_share_url",
    "qr_svg",
    "share_view",
]

SHARE_URL_VARIABLE = "TINYINIT_SHARE_URL"


def check_share_url(share_url: str) -> str:
    """`share_url` if it is an http(s) address with a host, else a ValueError that says so.

    >>> check_share_url("https://mybinder.org/v2/gh/OWNER/tinyinit/HEAD")
    'https://mybinder.org/v2/gh/OWNER/tinyinit/HEAD'
    """
    accepted = "an http:// or https:// address with a host, e.g. https://hub.example.edu/..."
    url = instance("share_url", share_url, str, accepted).strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc or " " in url:
        raise ValueError(f"share_url must be {accepted}, got {share_url!r}")
    return url


def qr_svg(share_url: str) -> str:
    """The QR code of `share_url` as inline SVG (segno, medium error correction), sized by CSS.

    >>> svg = qr_svg("https://example.org/")
    >>> svg.startswith("<svg") and 'viewBox="0 0 29 29"' in svg
    True
    """
    with extra("present", "the QR code"):
        import segno

    code = segno.make(check_share_url(share_url), error="m")
    return code.svg_inline(scale=1, border=2, omitsize=True, dark="#000", light="#fff")


def share_view(share_url: str) -> widgets.Widget:
    """The students' link: its QR code as large as the plot, and the address in large type."""
    url = check_share_url(share_url)
    qr = widgets.HTML(qr_svg(url), tooltip="Scan to open the same explorer")
    qr.add_class("tinyinit-qr")
    link = widgets.HTML(
        "Open the same explorer on your own computer:<br>"
        f'<a href="{html.escape(url)}" target="_blank"><b>{html.escape(url)}</b></a>',
        tooltip="The address students open: the same demonstrations, live on their machines",
    )
    link.add_class("tinyinit-share")
    view = widgets.HBox([qr, link], layout=widgets.Layout(align_items="center"))
    view.add_class("tinyinit-share-view")
    return view
