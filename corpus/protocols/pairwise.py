"""The pairwise preference protocol's vocabulary: two outputs of one input on one screen, and the annotator says
which is better or that they are tied, with an optional reason.

It is the "which of these two is better, and why" of NLG studies (summaries, dialogue turns, data-to-text), the
preference half of Google's side-by-side MQM and Chatbot-Arena-style battles. A choice is stored by the position
the annotator saw (1 the first, 2 the second, 0 a tie); which system sat where is kept per screen, so a position
bias is measured and the system names are never shown. Django-free, like the other protocols; the wording is ours.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from corpus.protocols.errors import ProtocolError

OUTPUTS = 2
"""Outputs on one screen."""
TIE = 0
"""The stored choice of a tie; 1..OUTPUTS is the position of the better output."""
QUESTION = "Which output is better?"
REASON_MAX = 2000
KEYS: dict[str, str] = {
    "1": "the first output (left) is better",
    "2": "the second output (right) is better",
    "t": "they are equally good (a tie)",
    "r": "write why (Esc leaves the box)",
    "x": "move the focus to the other output",
}
SPAN_KEYS: dict[str, str] = {  # the item screens' own selection keys, which the pairwise screen uses likewise
    "s": "select a stretch of the output in focus (arrows move, Shift+arrows extend, Esc stops)",
    "m": "mark the selection as a span that backs your choice (optional; u undoes it)",
}
OPTIONS = ("reason_required", "question")


def clean_options(value: Any) -> dict[str, Any]:
    """{"reason_required": true|false (a choice needs a reason before the unit can finish), "question": the
    question the screen asks (default "Which output is better?")}; both optional."""
    if value in (None, "", {}):
        return {}
    if not isinstance(value, Mapping):
        raise ProtocolError('protocol_options: an object, e.g. {"reason_required": true}', field="protocol_options")
    unknown = sorted(set(value) - set(OPTIONS))
    if unknown:
        raise ProtocolError(f"protocol_options: unknown option(s) {', '.join(unknown)} (known: {', '.join(OPTIONS)})",
                            field="protocol_options")
    cleaned: dict[str, Any] = {}
    if "reason_required" in value:
        if not isinstance(value["reason_required"], bool):
            raise ProtocolError("protocol_options.reason_required: true or false",
                                field="protocol_options.reason_required")
        if value["reason_required"]:
            cleaned["reason_required"] = True
    if value.get("question") not in (None, ""):
        question = value["question"]
        if not isinstance(question, str) or len(question) > 300:
            raise ProtocolError("protocol_options.question: a text of at most 300 characters",
                                field="protocol_options.question")
        cleaned["question"] = question.strip()
    return cleaned


def question(options: Mapping[str, Any] | None) -> str:
    return (options or {}).get("question") or QUESTION


def reason_required(options: Mapping[str, Any] | None) -> bool:
    return bool((options or {}).get("reason_required"))


def check_choice(value: object) -> int:
    """A position (1..OUTPUTS) or TIE, sent as "1", "2" or "tie"/"0"; a ProtocolError naming the field otherwise."""
    text = str(value).strip().lower()
    if text in ("tie", "t", str(TIE)):
        return TIE
    if text.isdigit() and 1 <= int(text) <= OUTPUTS:
        return int(text)
    raise ProtocolError(f"choice: 1 or 2 (the better output's position) or tie, not {value!r}", field="choice")


def check_reason(value: object) -> str:
    text = str(value or "").strip()
    if len(text) > REASON_MAX:
        raise ProtocolError(f"reason: at most {REASON_MAX} characters, not {len(text)}", field="reason")
    return text


def scores(choice: int, outputs: int = OUTPUTS) -> list[float]:
    """The choice as per-position scores where lower is better (as MQM's), so a preference is read by the same
    side-by-side statistics as two MQM scores: the better output 0, the other 1, a tie 0 for both."""
    return [0.0 if choice in (TIE, position) else 1.0 for position in range(1, outputs + 1)]
