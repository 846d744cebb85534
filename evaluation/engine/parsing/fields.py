"""The field vocabulary of an LLM answer ("Location:", "Severity level:", ...), for the text and JSON readers."""

from __future__ import annotations

import re

FENCE = re.compile(r"^\s*(```|~~~|‘‘‘|'''|\"\"\")[\w-]*\s*$")

FIELD_NAMES: list[tuple[str, str]] = [
    # (regex, canonical field); longer names first so "Explanation of the score" beats "Explanation"
    (r"explanation\s+(?:of|for)\s+(?:the\s+)?(?:overall\s+)?score", "score_explanation"),
    (r"(?:overall\s+)?score\s+explanation", "score_explanation"),
    (r"justification(?:\s+(?:of|for)\s+(?:the\s+)?score)?", "score_explanation"),
    (r"(?:overall|final|total)\s+(?:score|rating|assessment|grade)", "score"),
    (r"score|rating", "score"),
    (r"(?:error\s+)?location|span|quote|position", "location"),
    (r"(?:error\s+)?explanation|reason(?:ing)?|description|issue", "explanation"),
    (r"(?:error\s+)?severity(?:\s+level)?|severity\s+score", "severity"),
]
FIELD = re.compile(
    r"^(?P<name>" + "|".join(f"(?:{rx})" for rx, _ in FIELD_NAMES) + r")\s*(?:\(\s*[^)]*\))?\s*"
    r"(?:[:：]|\s[-–—]\s|=)\s*(?P<value>.*)$",
    re.IGNORECASE,
)
_FIELD_CANON = [(re.compile(rf"^(?:{rx})$", re.IGNORECASE), canon) for rx, canon in FIELD_NAMES]

# fields some models add to an error: read into the explanation (corrections) or named as not read
EXTRA_FIELD = re.compile(
    r"^(?P<name>(?:error\s+)?(?:category|type|kind|tag|label|dimension|aspect|confidence|correction|"
    r"correct(?:ed)?\s+(?:value|text|version|information)|suggest(?:ed|ion)(?:\s+(?:fix|correction))?|"
    r"fix|evidence|source|reference))\s*[:：]\s*\S",
    re.IGNORECASE,
)
CORRECTION_FIELD = re.compile(r"^(?:error\s+)?(?:correct|suggest|fix|evidence|source|reference)", re.IGNORECASE)

def canonical_field(name: str) -> str:
    name = " ".join(name.split())
    for rx, canon in _FIELD_CANON:
        if rx.match(name):
            return canon
    return "explanation"


def strip_fences(text: str) -> str:
    lines = [ln for ln in text.splitlines() if not FENCE.match(ln)]
    return "\n".join(lines)
