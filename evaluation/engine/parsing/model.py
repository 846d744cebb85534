"""What a parsed LLM answer is: its errors, score, status and problems; the label scale."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

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

