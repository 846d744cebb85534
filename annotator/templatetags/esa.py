"""Template tags of the ESA screen: the output with the annotator's spans marked by severity."""

from __future__ import annotations

from collections.abc import Sequence

from django import template
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from annotator.rendering import SpanRef, segments, to_browser_offset
from corpus.models import ErrorSpan
from corpus.protocols import esa

register = template.Library()


@register.simple_tag
def esa_output(text: str, spans: Sequence[ErrorSpan]) -> SafeString:
    """Return the output as consecutive pieces cut at span boundaries, each with `data-o` (its offset as the page
    counts it) so that a selection turns into exact offsets; a marked piece lists its spans and takes the most
    severe one's class. Every text goes through format_html: dataset and model text is always escaped."""
    located = [s for s in spans if s.start is not None]
    major = {s.pk for s in located if esa.severity_of_code(s.severity) == "major"}
    prefilled = {s.pk for s in located if getattr(s, "prefilled", False)}
    pieces = []
    for seg in segments(text, [SpanRef(s.pk, s.start, s.end) for s in located]):
        offset = to_browser_offset(text, seg.start)
        if not seg.span_ids:
            pieces.append(format_html('<span class="seg" data-o="{}">{}</span>', offset, seg.text))
            continue
        level = "major" if major.intersection(seg.span_ids) else "minor"
        classes = f"seg esa-mark esa-{level}" + (" esa-prefilled" if prefilled.intersection(seg.span_ids) else "")
        pieces.append(format_html('<mark class="{}" data-o="{}" data-added="{}" title="{}">{}</mark>', classes,
                                  offset, " ".join(map(str, seg.span_ids)), esa.SEVERITY_LABELS[level], seg.text))
    return format_html_join("", "{}", ((p,) for p in pieces))
