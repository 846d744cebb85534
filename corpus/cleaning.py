"""The one set of input rules every edge applies (forms, API bodies, query strings, importers).

PostgreSQL cannot store a NUL character or a lone UTF-16 surrogate (`"\\ud800"` is valid JSON but not
UTF-8), its integer columns hold 32 or 64 bits, and Python refuses to turn an integer of more than 4,300
digits into text. Each rule here returns a message naming the field, so the edge answers 4xx, never 500.
Django-free: the importers and the engine-side file readers use it as well.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from typing import Any

from errors import UserError

INT32_MAX = 2**31 - 1  # PostgreSQL `integer`
INT64_MAX = 2**63 - 1  # PostgreSQL `bigint`: the widest integer any column or JSON number may hold
MAX_NUMBER = 1e15  # scores and other measured numbers beyond this are a mistake or an attack
MAX_INT_DIGITS = 4300  # sys.get_int_max_str_digits(): int() refuses longer text
MAX_JSON_DEPTH = 64  # request bodies are flat; deeper nesting is refused before anything walks it

_DIGITS = re.compile(r"[0-9]+")
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")
# Unicode's bidirectional controls (embeddings, overrides, isolates and the three marks): in a name they make
# "m\u202egnp.exe" read as "mexe.png". Dataset and LLM text keeps them (right-to-left languages need them); the
# names a study lists and files carry (models, systems, sources, servers, campaigns) may not hold them.
_BIDI_CONTROL = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


class CleaningError(UserError):
    """A value breaks one of the rules; the message names the field."""


def text_problem(value: str) -> str | None:
    """Return why `value` cannot be stored as text (a NUL or a lone surrogate), or None when it can."""
    if "\x00" in value:
        return "contains a NUL character (\\u0000), which cannot be stored"
    found = _LONE_SURROGATE.search(value)
    if found:
        return (f"contains a lone UTF-16 surrogate (\\u{ord(found.group()):04x}), which is not valid Unicode "
                "text and cannot be stored")
    return None


def identifier_problem(value: str) -> str | None:
    """Return why `value` cannot be a name (what `text_problem` refuses, or a bidirectional control), else None."""
    problem = text_problem(value)
    if problem:
        return problem
    found = _BIDI_CONTROL.search(value)
    if found:
        return (f"contains a bidirectional control character (\\u{ord(found.group()):04x}), which makes a name "
                "read differently from what it is; names may not hold one")
    return None


def check_identifier(value: str, name: str, *, error: Callable[..., Exception] | None = None,
                     field: str | None = None) -> str:
    """Return `value`, or raise `error` (CleaningError by default) naming `name` when it cannot be a name."""
    problem = identifier_problem(value)
    if problem:
        raise (error or CleaningError)(f"{name}: {problem}", field=field or name)
    return value


def check_text(value: str, name: str) -> str:
    """Return `value`, or raise CleaningError naming `name` when it holds a NUL or a lone surrogate."""
    problem = text_problem(value)
    if problem:
        raise CleaningError(f"{name}: {problem}", field=name)
    return value


def check_field(value: str, name: str, *, max_length: int, required: bool = False,
                error: Callable[..., Exception] = CleaningError, field: str | None = None,
                identifier: bool = False) -> str:
    """Return `value` when a text column can hold it, else raise `error` naming `name`: blank when `required`,
    longer than `max_length`, or holding a NUL or a lone surrogate (PostgreSQL stores neither).

    The one check every service applies to free text (comments, notes, names); `error` is the service's own
    type (called with the message and `field=`, which is `name` unless said), so its callers need catch
    nothing new. An `identifier` (a name) may not hold a bidirectional control either."""
    field = field or name
    if required and not value.strip():
        raise error(f"{name}: must not be blank", field=field)
    if len(value) > max_length:
        raise error(f"{name}: {_shown(value)} is longer than {max_length} characters", field=field)
    problem = identifier_problem(value) if identifier else text_problem(value)
    if problem:
        raise error(f"{name}: {problem}", field=field)
    return value


def digits(raw: str, name: str, *, maximum: int = INT32_MAX, default: int | None = None) -> int:
    """Read a non-negative integer written with the ASCII digits 0-9 only.

    `str.isdigit()` accepts superscripts and other scripts' digits that `int()` then refuses (or reads), so
    the rule is `[0-9]+`, bounded by the column's range."""
    text = (raw or "").strip()
    if not text and default is not None:
        return default
    if not _DIGITS.fullmatch(text):
        raise CleaningError(f"{name}: {_shown(text)} is not a whole number written with the digits 0-9", field=name)
    if len(text) > len(str(maximum)) or int(text) > maximum:
        raise CleaningError(f"{name}: {_shown(text)} is larger than {maximum}", field=name)
    return int(text)


def as_id(raw: str | None) -> int | None:
    """Read a row id from a query or form value: ASCII digits within the id column's range, else None."""
    text = (raw or "").strip()
    if not _DIGITS.fullmatch(text) or len(text) > len(str(INT64_MAX)) or int(text) > INT64_MAX:
        return None
    return int(text)


def check_number(value: Any, name: str, *, maximum: float = MAX_NUMBER) -> float | int:
    """Return a finite number no larger than `maximum` in size, or raise CleaningError naming `name`.

    A 400-digit integer overflows `math.isfinite` (OverflowError), so integers are compared, not converted."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CleaningError(f"{name}: {_shown(value)} is not a number", field=name)
    if isinstance(value, int):
        if abs(value) > maximum:
            raise CleaningError(f"{name}: a number larger than {maximum:g} in size is not accepted", field=name)
        return value
    if not math.isfinite(value) or abs(value) > maximum:
        raise CleaningError(f"{name}: {value!r} is not a finite number no larger than {maximum:g} in size", field=name)
    return value


def tree_problems(value: Any, name: str = "body", *, texts: bool = True) -> Iterator[tuple[str, str]]:
    """Yield (where, message) for each text (unless `texts` is off) or number in a decoded JSON value that breaks the
    rules (keys included).

    Iterative, so a deep value cannot exhaust the stack; depth beyond MAX_JSON_DEPTH is one problem."""
    stack: list[tuple[str, Any, int]] = [(name, value, 0)]
    while stack:
        path, item, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            yield path, f"{path}: nested deeper than {MAX_JSON_DEPTH} levels"
            continue
        if isinstance(item, str):
            problem = text_problem(item) if texts else None
            if problem:
                yield path, f"{path}: {problem}"
        elif isinstance(item, bool) or item is None:
            continue
        elif isinstance(item, int):
            if abs(item) > INT64_MAX:
                yield path, f"{path}: an integer larger than {INT64_MAX} in size is not accepted"
        elif isinstance(item, float):
            if not math.isfinite(item):
                yield path, f"{path}: {item!r} is not a finite number"
        elif isinstance(item, dict):
            for key, inner in item.items():
                problem = text_problem(str(key)) if texts else None
                if problem:
                    yield path, f"{path} (a key): {problem}"
                stack.append((f"{path}.{_shown_key(key)}", inner, depth + 1))
        elif isinstance(item, list):
            stack.extend((f"{path}[{i}]", inner, depth + 1) for i, inner in enumerate(item))


def check_tree(value: Any, name: str = "body", *, texts: bool = True) -> Any:
    """Return `value`, or raise CleaningError with the first problem `tree_problems` finds."""
    for where, problem in tree_problems(value, name, texts=texts):
        raise CleaningError(problem, field=where)
    return value


def json_decoder(name: str = "body") -> json.JSONDecoder:
    """A JSON decoder that refuses, as CleaningError naming `name`, NaN/Infinity and integers too long to
    convert (> 4,300 digits) while it decodes (the item-file reader uses it for each element)."""

    def _constant(word: str) -> float:
        raise CleaningError(f"{name}: {word} is not a number JSON allows", field=name)

    def _integer(text: str) -> int:
        # Python refuses to read more than 4,300 digits (ValueError); shorter ones are bounded by check_tree,
        # which can name where they are.
        if len(text.lstrip("-")) > MAX_INT_DIGITS:
            raise CleaningError(f"{name}: an integer of {len(text.lstrip('-'))} digits is not accepted "
                                f"(at most {INT64_MAX} in size)", field=name)
        return int(text)

    return json.JSONDecoder(parse_constant=_constant, parse_int=_integer)


def loads(data: str | bytes, name: str = "body", *, texts: bool = True) -> Any:
    """`json.loads` that refuses, as CleaningError naming `name`, what json accepts and the database cannot hold:
    integers too long to convert (> 4,300 digits), NaN/Infinity, and anything `check_tree` refuses (texts
    are left to the caller when `texts` is off, as the importers name each field in their own words)."""
    if isinstance(data, bytes | bytearray):
        data = data.decode("utf-8")
    try:
        value = json_decoder(name).decode(data)
    except RecursionError:
        raise CleaningError(f"{name}: nested deeper than {MAX_JSON_DEPTH} levels", field=name) from None
    return check_tree(value, name, texts=texts)


_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'', re.S)
_BRACKET = re.compile(r"[\[\]{}()]")


def nested_deeper_than(text: str, limit: int) -> bool:
    """Whether JSON (or a Python literal) in `text` nests brackets deeper than `limit`, found without parsing.

    Parsers and printers recurse once per level: a 3,000-deep value raises RecursionError wherever it is
    decoded or dumped. Quoted strings are skipped; the scan is linear and stops at the first level too deep."""
    depth = 0
    for bracket in _BRACKET.finditer(_QUOTED.sub("", text)):
        if bracket.group() in "[{(":
            depth += 1
            if depth > limit:
                return True
        else:
            depth = max(depth - 1, 0)
    return False


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _shown_key(key: Any) -> str:
    text = str(key)
    return text if len(text) <= 40 else text[:37] + "..."
