"""The repair step: an answer we could not read, or whose errors lack a location, is sent back once to the
same model with a short request to restate it in our format (not to judge again)."""

from __future__ import annotations

import hashlib
import json

from evaluation.engine.parsing import ParsedAnswer

_RANK = {"failed": 0, "partial": 1, "ok": 2}

REPAIR_REQUEST = (
    "Your answer above could not be read in full. Restate the same evaluation - the same errors and the same "
    "score, without judging the text again - in exactly the answer format the instructions give, with its field "
    "names in its order; give every error a Location with the exact words copied from the text. If you found "
    "no errors, say 'No errors.' instead of listing any. Write nothing else."
)


def needs_repair(parsed: ParsedAnswer) -> bool:
    """An answer nothing could be read from, or with an error that has no Location field at all (an
    error whose location is "none" or an omission gives its answer; it needs no repair)."""
    if parsed.status == "failed":
        return True
    return any("no Location field" in error.problems for error in parsed.errors)


def repair_prompt(prompt: str, answer: str) -> str:
    """The original prompt, the model's answer, and the request to restate it."""
    return f"{prompt}\n\n### Your answer\n{answer.strip()}\n\n### Request\n{REPAIR_REQUEST}\n"


def repair_key(attempt_key: str, answer: str) -> str:
    """The cache identity of a repair: the answered attempt (model, build, prompt, options) and its answer."""
    blob = json.dumps({"repair_of": attempt_key, "answer": answer}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def _located(parsed: ParsedAnswer) -> int:
    return sum(1 for e in parsed.errors if "no Location field" not in e.problems)


def repaired_is_better(first: ParsedAnswer, repaired: ParsedAnswer) -> bool:
    """Use the restated answer when it reads better: a better status, or as good with more located errors."""
    if _RANK[repaired.status] != _RANK[first.status]:
        return _RANK[repaired.status] > _RANK[first.status]
    return _located(repaired) > _located(first) or (
        repaired.no_errors_declared and not first.errors and not first.no_errors_declared
    )
