"""Read a JSON answer ({"errors": [...], "overall_score": ...} or a bare list) as the usual field text."""

from __future__ import annotations

import json
import re
from typing import Any

from evaluation.engine.answer_fields import EXTRA_FIELD, FIELD, canonical_field, strip_fences

_JSON_ERROR_LISTS = re.compile(r"^(?:errors?|issues?|problems?|mistakes?)(?:[ _-]?(?:list|found))?$", re.IGNORECASE)


def _json_value(value: Any) -> str:
    if value is None:
        return "None"
    if isinstance(value, list):
        return " ... ".join(_json_value(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _json_fields(obj: dict[str, Any], lines: list[str], ignored: list[str], *, top: bool) -> None:
    for key, value in obj.items():
        name = " ".join(str(key).replace("_", " ").replace("-", " ").split())
        if top and _JSON_ERROR_LISTS.match(name) and isinstance(value, list):
            continue
        if EXTRA_FIELD.match(f"{name}: x") and not top:
            lines.append(f"{name}: {_json_value(value)}")  # read, or named, like the same line in text
            continue
        if not FIELD.match(f"{name}: x"):
            ignored.append(str(key))
            continue
        canon = canonical_field(name)
        if top and canon == "explanation":
            name = "explanation of the score"  # beside the score, an explanation is the score's
        lines.append(f"{name}: {_json_value(value)}")


def json_answer(text: str) -> tuple[str, list[str]] | None:
    """Return a JSON answer rewritten as the usual "Error N: / Location: ..." text, and its problems;
    None when the answer holds no JSON object or list of errors."""
    body = strip_fences(text)
    start = next((i for i, ch in enumerate(body) if ch in "{["), None)
    if start is None or body[:start].strip().count("\n") > 3:
        return None
    try:
        data, end = json.JSONDecoder().raw_decode(body, start)
    except ValueError:
        return None
    problems = ["answer given as JSON"]
    errors: list[Any]
    if isinstance(data, list):
        errors, top = data, {}
    elif isinstance(data, dict):
        lists = [
            v for k, v in data.items() if _JSON_ERROR_LISTS.match(str(k).replace("_", " ")) and isinstance(v, list)
        ]
        errors, top = (lists[0] if lists else []), data
        if not lists and any(canonical_field(str(k)) == "location" for k in data if FIELD.match(f"{k}: x")):
            errors, top = [data], {}
    else:
        return None
    lines: list[str] = []
    ignored: list[str] = []
    for n, error in enumerate(errors, 1):
        if not isinstance(error, dict):
            problems.append(f"JSON error {n} is not an object")
            continue
        lines.append(f"Error {n}:")
        _json_fields(error, lines, ignored, top=False)
    _json_fields(top, lines, ignored, top=True)
    if ignored:
        problems.append(f"JSON field(s) not read: {', '.join(sorted(set(ignored)))}")
    if body[end:].strip():
        problems.append("text after the JSON ignored")
    return "\n".join(lines), problems
