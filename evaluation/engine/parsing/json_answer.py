"""Read a JSON answer as the usual field text: a list of errors, an object holding one ({"errors": [...]},
{"errors": {"error_1": {...}}}, {"error_1": {...}}, factgenie's {"annotations": [...]}), fenced or after prose."""

from __future__ import annotations

import json
import re
from typing import Any

from evaluation.engine.parsing.fields import EXTRA_FIELD, FIELD, canonical_field, strip_fences

_JSON_ERROR_LISTS = re.compile(
    r"^(?:(?:errors?|issues?|problems?|mistakes?)(?:[ _-]?(?:list|found))?|annotations?|error[ _-]?spans?|spans)$",
    re.IGNORECASE,
)
_ERROR_KEY = re.compile(r"^(?:errors?|issues?|problems?|mistakes?)[ _-]?#?\d+$", re.IGNORECASE)
# where a top-level JSON value may start: at the start of a line, or after "Answer:" in prose
_START = re.compile(r"(?:^|(?<=\n))[\[{]|(?<=:)[ \t]*[\[{]")


def _json_value(value: Any) -> str:
    if value is None:
        return "None"
    if isinstance(value, list):
        return " ... ".join(_json_value(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _name(key: object) -> str:
    return " ".join(str(key).replace("_", " ").replace("-", " ").split())


def _is_location_key(key: object) -> bool:
    name = _name(key)
    return bool(FIELD.match(f"{name}: x")) and canonical_field(name) == "location"


def _json_fields(obj: dict[str, Any], lines: list[str], ignored: list[str], *, top: bool) -> None:
    if not top and not any(_is_location_key(k) for k in obj) and "text" in obj:
        obj = {("location" if k == "text" else k): v for k, v in obj.items()}  # factgenie's span text
    for key, value in obj.items():
        name = _name(key)
        if top and (_JSON_ERROR_LISTS.match(name) or _ERROR_KEY.match(name)) and isinstance(value, (list, dict)):
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


def _errors_of(data: Any) -> tuple[list[Any] | None, dict[str, Any]] | None:
    """Return (errors, top-level fields) of a decoded answer, errors None when it names none (a score
    alone); None when it does not look like an answer."""
    if isinstance(data, list):
        if all(isinstance(e, dict) for e in data):
            return data, {}
        return None
    if not isinstance(data, dict):
        return None
    for key, value in data.items():
        if _JSON_ERROR_LISTS.match(_name(key)):
            if isinstance(value, list):
                return value, data
            if isinstance(value, dict):
                return list(value.values()), data
    keyed = [v for k, v in data.items() if _ERROR_KEY.match(_name(k)) and isinstance(v, dict)]
    if keyed:
        return keyed, data
    if any(_is_location_key(k) for k in data):
        return [data], {}
    if any(FIELD.match(f"{_name(k)}: x") and canonical_field(_name(k)) == "score" for k in data):
        return None, data
    return None


def _complete_errors(body: str, begin: int) -> tuple[list[dict[str, Any]], int]:
    """The error objects of a JSON value cut off before its end (a model out of tokens mid-answer): each
    complete object of its first list, in order, and where the last one ends; ([], begin) when none is whole or
    they do not look like errors."""
    opened = body.find("[", begin)
    if opened < 0:
        return [], begin
    decoder = json.JSONDecoder()
    errors: list[dict[str, Any]] = []
    pos = end = opened + 1
    while True:
        while pos < len(body) and body[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(body) or body[pos] != "{":
            break
        try:
            value, pos = decoder.raw_decode(body, pos)
        except ValueError:
            break  # the object the answer was cut in
        if not isinstance(value, dict) or not any(_is_location_key(k) for k in value):
            return [], begin
        errors.append(value)
        end = pos
    return errors, end


def json_answer(text: str) -> tuple[str, list[str]] | None:
    """Return a JSON answer rewritten as the usual "Error N: / Location: ..." text, and its problems;
    None when the answer holds no JSON object or list of errors. The last answer-shaped JSON wins; prose
    before it is left out (a preamble or a draft), text after it is kept for the block parser."""
    body = strip_fences(text)
    found: tuple[list[Any] | None, dict[str, Any], int] | None = None
    cut = 0
    pos = 0
    while (start := _START.search(body, pos)) is not None:
        begin = start.end() - 1
        try:
            data, end = json.JSONDecoder().raw_decode(body, begin)
        except ValueError:
            # A broken (cut) JSON value: its complete errors are read, and what follows them (fields after the
            # list, the object it was cut in) line by line, as the whole value is when none is complete.
            whole, end = _complete_errors(body, begin)
            if whole:
                found, cut = (whole, {}, end), len(whole)
            break

        shaped = _errors_of(data)
        if shaped is not None:
            found = (*shaped, end)
        pos = end
    if found is None:
        return None
    errors, top, end = found
    problems = ["answer given as JSON"]
    if cut:
        problems.append(f"JSON cut off before its end: its {cut} complete error(s) read")
    lines: list[str] = []
    ignored: list[str] = []
    if errors == []:
        lines.append("No errors.")  # an empty list is an explicit answer
    for n, error in enumerate(errors or [], 1):
        if not isinstance(error, dict):
            problems.append(f"JSON error {n} is not an object")
            continue
        lines.append(f"Error {n}:")
        _json_fields(error, lines, ignored, top=False)
    _json_fields(top, lines, ignored, top=True)
    if ignored:
        problems.append(f"JSON field(s) not read: {', '.join(sorted(set(ignored)))}")
    after = body[end:].strip()
    if cut and after.lstrip(",").lstrip().startswith("{"):
        after = ""  # the error the answer was cut in: half an object, left out
        problems.append("the error it was cut in is left out")
    if after:
        # fields after the JSON ("Overall score: Good") are read like any text; prose there is ignored
        lines.extend(["", after])
    return "\n".join(lines), problems
