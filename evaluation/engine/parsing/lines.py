"""Line-level recognisers: markdown framing, error headers, field names alone on a line."""

from __future__ import annotations

import re

from evaluation.engine.parsing.fields import FIELD as _FIELD
from evaluation.engine.parsing.fields import FIELD_NAMES as _FIELD_NAMES
from evaluation.engine.parsing.fields import canonical_field as _canonical_field
from evaluation.engine.parsing.fields import strip_fences as _strip_fences

# markdown decorations in front of a line: headers, quote marks, list bullets, emphasis markers
_LEAD_DECOR = re.compile(r"^\s*(?:#{1,6}\s*|>\s*|[-+•]\s+|\*\s+)*")
_EMPH = re.compile(r"\*\*|__|(?<!\w)[*_]|[*_](?!\w)")

_ERROR_HEADER = re.compile(
    r"^(?:errors?|issues?|problems?)\b\s*(?:#|no\.?|number)?\s*(?P<num>\d+)?\s*(?:[:.)\-–—]\s*)?(?P<rest>.*)$",
    re.IGNORECASE,
)
_NUMBERED = re.compile(r"^(?P<num>\d+)\s*[.)]\s*(?P<rest>.*)$")
_NO_ERRORS = re.compile(
    r"^(?:errors?\s*[:\-]\s*)?(?:"
    r"no\s+errors?(?:\s+(?:were\s+|was\s+)?(?:found|identified|detected|present))?"
    r"|there\s+(?:are|were|is)\s+no\s+errors?"
    r"|i\s+(?:found|identified|detected)\s+no\s+errors?"
    r"|i\s+(?:did\s+not|didn't|could\s+not|couldn't)\s+(?:find|identify|detect)\s+any\s+errors?"
    r"|none"
    r")\b",
    re.IGNORECASE,
)


# a JSON-looking line: "location": "12 threes",  (a broken JSON answer is still read line by line)
_JSON_LINE = re.compile(r'^\s*"(?P<key>[A-Za-z][A-Za-z _-]{0,40})"\s*:\s*(?P<value>.*?)\s*,?\s*$')
# a field name alone on its line ("### Explanation of the score"), its value on the lines that follow
_BARE_FIELD = re.compile(
    r"^(?P<name>" + "|".join(f"(?:{rx})" for rx, _ in _FIELD_NAMES) + r")\s*[:：]?$", re.IGNORECASE
)


def strip_emphasis(text: str) -> str:
    return _EMPH.sub("", text)


def _clean_line(line: str) -> str:
    """Strip markdown decorations that only frame a line, keeping its words; a "key": value line of JSON
    becomes key: value."""
    stripped = _LEAD_DECOR.sub("", line)
    json_line = _JSON_LINE.match(stripped)
    if json_line:
        value = json_line.group("value").rstrip(",").strip()
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1]
        if value in ("[", "{"):
            value = ""
        stripped = f"{json_line.group('key').replace('_', ' ')}: {value}"
    stripped = strip_emphasis(stripped).strip()
    bare = _BARE_FIELD.match(stripped)
    if bare and not _ERROR_HEADER.match(stripped):
        return f"{bare.group('name')}:"
    return stripped


def _split_lines(text: str) -> list[str]:
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    return _strip_fences(text).split("\n")


def _header(line: str, following: str, in_tail: bool) -> tuple[str, int | None, str] | None:
    """Classify a cleaned line as an error header ("header", number, inline field text) or a
    no-error declaration ("no_errors", None, ""); None for anything else."""
    match = _ERROR_HEADER.match(line)
    if match:
        num = int(match.group("num")) if match.group("num") else None
        rest = match.group("rest").strip()
        if _FIELD.match(rest):
            return "header", num, rest
        if not rest:
            return "header", num, ""
        if num is None:
            return ("no_errors", None, "") if _NO_ERRORS.match(rest) else None
        if len(rest.split()) <= 10 and _FIELD.match(following):  # "Error 1: Wrong number" + fields
            return "header", num, ""
        return None
    match = _NUMBERED.match(line)
    if match and not in_tail:
        rest = match.group("rest").strip()
        if _FIELD.match(rest):
            return "header", int(match.group("num")), rest
        following_field = _FIELD.match(following)
        if not rest or (
            following_field and _canonical_field(following_field.group("name")) == "location"
            and len(rest.split()) <= 10
        ):
            return "header", int(match.group("num")), ""
    return None
