"""Assemble a ParsedAnswer from the blocks; the public parse functions (never raise on any text)."""

from __future__ import annotations

import re

from evaluation.engine.parsing.blocks import _Block, _Issue, _parse
from evaluation.engine.parsing.json_answer import json_answer
from evaluation.engine.parsing.lines import _NO_ERRORS, _clean_line
from evaluation.engine.parsing.locations import clean_location
from evaluation.engine.parsing.model import ParsedAnswer, ParsedError
from evaluation.engine.parsing.no_errors import declares_no_errors
from evaluation.engine.parsing.prepass import rewrite
from evaluation.engine.parsing.traces import strip_traces
from evaluation.engine.parsing.values import parse_score_value, parse_severity


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
    text, notes = strip_traces(text)
    if not text.strip():
        answer.problems.extend([*notes, "no answer outside the thinking trace"])
        return answer
    final = text
    from_json = json_answer(text)
    if from_json is not None:
        text, json_notes = from_json
        notes.extend(json_notes)
    else:
        text, layout_notes = rewrite(text)
        notes.extend(layout_notes)
    blocks, tail, no_errors, issues = _parse(text)
    issues[:0] = [_Issue(p, False) for p in notes]
    blocks = [b for b in blocks if not _is_empty_block(b)]
    answer.errors = [_build_error(b, issues) for b in blocks]
    if not answer.errors and not no_errors and (declares_no_errors(final) or declares_no_errors(text)):
        no_errors = True
    # "Error 1:\nLocation: None\nExplanation: No errors" style: treat as a declaration, not an error
    if (
        len(answer.errors) == 1
        and answer.errors[0].location is None
        and (_NO_ERRORS.match(answer.errors[0].explanation or "none")
             or declares_no_errors(answer.errors[0].explanation))
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
