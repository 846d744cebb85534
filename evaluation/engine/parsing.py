"""Tolerant parsers for annotator, supervisor and distilled LLM answers (never raise on any text)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Literal

from evaluation.engine.answer_fields import CORRECTION_FIELD as _CORRECTION_FIELD
from evaluation.engine.answer_fields import EXTRA_FIELD as _EXTRA_FIELD
from evaluation.engine.answer_fields import FIELD as _FIELD
from evaluation.engine.answer_fields import FIELD_NAMES as _FIELD_NAMES
from evaluation.engine.answer_fields import canonical_field as _canonical_field
from evaluation.engine.answer_fields import strip_fences as _strip_fences
from evaluation.engine.answer_json import json_answer
from evaluation.engine.location_notes import pick_in

LABELS: tuple[str, ...] = ("Unacceptable", "Poor", "Fair", "Good", "Excellent")
_LABEL_BY_LOWER = {label.lower(): label for label in LABELS}

Status = Literal["ok", "partial", "failed"]


@dataclass
class ParsedError:
    number: int | None
    location: str | None  # cleaned location, None when the answer gives no span (omission, "None", ...)
    location_raw: str
    explanation: str
    severity: int | None  # 1..5
    severity_raw: str
    problems: list[str] = field(default_factory=list)


@dataclass
class ParsedAnswer:
    errors: list[ParsedError] = field(default_factory=list)
    score_label: str | None = None  # one of LABELS
    score: float | None = None  # 1..5
    score_explanation: str = ""
    no_errors_declared: bool = False
    problems: list[str] = field(default_factory=list)
    status: Status = "failed"
    score100: float | None = None  # only the distilled evaluator's 0-100 score


def label_to_score(label: str) -> float:
    """Return 1..5 for a label (case-insensitive); ValueError for anything else."""
    canonical = _LABEL_BY_LOWER.get(label.strip().lower())
    if canonical is None:
        raise ValueError(f"not a score label: {label!r}")
    return float(LABELS.index(canonical) + 1)


def score_to_label(score: float) -> str:
    """Return the label of a 1..5 score, rounding halves up (3.5 -> Good) and clamping to the scale."""
    if math.isnan(score):
        raise ValueError("score is NaN")
    index = int(math.floor(score + 0.5))
    return LABELS[min(5, max(1, index)) - 1]


# ---------------------------------------------------------------------------------------------
# line-level recognisers

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

_SEVERITY_WORDS: list[tuple[str, int]] = [
    (r"very\s+high|critical|catastrophic|extreme", 5),
    (r"very\s+low|negligible|trivial|neutral|minimal|insignificant", 1),
    (r"high|major|severe|serious|significant", 4),
    (r"medium|moderate|intermediate", 3),
    (r"low|minor|small|slight", 2),
]

# a Location value that gives no span; the keyword must stand alone or be followed by a remark
_NO_LOCATION = re.compile(
    r"^[\s(\[]*(?:"
    r"(?:omission|omitted|missing|not\s+present)\b.*"
    r"|(?:none|n/?a|null|nil|-+|—|not\s+applicable|no\s+(?:specific\s+)?(?:location|span)"
    r"|(?:the\s+)?(?:entire|whole|overall)\s+(?:text|summary|response|story|answer|output|translation"
    r"|simplified\s+text|passage))"
    r"[\s)\].]*(?:[(:\-–—,;].*)?"
    r")$",
    re.IGNORECASE | re.DOTALL,
)
# what may follow a quoted location and count as a comment about it (rather than more output text)
_COMMENT_AFTER_QUOTE = re.compile(r"^(?:[(\[:;,\-–—]|(?:is|was|are|which|this|that|because|since)\b)")
_QUOTE_PAIRS = {'"': '"', "“": "”", "”": "”", "„": "“", "‘": "’", "'": "'", "`": "`", "«": "»", "‹": "›"}
_ELLIPSIS_JOIN = re.compile(r"^\s*(?:\.{3}|…|,|;|and|\+|/)\s*$", re.IGNORECASE)
_LOCATION_PREFIX = re.compile(
    r"^(?:(?:in|at)\s+)?(?:the\s+)?(?:(?:first|second|third|fourth|fifth|last|final|opening|closing)\s+)?"
    r"(?:phrase|word|words|sentence|span|term|clause|part|text|line|segment|passage|ending|beginning|"
    r"expression|response|summary|story|answer|paragraph)\b[^\"“”‘’`']*$|"
    r"^(?:sentence|line|paragraph|turn)\s*\d+\s*[:,\-–]?\s*$",
    re.IGNORECASE,
)
_COMMENT_START = re.compile(
    r"^(?:this|which|that|the|it|its|should|incorrect|wrong|not|missing|error|implies|refers|"
    r"inconsistent|unsupported|repeated|redundant|omitted|i\.e\.|e\.g\.|see|as|because|since|"
    r"contradicts|hallucinated|unclear|here|where)\b",
    re.IGNORECASE,
)


# a JSON-looking line: "location": "12 threes",  (a broken JSON answer is still read line by line)
_JSON_LINE = re.compile(r'^\s*"(?P<key>[A-Za-z][A-Za-z _-]{0,40})"\s*:\s*(?P<value>.*?)\s*,?\s*$')
# a field name alone on its line ("### Explanation of the score"), its value on the lines that follow
_BARE_FIELD = re.compile(
    r"^(?P<name>" + "|".join(f"(?:{rx})" for rx, _ in _FIELD_NAMES) + r")\s*[:：]?$", re.IGNORECASE
)


def _strip_emphasis(text: str) -> str:
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
    stripped = _strip_emphasis(stripped).strip()
    bare = _BARE_FIELD.match(stripped)
    if bare and not _ERROR_HEADER.match(stripped):
        return f"{bare.group('name')}:"
    return stripped


# ---------------------------------------------------------------------------------------------
# value parsers


def parse_severity(raw: str) -> tuple[int | None, str | None]:
    """Return (severity 1..5 or None, problem or None) from a severity value as an LLM wrote it."""
    text = _strip_emphasis(raw).strip().lower()
    if not text:
        return None, "severity is empty"
    match = re.search(r"(?<![\d.])(\d+(?:\.\d+)?)\s*(?:/\s*(\d+))?", text)
    if match:
        value = float(match.group(1))
        scale = float(match.group(2)) if match.group(2) else 5.0
        if scale != 5.0 and scale > 0:
            value = 1 + (value / scale) * 4
        rounded = int(math.floor(value + 0.5))
        if 1 <= rounded <= 5:
            exact = float(rounded) == value and scale == 5.0
            problem = None if exact else f"severity {raw.strip()!r} rounded"
            return rounded, problem
        return None, f"severity {raw.strip()!r} is outside 1-5"
    for rx, level in _SEVERITY_WORDS:
        if re.search(rf"\b(?:{rx})\b", text):
            return level, f"severity given as a word ({raw.strip()!r})"
    return None, f"severity {raw.strip()!r} not understood"


def parse_score_value(raw: str) -> tuple[str | None, float | None, str | None]:
    """Return (label, 1..5 score, problem) from an overall-score value; the label wins over numbers."""
    text = _strip_emphasis(raw).strip()
    if not text:
        return None, None, "overall score is empty"
    lowered = text.lower()
    label_match = re.search(r"\b(unacceptable|poor|fair|good|excellent)\b", lowered)
    number_match = re.search(r"(?<![\d.])(\d+(?:\.\d+)?)\s*(?:/\s*(\d+)|out\s+of\s+(\d+))?", lowered)
    number: float | None = None
    if number_match:
        value = float(number_match.group(1))
        scale_text = number_match.group(2) or number_match.group(3)
        scale = float(scale_text) if scale_text else 5.0
        if scale == 5.0 and 1 <= value <= 5:
            number = value
        elif scale > 0 and scale != 5.0 and 0 <= value <= scale:
            number = 1 + 4 * value / scale
    if label_match:
        label = _LABEL_BY_LOWER[label_match.group(1)]
        score = label_to_score(label)
        problem = None
        if number is not None and abs(number - score) >= 0.5:
            problem = f"overall score {text!r}: label and number disagree; the label is used"
        return label, score, problem
    if number is not None:
        return score_to_label(number), number, f"overall score given as a number ({text!r})"
    return None, None, f"overall score {text!r} not understood"


def clean_location(raw: str) -> tuple[str | None, list[str]]:
    """Return (location or None, notes) from a Location value: quotes and comments removed."""
    notes: list[str] = []
    text = _strip_emphasis(raw).strip()
    if not text:
        return None, ["location is empty"]
    segments, rest_start = _quoted_segments(text)
    prefix = text[: segments[0][0]].strip() if segments else ""
    if prefix and not _LOCATION_PREFIX.match(prefix.rstrip(":").strip()):
        # quotes are part of the text itself ("the "best" pizza"): keep the value as it is
        segments = []
    rest = text[rest_start:].strip() if segments else ""
    if segments and rest and not _COMMENT_AFTER_QUOTE.match(rest):
        # text goes on after the closing quote: the quotes belong to the output ("Hi," he said)
        segments = []
    if segments:
        parts = [seg for _, seg in segments]
        if prefix:
            notes.append(f"description {prefix!r} removed from location")
        if rest:
            notes.append(f"comment {rest!r} removed from location")
        location = " ... ".join(p for p in parts if p)
        if not location.strip():
            return None, [*notes, "location is empty"]
        if len(parts) > 1:
            notes.append("several quoted spans joined with '...'")
        # an ordinal in a removed remark ("(second mention)", "In the first sentence:") says which
        # occurrence is meant: it stays, in brackets, for the aligner to read
        cues = [pick.cue for removed in (prefix, rest) if removed and (pick := pick_in(removed)) is not None]
        if cues:
            location = f"{location} ({cues[0]})"
        return location, notes
    if _NO_LOCATION.match(text):
        return None, [f"no span given (location {text!r})"]
    # unquoted: strip a trailing parenthetical remark that reads like a comment
    paren = re.match(r"^(?P<loc>.+?)\s+\((?P<comment>[^()]+)\)\s*[.]?$", text)
    if paren and _COMMENT_START.match(paren.group("comment").strip()):
        notes.append(f"comment {paren.group('comment')!r} removed from location")
        text = paren.group("loc").strip()
    return text, notes


def _quoted_segments(text: str) -> tuple[list[tuple[int, str]], int]:
    """Return the leading run of quoted segments [(start, inner)] and where the rest begins.

    Segments may be joined by '...', '…', commas or 'and'; a single-quote run that is followed by more
    text with apostrophes is resolved by taking the last closing quote of the run.
    """
    segments: list[tuple[int, str]] = []
    start = _first_quote(text)
    if start is None:
        return [], 0
    pos = start
    while True:
        opening = text[pos]
        closing = _QUOTE_PAIRS[opening]
        end = _closing_quote(text, pos, opening, closing)
        if end is None:
            # no closing quote: take everything after the opening one
            segments.append((pos, text[pos + 1 :].strip()))
            return segments, len(text)
        segments.append((pos, text[pos + 1 : end]))
        after = end + 1
        nxt = _first_quote(text, after)
        if nxt is None or not _ELLIPSIS_JOIN.match(text[after:nxt] or " "):
            if nxt is not None and text[after:nxt].strip() == "":
                # two adjacent quoted parts without a joiner: treat as separate too
                pos = nxt
                continue
            return segments, after
        pos = nxt


def _first_quote(text: str, start: int = 0) -> int | None:
    for i in range(start, len(text)):
        ch = text[i]
        if ch in _QUOTE_PAIRS and ch not in "”’»›":
            if ch == "'" and i > 0 and text[i - 1].isalnum():
                continue  # an apostrophe, not a quote
            return i
    return None


def _inside_word(text: str, i: int) -> bool:
    return 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum()


def _closing_quote(text: str, pos: int, opening: str, closing: str) -> int | None:
    candidates = [i for i in range(pos + 1, len(text)) if text[i] == closing or text[i] == opening]
    if closing in "'’":
        # apostrophes inside words are not closing quotes
        candidates = [i for i in candidates if not _inside_word(text, i)]
    if opening in "“„" and closing not in text[pos + 1 :]:
        candidates = [i for i in range(pos + 1, len(text)) if text[i] in "\"”“"]
    return candidates[0] if candidates else None


# ---------------------------------------------------------------------------------------------
# the block parser


@dataclass
class _Block:
    number: int | None
    fields: dict[str, list[str]] = field(default_factory=dict)
    implicit: bool = False


@dataclass
class _Issue:
    text: str
    degrades: bool  # True when the answer is incomplete because of it (status "partial")


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


def _parse(text: str) -> tuple[list[_Block], dict[str, list[str]], bool, list[_Issue]]:
    """Split an answer into error blocks and the trailing score fields."""
    lines = [_clean_line(line) for line in _split_lines(text)]
    blocks: list[_Block] = []
    tail: dict[str, list[str]] = {}
    issues: list[_Issue] = []
    no_errors = False
    current: _Block | None = None
    target: list[str] | None = None  # where continuation lines go
    in_tail = False  # inside the overall score / its explanation
    tail_paragraph_ended = False

    def following(i: int) -> str:
        return next((later for later in lines[i + 1 :] if later), "")

    for i, line in enumerate(lines):
        if not line:
            if in_tail and tail.get("score_explanation") and target is tail.get("score_explanation"):
                tail_paragraph_ended = True
            continue
        head = _header(line, following(i), in_tail)
        if head is not None and head[0] == "no_errors":
            no_errors = True
            continue
        if head is not None:
            if in_tail:
                issues.append(_Issue("an error block after the overall score", False))
            current = _Block(number=head[1])
            blocks.append(current)
            in_tail = tail_paragraph_ended = False
            target = None
            if not head[2]:
                continue
            line = head[2]
        field_match = _FIELD.match(line)
        if field_match:
            name = _canonical_field(field_match.group("name"))
            value = field_match.group("value").strip()
            if name == "explanation" and in_tail:
                name = "score_explanation"
            if name in ("score", "score_explanation"):
                in_tail, current, tail_paragraph_ended = True, None, False
                if name in tail:
                    issues.append(_Issue(f"more than one {name.replace('_', ' ')}; the first is used", False))
                    target = None
                    continue
                tail[name] = [value]
                target = tail[name]
                continue
            if current is None or (name == "location" and "location" in current.fields):
                if blocks:
                    issues.append(_Issue("an error without its own 'Error N:' header", False))
                current = _Block(number=None, implicit=True)
                blocks.append(current)
            current.fields.setdefault(name, []).append(value)
            target = current.fields[name]
            continue
        if not blocks and not in_tail and _NO_ERRORS.match(line):
            no_errors = True
            continue
        extra = _EXTRA_FIELD.match(line)
        if extra and current is not None and not in_tail:
            name = " ".join(extra.group("name").split())
            if _CORRECTION_FIELD.match(name):
                # a correction belongs with the explanation it completes
                current.fields.setdefault("explanation", []).append(line)
                target = current.fields["explanation"]
            else:
                issues.append(_Issue(f"field {name!r} not read", False))
                target = None
            continue
        if in_tail and tail_paragraph_ended:
            if target is not None:
                issues.append(_Issue("text after the score explanation ignored", False))
            target = None
            continue
        if target is not None:
            target.append(line)
        # otherwise: preamble or chatter outside any field, ignored
    return blocks, tail, no_errors, issues


def _join(values: list[str]) -> str:
    return "\n".join(v for v in values if v).strip()


def _build_error(block: _Block, issues: list[_Issue]) -> ParsedError:
    problems: list[str] = []
    label = f"error {block.number}" if block.number is not None else "an unnumbered error"
    loc_values = block.fields.get("location")
    location: str | None
    if loc_values is None:
        location_raw = ""
        location = None
        problems.append("no Location field")
        issues.append(_Issue(f"{label}: no Location field", True))
    else:
        location_raw = _join(loc_values)
        location, notes = clean_location(" ".join(location_raw.split("\n")))
        problems.extend(notes)
    explanation = _join(block.fields.get("explanation", []))
    if "explanation" not in block.fields:
        problems.append("no Explanation field")
        issues.append(_Issue(f"{label}: no Explanation field", True))
    severity_raw = _join(block.fields.get("severity", []))
    severity: int | None = None
    if "severity" not in block.fields:
        problems.append("no Severity field")
        issues.append(_Issue(f"{label}: no Severity field", True))
    else:
        severity, sev_problem = parse_severity(next((ln for ln in severity_raw.split("\n") if ln), ""))
        if sev_problem:
            problems.append(sev_problem)
            if severity is None:
                issues.append(_Issue(f"{label}: {sev_problem}", True))
    if block.implicit:
        problems.append("no 'Error N:' header")
    return ParsedError(
        number=block.number,
        location=location,
        location_raw=location_raw,
        explanation=explanation,
        severity=severity,
        severity_raw=severity_raw,
        problems=problems,
    )


def _is_empty_block(block: _Block) -> bool:
    return not any(_join(v) for v in block.fields.values())


def _assemble(text: object, *, expect_score: bool, distilled: bool = False) -> ParsedAnswer:
    answer = ParsedAnswer()
    if not isinstance(text, str):
        answer.problems.append(f"answer is not text ({type(text).__name__})")
        return answer
    if not text.strip():
        answer.problems.append("answer is empty")
        return answer
    from_json = json_answer(text)
    json_problems: list[str] = []
    if from_json is not None:
        text, json_problems = from_json
    blocks, tail, no_errors, issues = _parse(text)
    issues[:0] = [_Issue(p, False) for p in json_problems]
    blocks = [b for b in blocks if not _is_empty_block(b)]
    answer.errors = [_build_error(b, issues) for b in blocks]
    # "Error 1:\nLocation: None\nExplanation: No errors" style: treat as a declaration, not an error
    if (
        len(answer.errors) == 1
        and answer.errors[0].location is None
        and _NO_ERRORS.match(answer.errors[0].explanation or "none")
        and answer.errors[0].severity in (None, 0)
    ):
        answer.errors = []
        no_errors = True
        issues = [i for i in issues if not i.text.startswith(("error 1", "an unnumbered"))]
    answer.no_errors_declared = no_errors and not answer.errors
    if no_errors and answer.errors:
        issues.append(_Issue("says there are no errors but lists some; the listed errors are kept", False))
    score_raw = _join(tail.get("score", []))
    answer.score_explanation = _join(tail.get("score_explanation", []))
    if distilled:
        answer.score100 = _parse_score100(score_raw, text, issues)
    elif "score" in tail:
        label, score, problem = parse_score_value(score_raw.split("\n")[0] if score_raw else "")
        if label is None and score_raw:
            label, score, problem = parse_score_value(score_raw)
        answer.score_label, answer.score = label, score
        if problem:
            issues.append(_Issue(problem, label is None))
    elif expect_score:
        issues.append(_Issue("no overall score", True))
    if expect_score and answer.score is not None and not answer.score_explanation:
        issues.append(_Issue("no explanation of the score", False))
    if not expect_score and "score" in tail:
        issues.append(_Issue("an overall score was given where none was asked for", False))
    has_score = answer.score is not None or answer.score100 is not None
    if not blocks and not tail and not no_errors and not has_score:
        first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
        issues.append(_Issue(
            "no error fields (Location, Explanation, Severity) and no score found; the answer begins "
            f"{first[:80]!r}", True,
        ))
    answer.problems = [i.text for i in issues]
    if not has_score and not answer.errors and not answer.no_errors_declared:
        answer.status = "failed"
    elif any(i.degrades for i in issues):
        answer.status = "partial"
    else:
        answer.status = "ok"
    return answer


def _parse_score100(score_raw: str, text: str, issues: list[_Issue]) -> float | None:
    source = score_raw
    if not source:
        # a bare number on the first non-empty line is a common distilled answer
        for line in text.splitlines():
            cleaned = _clean_line(line)
            if cleaned:
                source = cleaned if re.fullmatch(r"\d+(?:\.\d+)?(?:\s*/\s*100)?", cleaned) else ""
                break
    match = re.search(r"(?<![\d.])(\d+(?:\.\d+)?)\s*(?:/\s*(\d+)|out\s+of\s+(\d+)|%)?", source)
    if not match:
        issues.append(_Issue("no 0-100 score", True))
        return None
    value = float(match.group(1))
    scale_text = match.group(2) or match.group(3)
    if scale_text and float(scale_text) not in (0.0, 100.0):
        value = value * 100 / float(scale_text)
    if not 0 <= value <= 100:
        issues.append(_Issue(f"score {match.group(0)!r} is outside 0-100", True))
        return None
    return value


def parse_annotator_answer(text: str) -> ParsedAnswer:
    """Parse an annotator answer: error blocks, an overall label score and its explanation."""
    try:
        return _assemble(text, expect_score=True)
    except Exception as exc:  # noqa: BLE001 - the parser must never raise on model output
        return ParsedAnswer(problems=[f"parser failure: {type(exc).__name__}: {exc}"])


def parse_supervisor_answer(text: str) -> ParsedAnswer:
    """Parse a supervisor answer: merged error blocks only (no overall score is asked for)."""
    try:
        return _assemble(text, expect_score=False)
    except Exception as exc:  # noqa: BLE001
        return ParsedAnswer(problems=[f"parser failure: {type(exc).__name__}: {exc}"])


def parse_distilled_answer(text: str) -> ParsedAnswer:
    """Parse a distilled-model answer: a 0-100 score (in score100) and error blocks."""
    try:
        return _assemble(text, expect_score=True, distilled=True)
    except Exception as exc:  # noqa: BLE001
        return ParsedAnswer(problems=[f"parser failure: {type(exc).__name__}: {exc}"])
