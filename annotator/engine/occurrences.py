"""Where an ambiguous span could be: every occurrence of its located text, and the expert's pick among them.

The aligner flags a span ambiguous when its location occurs more than once and nothing in the explanation
decides; the expert reading the output decides instead. A pick is stored as text in the judgment's audit
trail ("" = the machine's offsets, "none" = the location is not in the output, "start-end" = an occurrence),
so that undo restores it like any other field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from errors import UserError

PICK_NONE = "none"
"""The expert says none of the candidates is the place the explanation means."""

# Offsets are stored in `integer` columns: ten ASCII digits at most. `str.isdigit()` would accept "²" and other
# scripts' digits, which `int()` then refuses.
_PICK = re.compile(r"([0-9]{1,10})-([0-9]{1,10})")


class OccurrenceError(UserError):
    """A pick that names no candidate: index out of range, a span that is not ambiguous, an unreadable pick."""


@dataclass(frozen=True)
class Occurrence:
    start: int
    end: int


def occurrences(output: str, start: int, end: int) -> list[Occurrence]:
    """Return every exact occurrence of output[start:end] in `output`, in text order (overlaps included).

    The machine's own offsets are always among them, so a candidate list is never empty for a placed span."""
    if not 0 <= start < end <= len(output):
        raise OccurrenceError(f"offsets {start}-{end} are outside the output ({len(output)} characters)",
                              field=("start", "end"))
    needle = output[start:end]
    found: list[Occurrence] = []
    at = output.find(needle)
    while at != -1:
        found.append(Occurrence(at, at + len(needle)))
        at = output.find(needle, at + 1)
    return found


def pick_text(pick: Occurrence | None, *, none: bool = False) -> str:
    """The audit trail's text form of a pick: '' (machine's offsets), 'none', or 'start-end'."""
    if none:
        return PICK_NONE
    return "" if pick is None else f"{pick.start}-{pick.end}"


def parse_pick(text: str) -> tuple[bool, Occurrence | None]:
    """Read a pick's text form back: (picked, occurrence); ('', ...) is no pick, 'none' is picked without one."""
    text = (text or "").strip()
    if not text:
        return False, None
    if text == PICK_NONE:
        return True, None
    found = _PICK.fullmatch(text)
    if found is None or int(found[1]) >= int(found[2]):
        shown = text if len(text) <= 40 else f"{text[:40]}... ({len(text)} characters)"
        raise OccurrenceError(f"occurrence: {shown!r} is not 'none' or 'start-end' (digits 0-9, start before end)",
                              field="occurrence")
    return True, Occurrence(int(found[1]), int(found[2]))


def effective_offsets(machine: tuple[int | None, int | None], pick: str) -> tuple[int | None, int | None]:
    """The offsets that count for one expert: the picked occurrence, none, or the machine's when not picked."""
    picked, where = parse_pick(pick)
    if not picked:
        return machine
    return (None, None) if where is None else (where.start, where.end)
