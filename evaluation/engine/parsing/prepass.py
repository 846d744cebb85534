"""Rewrite the layouts real models use instead of ours into our "Error N: / Location: ..." text.

Three layouts are rewritten here, each only when present: numbered field labels ("Error location 1:",
"Explanation for error 2:", "Severity 1: Major"), "Major errors:" / "Minor errors:" groups of bullets,
and markdown tables whose header names our fields. Everything else passes through untouched for the
block parser.
"""

from __future__ import annotations

import re

from evaluation.engine.parsing.fields import FIELD
from evaluation.engine.parsing.lines import _LEAD_DECOR, strip_emphasis

_NAMES: list[tuple[str, str]] = [
    (r"(?:error\s+)?(?:location|span|quote)", "Location"),
    (r"(?:error\s+)?(?:explanation|reason(?:ing)?|description|rationale)", "Explanation"),
    (r"(?:error\s+)?severity(?:\s+level)?|major\s*/\s*minor", "Severity"),
    (r"(?:error\s+)?(?:type|aspect|category|dimension|kind)", "Category"),
    (r"(?:suggested\s+)?(?:correction|fix|suggestion)", "Correction"),
    (r"score\s+reduction|penalty|points?\s+deducted", "Score reduction"),
]
_NAME_RX = "|".join(f"(?:{rx})" for rx, _ in _NAMES)
# "Error location 1:", "Explanation for error 2:", "Severity 1 -", "Location (1):", "Error 3 location:"
_NUMBERED_LABEL = re.compile(
    rf"^(?:(?P<name>{_NAME_RX})\s*(?:(?:for|of)\s+)?(?:(?:error|issue)\s*)?[#(]?\s*(?P<num>\d+)\s*\)?"
    rf"|(?:error|issue)\s*#?\s*(?P<num2>\d+)\s*(?:'s\s+)?(?P<name2>{_NAME_RX}))"
    r"\s*(?:[:：]|\s[-–—]\s)\s*(?P<value>.*)$",
    re.IGNORECASE,
)
_UNNUMBERED_SEVERITY = re.compile(r"^major\s*/\s*minor\s*[:：]\s*(?P<value>.*)$", re.IGNORECASE)
_ERROR_HEADER_LINE = re.compile(r"^(?:errors?|issues?)\s*#?\s*\d+\b", re.IGNORECASE)
_GROUP = re.compile(
    r"^(?P<level>critical|major|minor|severe|serious|moderate|medium|high|low|small)"
    r"(?:[-\s]+(?:severity|level|impact))?\s+(?:errors?|issues?|mistakes?|problems?)\s*(?:\(\s*\d+\s*\))?"
    r"\s*[:：]?\s*(?P<rest>.*)$",
    re.IGNORECASE,
)
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+\s*[.)])\s+(?P<item>.+)$")
_TABLE_ROW = re.compile(r"^\s*\|(?P<cells>.*)\|\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
_COLUMN = [
    (re.compile(r"^(?:error\s+)?(?:location|span|quote|text|error(?:\s+text)?|erroneous\s+text)$", re.I), "Location"),
    (re.compile(r"^(?:error\s+)?(?:explanation|reason|description|issue|justification)$", re.I), "Explanation"),
    (re.compile(r"^(?:error\s+)?severity(?:\s+level)?(?:\s*\(.*\))?$", re.I), "Severity"),
    (re.compile(r"^(?:error\s+)?(?:type|category|aspect)$", re.I), "Category"),
]


def _plain(line: str) -> str:
    return strip_emphasis(_LEAD_DECOR.sub("", line)).strip()


def _canon(name: str) -> str:
    name = " ".join(name.split())
    for rx, canon in _NAMES:
        if re.fullmatch(rx, name, re.IGNORECASE):
            return canon
    return "Explanation"


def _starts_something(plain: str) -> bool:
    return bool(
        _NUMBERED_LABEL.match(plain) or FIELD.match(plain) or _ERROR_HEADER_LINE.match(plain)
        or _GROUP.match(plain) or _TABLE_ROW.match(plain)
    )


def numbered_labels(lines: list[str], notes: list[str]) -> list[str]:
    """Gather fields labelled with an error number into one block per number, wherever they stand."""
    plains = [_plain(ln) for ln in lines]
    if sum(1 for p in plains if _NUMBERED_LABEL.match(p)) < 1:
        return lines
    blocks: dict[int, list[tuple[str, list[str]]]] = {}
    rest: list[str] = []
    insert_at: int | None = None
    target: list[str] | None = None
    dropped: set[str] = set()
    for line, plain in zip(lines, plains, strict=True):
        match = _NUMBERED_LABEL.match(plain)
        if match:
            num = int(match.group("num") or match.group("num2"))
            name = _canon(match.group("name") or match.group("name2"))
            if insert_at is None:
                insert_at = len(rest)
            if name == "Score reduction":
                dropped.add(name.lower())
                target = None
                continue
            value = [match.group("value").strip()]
            blocks.setdefault(num, []).append((name, value))
            target = value
            continue
        severity = _UNNUMBERED_SEVERITY.match(plain)
        if severity and blocks:
            value = [severity.group("value").strip()]
            blocks[list(blocks)[-1]].append(("Severity", value))
            target = value
            continue
        if _ERROR_HEADER_LINE.match(plain) and not FIELD.match(plain):
            target = None  # an "Error 2:" header above numbered fields: the numbers say it already
            continue
        if not plain:
            if target is not None and any(target):
                target = None
            continue
        if target is not None and not _starts_something(plain):
            target.append(plain)
            continue
        target = None
        rest.append(line)
    if dropped:
        notes.append(f"field(s) not read: {', '.join(sorted(dropped))}")
    out: list[str] = []
    for num, fields in blocks.items():
        out.append(f"Error {num}:")
        out.extend(f"{name}: {' '.join(v for v in value if v)}" for name, value in fields)
    at = insert_at if insert_at is not None else len(rest)
    return [*rest[:at], *out, "", *rest[at:]]


def _split_item(item: str) -> tuple[str, str]:
    """Return (location, explanation) of a bullet: a leading quote is the location, else the part before
    the first colon or dash."""
    item = strip_emphasis(item).strip()
    # the closing quote is the one a separator follows, so quotes and apostrophes inside the span stay
    quoted = re.match(
        r'^(?P<q>["“‘\'`«])(?P<loc>.+?)["”’\'`»](?P<rest>(?=\s*(?:[:\-–—,;]|is\b|was\b|->|→|$)).*)$', item
    )
    if quoted:
        rest = re.sub(r"^\s*(?:[:\-–—,;]|is|was|->|→)\s*", "", quoted.group("rest")).strip()
        loc = quoted.group("loc")
        return (f'"{loc}"' if '"' not in loc else loc), rest
    parts = re.split(r"\s*(?::|\s[-–—]\s)\s*", item, maxsplit=1)
    if len(parts) == 2:
        return parts[0], parts[1]
    return item, ""


def severity_groups(lines: list[str], notes: list[str]) -> list[str]:
    """Rewrite "Major errors:" / "Minor errors:" groups of bullets into numbered error blocks."""
    plains = [_plain(ln) for ln in lines]
    if not any(_GROUP.match(p) for p in plains):
        return lines
    out: list[str] = []
    level: str | None = None
    count = 0
    for index, (line, plain) in enumerate(zip(lines, plains, strict=True)):
        group = _GROUP.match(plain)
        if group:
            level = group.group("level").lower()
            rest = group.group("rest").strip()
            following = next((p for p in plains[index + 1 :] if p), "")
            if FIELD.match(following) and not _GROUP.match(following):
                # "**Major error:** wrong score" titling an error whose fields follow: a header, not an item
                count += 1
                out.extend([f"Error {count}:", f"Severity: {level}"])
                continue
            if rest and not re.fullmatch(r"(?:none|no\b.*|n/?a|-|0)\.?", rest, re.IGNORECASE):
                count += 1
                loc, why = _split_item(rest)
                out.extend([f"Error {count}:", f"Location: {loc}", f"Explanation: {why}", f"Severity: {level}"])
            elif rest:
                out.append(f"No {level} errors.")
            continue
        bullet = _BULLET.match(line)
        if level is not None and bullet:
            item = bullet.group("item").strip()
            if re.fullmatch(r"(?:none|no\b.*|n/?a)\.?", _plain(item), re.IGNORECASE):
                out.append(f"No {level} errors.")
                continue
            if FIELD.match(_plain(item)):
                # a bullet of fields ("- Location: ...") opens a block; its other fields follow as lines
                count += 1
                out.extend([f"Error {count}:", _plain(item), f"Severity: {level}"])
                continue
            count += 1
            loc, why = _split_item(item)
            out.extend([f"Error {count}:", f"Location: {loc}", f"Explanation: {why}", f"Severity: {level}"])
            continue
        if level is not None and plain and not FIELD.match(plain) and not line.startswith((" ", "\t")):
            level = None  # prose after the groups ends them
        out.append(line)
    notes.append("errors given in severity groups")
    return out


def tables(lines: list[str], notes: list[str]) -> list[str]:
    """Rewrite a markdown table whose header names our fields into error blocks."""
    out: list[str] = []
    i = 0
    count = 0
    while i < len(lines):
        head = _TABLE_ROW.match(lines[i])
        if head and i + 1 < len(lines) and _TABLE_RULE.match(lines[i + 1]):
            columns = [_column(strip_emphasis(c).strip()) for c in _cells(head.group("cells"))]
            if "Location" in columns:
                i += 2
                while i < len(lines) and (row := _TABLE_ROW.match(lines[i])):
                    cells = _cells(row.group("cells"))
                    count += 1
                    out.append(f"Error {count}:")
                    for name, cell in zip(columns, cells, strict=False):
                        if name is not None:
                            out.append(f"{name}: {cell.strip()}")
                    i += 1
                notes.append("errors given in a table")
                continue
        out.append(lines[i])
        i += 1
    return out


def _cells(row: str) -> list[str]:
    return [c.replace("\\|", "|") for c in re.split(r"(?<!\\)\|", row)]


def _column(name: str) -> str | None:
    for rx, canon in _COLUMN:
        if rx.match(name):
            return canon
    return None


def rewrite(text: str) -> tuple[str, list[str]]:
    """Return the answer with the layouts above rewritten into ours, and notes on what was rewritten."""
    notes: list[str] = []
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    lines = tables(lines, notes)
    lines = severity_groups(lines, notes)
    lines = numbered_labels(lines, notes)
    return "\n".join(lines), notes
