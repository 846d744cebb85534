"""Template tags of the annotation screen: the output text with machine and added spans highlighted."""

from __future__ import annotations

from collections.abc import Sequence

from django import template
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from annotator.rendering import SpanRef, segments, to_browser_offset
from annotator.selectors.spans import ErrorRow
from corpus.models import ErrorSpan

register = template.Library()


@register.simple_tag
def highlighted_output(text: str, rows: Sequence[ErrorRow], added: Sequence[ErrorSpan]) -> SafeString:
    """Return the output as consecutive elements, one per piece between span boundaries.

    Each piece carries `data-o` (its offset in the plain text), so the page can turn a DOM selection into
    exact offsets; machine pieces list their span ids and error numbers, added pieces their span ids. Every
    text goes through format_html, so dataset and LLM text is always escaped."""
    machine = {r.handle: r.number for r in rows if r.has_offsets}
    styles = {r.handle: r.style for r in rows if r.has_offsets}
    refs = [SpanRef(r.handle, r.span.start, r.span.end) for r in rows if r.has_offsets]
    # Added spans get negative ids so both kinds share one cut of the text.
    refs += [SpanRef(-s.pk, s.start, s.end) for s in added if s.start is not None]
    unprimed = {s.pk for s in added if getattr(s, "unprimed", False)}
    pieces = []
    for seg in segments(text, refs):
        spans = [i for i in seg.span_ids if i > 0]
        mine = [-i for i in seg.span_ids if i < 0]
        if not spans and not mine:
            pieces.append(format_html('<span class="seg" data-o="{}">{}</span>', to_browser_offset(text, seg.start),
                                      seg.text))
            continue
        classes = "seg hl" if spans else "seg"
        if spans:
            # Each neutral label has its own colour and underline; a piece two labels share says so too.
            looks = sorted({styles[i] for i in spans})
            classes += f" ev-{looks[0]}" + (" hl-overlap" if len(looks) > 1 else "")
        if mine:
            classes += " hl-added"
            if any(i in unprimed for i in mine):
                classes += " hl-unprimed"  # marked before the reveal: its own style
        numbers = " ".join(str(machine[i]) for i in spans)
        title = f"Errors {numbers.replace(' ', ', ')}" if spans else "Your added error"
        pieces.append(format_html(
            '<mark class="{}" data-o="{}" data-spans="{}" data-added="{}" title="{}">{}</mark>',
            classes, to_browser_offset(text, seg.start), " ".join(map(str, spans)), " ".join(map(str, mine)), title,
            seg.text,
        ))
    return format_html_join("", "{}", ((p,) for p in pieces))


@register.simple_tag
def source_highlighted(text: str, spans: Sequence[ErrorSpan]) -> SafeString:
    """Return the output with one annotation's spans marked and numbered (the item browser): each piece lists
    the numbers of the spans covering it, so overlaps inside one source stay readable. Escaped like above."""
    numbers = {s.pk: n for n, s in enumerate(spans, start=1)}
    refs = [SpanRef(s.pk, s.start, s.end) for s in spans if s.start is not None]
    pieces = []
    for seg in segments(text, refs):
        if not seg.span_ids:
            pieces.append(format_html("<span>{}</span>", seg.text))
            continue
        label = ", ".join(str(numbers[i]) for i in seg.span_ids)
        pieces.append(format_html('<mark class="hl{}" title="Span {}">{}</mark>',
                                  " hl-overlap" if len(seg.span_ids) > 1 else "", label, seg.text))
    return format_html_join("", "{}", ((p,) for p in pieces))


@register.filter
def browser_length(text: str) -> int:
    """The output's length as the page counts it (CR LF is one character there)."""
    return to_browser_offset(text, len(text))


@register.simple_tag
def chip_buttons(chips: Sequence, icon: str = "✓") -> SafeString:
    """Return the verdict chips of one group as buttons; built in Python because a page has dozens of them and
    the save answer re-renders a card on every click. The pressed chip says so in text and aria-pressed. The
    page's script posts `field` = `value` to the card's save URL (static/js/annotate/saves.js)."""
    return format_html_join(
        "",
        '<button type="button" class="chip{}" aria-pressed="{}" data-key="{}" data-field="{}" data-value="{}">'
        "{}{} <kbd>{}</kbd></button>",
        (
            (" flag" if chip.choice.value == "" else "", "true" if chip.pressed else "false", chip.choice.key,
             chip.choice.field, chip.post_value,
             format_html('<span aria-hidden="true">{} </span>', icon) if chip.pressed else "",
             chip.choice.label, chip.choice.key)
            for chip in chips
        ),
    )
