"""Model cards are Markdown (tables of figures from ``analysis report``): render them as HTML.

markdown-it-py with raw HTML off, so a card (uploaded through the admin) cannot put markup or
script into a page; its link checker refuses ``javascript:`` and ``data:`` links.
"""

from __future__ import annotations

from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

_RENDERER = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])


def card_html(text: str) -> SafeString:
    return mark_safe(_RENDERER.render(text or ""))  # noqa: S308 - raw HTML is escaped by the renderer
