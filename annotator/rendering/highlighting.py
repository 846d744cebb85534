"""Span highlighting: cut an output at span boundaries, and group spans that mark the same place (plain data)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from stats.overlap import shared_chars


@dataclass(frozen=True)
class SpanRef:
    """A span to highlight: its id and half-open character offsets into the output."""

    id: int
    start: int
    end: int


@dataclass
class Segment:
    start: int
    end: int
    text: str
    span_ids: tuple[int, ...]


def segments(text: str, spans: Iterable[SpanRef]) -> list[Segment]:
    """Cut `text` at every span boundary; each piece lists the spans covering it (overlaps allowed)."""
    valid = [s for s in spans if 0 <= s.start < s.end <= len(text)]
    cuts = sorted({0, len(text), *(s.start for s in valid), *(s.end for s in valid)})
    pieces: list[Segment] = []
    for a, b in zip(cuts, cuts[1:], strict=False):
        if a == b:
            continue
        covering = tuple(s.id for s in valid if s.start <= a and b <= s.end)
        pieces.append(Segment(start=a, end=b, text=text[a:b], span_ids=covering))
    return pieces


def group_spans(spans: Sequence[SpanRef], min_share: float = 0.5) -> list[list[int]]:
    """Group spans that mark the same place: each joins the first group whose anchor it overlaps by at
    least `min_share` of the shorter of the two. Groups come out in text order; ids keep input order within."""
    groups: list[tuple[SpanRef, list[int]]] = []
    for span in sorted(spans, key=lambda s: (s.start, s.end)):
        for anchor, members in groups:
            shorter = min(anchor.end - anchor.start, span.end - span.start)
            if shorter > 0 and shared_chars((anchor.start, anchor.end), (span.start, span.end)) >= min_share * shorter:
                members.append(span.id)
                break
        else:
            groups.append((span, [span.id]))
    return [members for _, members in groups]
