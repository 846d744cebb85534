"""Severity and overall-score values as models write them."""

from __future__ import annotations

import math
import re

from evaluation.engine.parsing.lines import strip_emphasis as _strip_emphasis
from evaluation.engine.parsing.model import _LABEL_BY_LOWER, label_to_score, score_to_label

_SEVERITY_WORDS: list[tuple[str, int]] = [
    (r"very\s+high|critical|catastrophic|extreme", 5),
    (r"very\s+low|negligible|trivial|neutral|minimal|insignificant", 1),
    (r"high|major|severe|serious|significant", 4),
    (r"medium|moderate|intermediate", 3),
    (r"low|minor|small|slight", 2),
]



# the whole scale as the instructions state it ("1-5", "1 to 5", "(1-5)"), copied instead of a value
_WHOLE_SCALE = re.compile(r"^[(\[]?\s*1\s*(?:-|–|to)\s*5\s*[)\]]?$")
_LABELS = re.compile(r"\b(unacceptable|poor|fair|good|excellent)\b")


def parse_severity(raw: str) -> tuple[int | None, str | None]:
    """Return (severity 1..5 or None, problem or None) from a severity value as an LLM wrote it."""
    text = _strip_emphasis(raw).strip().lower()
    if not text:
        return None, "severity is empty"
    if _WHOLE_SCALE.match(text):
        return None, f"severity {raw.strip()!r} is the scale, not a value"
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
    if len(set(_LABELS.findall(lowered))) >= 3:  # the scale listed ("Unacceptable, Poor, Fair, Good or Excellent")
        return None, None, f"overall score {text!r} lists the scale instead of choosing a label"
    label_match = _LABELS.search(lowered)
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

