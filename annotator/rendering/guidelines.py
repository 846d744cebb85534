"""Campaign guidelines: markdown rendered to sanitized HTML."""

from __future__ import annotations

_GUIDELINE_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "code", "em", "h1", "h2", "h3", "h4", "hr", "i", "kbd", "li", "ol",
    "p", "pre", "strong", "table", "tbody", "td", "th", "thead", "tr", "ul",
}


def markdown_html(text: str) -> str:
    """Return guideline markdown as sanitized HTML: raw HTML in the source is cleaned by nh3, so a guideline
    can format text but never run script or load anything."""
    import markdown
    import nh3

    html = markdown.markdown(text, extensions=["tables", "sane_lists"], output_format="html")
    return nh3.clean(html, tags=_GUIDELINE_TAGS, attributes={"a": {"href", "title"}, "th": {"align"},
                                                             "td": {"align"}},
                     url_schemes={"http", "https", "mailto"}, link_rel="noopener noreferrer")
