"""Pre-fill: which machine spans open an item as the annotator's own errors, and how severe each is.

One rule for every protocol that pre-fills (MQM, ESA^AI), so that the two cannot drift: a machine severity on
the 1-5 scale of `major_from` or more is Major, anything else Minor (a span without a severity too); only located
spans are copied; where a protocol's spans may not overlap (ESA), the most severe of overlapping machine spans is
copied (then the earlier, then the longer) and the others are left out. A campaign sets its own threshold with
protocol_options.major_from (1-5, default 4). Django-free: the services give the spans and store the copies.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from corpus.protocols.errors import ProtocolError

MAJOR_FROM = 4
OPTION = "major_from"


@dataclass(frozen=True)
class MachineSpan:
    """What the rule needs of a machine span: its key (to find it again), place and severity (1-5 or None)."""

    key: int
    start: int | None
    end: int | None
    severity: int | None


def severity_from_machine(code: int | None, major_from: int = MAJOR_FROM) -> str:
    """"major" for a machine severity of `major_from` or more, else "minor"."""
    return "major" if code is not None and code >= major_from else "minor"


def major_from(options: Mapping[str, Any] | None) -> int:
    return int((options or {}).get(OPTION) or MAJOR_FROM)


def clean_major_from(value: object) -> int:
    """protocol_options.major_from: a whole machine severity from 1 to 5; ProtocolError naming it otherwise."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 5:
        raise ProtocolError(f"protocol_options.{OPTION}: a machine severity from 1 to 5, not {value!r}",
                            field=f"protocol_options.{OPTION}")
    return value


def _overlap(a: MachineSpan, b: tuple[int, int]) -> bool:
    """Whether two half-open ranges share a character (stats.overlap.shared_chars's test; corpus sits below
    stats, so it cannot import it)."""
    return a.start < b[1] and b[0] < a.end


def prefill_choice(spans: Iterable[MachineSpan], *, major_from: int = MAJOR_FROM,
                   overlapping: bool) -> list[tuple[MachineSpan, str]]:
    """The machine spans to copy with the severity each gets, in the order they are copied. `overlapping`:
    whether the protocol's spans may overlap (MQM's may: every error is its own row; ESA's may not)."""
    placed = [s for s in spans if s.start is not None and s.end is not None]
    if overlapping:
        chosen = sorted(placed, key=lambda s: (s.start, s.end, s.key))
    else:
        chosen, taken = [], []
        for span in sorted(placed, key=lambda s: (-(s.severity or 0), s.start, -(s.end - s.start), s.key)):
            if not any(_overlap(span, place) for place in taken):
                chosen.append(span)
                taken.append((span.start, span.end))
    return [(span, severity_from_machine(span.severity, major_from)) for span in chosen]
