"""The ESA protocol's vocabulary: span severities, missing content, the 0-100 score and its keys, and the rule
that maps a machine span's severity onto Minor or Major when ESA^AI pre-fills an item.

ESA (Error Span Annotation, Kocmi et al. 2024): the annotator marks error spans as Minor or Major, may mark
content missing at the end of the output, and only then gives the segment a score from 0 to 100. ESA^AI (Zouhar,
Kocmi et al. 2025) is the same screen opened with an automatic system's spans already marked, which the annotator
keeps, deletes, resizes or re-grades. Django-free, like the other protocols: the screen, the services, the
statistics, the Pearmut reader and writer and the docs all derive from here. The help texts are ours.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from corpus.protocols import prefill
from corpus.protocols.errors import ProtocolError
from corpus.protocols.mqm import SEVERITY_CODES as MQM_CODES
from corpus.protocols.opennlgauge import Term

SEVERITIES: tuple[Term, ...] = (
    Term("minor", "Minor", "w", "A real imperfection that does not change the meaning or hinder reading."),
    Term("major", "Major", "e", "Changes the meaning, misleads, or makes the text hard to understand."),
)
SEVERITY_VALUES: tuple[str, ...] = tuple(t.value for t in SEVERITIES)
SEVERITY_LABELS: dict[str, str] = {t.value: t.label for t in SEVERITIES}
# Stored on ErrorSpan.severity's 1-5 scale as MQM stores the same two severities, so that every export and
# figure that shows a span's severity orders ESA and MQM spans alike.
SEVERITY_CODES: dict[str, int] = {value: MQM_CODES[value] for value in SEVERITY_VALUES}

# Content missing from the output has no characters to mark: the screen shows a token after the text (Appraise
# and Pearmut do the same), and the error is stored as a span without offsets whose category says so.
MISSING = "Missing content"
MISSING_TOKEN = "[missing]"
MISSING_KEY = "i"  # "o" picks an occurrence on the screens that judge machine spans

SCORE_MIN, SCORE_MAX = 0, 100
SCORE_STEP, SCORE_PAGE = 1, 10  # arrows move the slider by one point, PageUp/PageDown by ten
SCORE_LABELS: tuple[tuple[int, str], ...] = (
    (0, "no meaning preserved"), (33, "some meaning preserved"), (66, "most meaning preserved, few errors"),
    (100, "perfect meaning and grammar"),
)  # the slider's anchors, as ESA's instructions word the scale

KEYS: dict[str, str] = {
    **{t.key: f"severity {t.label} for the selection or the focused span" for t in SEVERITIES},
    MISSING_KEY: f"mark content missing at the end ({MISSING_TOKEN}); then a severity key",
    "r": "resize the focused span (Shift+arrows, then Enter)",
    "x": "delete the focused span",
}  # besides the screen's own keys: j/k focus spans, s selects, d says the spans are done, f finishes


def severity_of_code(code: int | None) -> str:
    """The ESA severity stored as `code` (Minor for any code ESA never writes)."""
    return "major" if code == SEVERITY_CODES["major"] else "minor"


def severity_value(text: object) -> str | None:
    """The severity a form or a file names (any case, or its stored code), None when unknown."""
    key = str(text).strip().casefold()
    if key in SEVERITY_CODES:
        return key
    for value, code in SEVERITY_CODES.items():
        if key == str(code):
            return value
    return None


def check_score(value: object, where: str = "score") -> int:
    """A whole score from 0 to 100; ProtocolError naming `where` otherwise."""
    try:
        number = int(str(value).strip())
    except ValueError:
        raise ProtocolError(f"{where}: a whole number from {SCORE_MIN} to {SCORE_MAX}, not {value!r}",
                            field=where) from None
    if not SCORE_MIN <= number <= SCORE_MAX:
        raise ProtocolError(f"{where}: a whole number from {SCORE_MIN} to {SCORE_MAX}, not {number}", field=where)
    return number


def clean_options(value: Any) -> dict[str, Any]:
    """{"major_from": 1-5}: the machine severity from which a pre-filled span is Major (corpus.protocols.prefill;
    default 4)."""
    if value in (None, "", {}):
        return {}
    if not isinstance(value, Mapping):
        raise ProtocolError("protocol_options: an object, e.g. {\"major_from\": 4}", field="protocol_options")
    unknown = sorted(set(value) - {"major_from"})
    if unknown:
        raise ProtocolError(f"protocol_options: unknown option(s) {', '.join(unknown)} (known: major_from)",
                            field="protocol_options")
    threshold = value.get("major_from")
    if threshold is None:
        return {}
    return {"major_from": prefill.clean_major_from(threshold)}
