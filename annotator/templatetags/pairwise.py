"""Template tags of the side-by-side preference screen: an output with the judge's spans marked."""

from __future__ import annotations

from collections.abc import Sequence

from django import template
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from annotator.rendering import SpanRef, segments, to_browser_offset
from corpus.models import ErrorSpan

register = template.Library()


@register.simple_tag
def pair_output(text: str, spans: Sequence[ErrorSpan]) -> SafeString:
    """The output as pieces cut at span boundaries, each with `data-o` (its offset as the page counts it) so that
    a selection turns into exact offsets; marked pieces name their spans. Every text is escaped by format_html."""
    pieces = []
    for seg in segments(text, [SpanRef(s.pk, s.start, s.end) for s in spans if s.start is not None]):
        offset = to_browser_offset(text, seg.start)
        if not seg.span_ids:
            pieces.append(format_html('<span class="seg" data-o="{}">{}</span>', offset, seg.text))
        else:
            pieces.append(format_html('<mark class="seg pair-mark" data-o="{}" data-added="{}">{}</mark>', offset,
                                      " ".join(map(str, seg.span_ids)), seg.text))
    return format_html_join("", "{}", ((p,) for p in pieces))
