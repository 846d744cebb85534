"""Django-free views of item inputs (tables, triples, dialogue, JSON box scores).

Everything here returns plain data; templates escape it. Nothing here builds HTML.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from corpus.cleaning import nested_deeper_than

InputKind = Literal["text", "key_value", "triples", "table", "dialogue", "json"]

_KV_PAIR = re.compile(r"\s*([^\[\]|,]+?)\s*\[([^\]]*)\]\s*")
_KV_WHOLE = re.compile(r"^\s*[^\[\]|,]+?\s*\[[^\]]*\](\s*[|,]\s*[^\[\]|,]+?\s*\[[^\]]*\])*\s*$", re.S)
_TURN = re.compile(r"^\s*([A-Za-z][\w .'-]{0,24}?)\s*:\s(.*)$")

# RotoWire box-score columns worth reading first; the rest follow in file order.
_BOX_FIRST = ("PLAYER_NAME", "TEAM_CITY", "START_POSITION", "MIN", "PTS", "REB", "AST", "STL", "BLK", "TO",
              "FGM", "FGA", "FG3M", "FG3A", "FTM", "FTA", "PF")
_BOX_SKIP = frozenset({"FIRST_NAME", "SECOND_NAME"})

# Size caps, in characters. Parsing costs a multiple of the text's size in memory (ast.literal_eval about 150x,
# json about 10x), and one item with a 6 MB value once took 3 GB to open. Larger inputs are shown as text; real
# tables and box scores are a few kB.
MAX_STRUCTURED_CHARS = 1_000_000
MAX_PYTHON_LITERAL_CHARS = 200_000
MAX_STRUCTURED_DEPTH = 32  # deeper JSON is shown as text: decoding and printing it recurse once per level


@dataclass
class Table:
    caption: str
    header: list[str]
    rows: list[list[str]]


@dataclass
class Turn:
    speaker: str
    text: str
    side: int  # 0 or 1: alternates per distinct speaker so two-party dialogue reads left/right


@dataclass
class InputView:
    header: str
    kind: InputKind
    text: str = ""
    tables: list[Table] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)
    facts: list[tuple[str, str]] = field(default_factory=list)


@lru_cache(maxsize=16)  # a parsed 1 MB input keeps about 6 MB: at most ~100 MB per process
def render_input(header: str, text: str) -> InputView:
    """Return the most readable structure for one input text; fall back to plain text when unsure or when the
    text is too large to parse cheaply. Cached: an item's inputs are parsed once per process, not per page view
    (callers only read the view)."""
    if len(text) > MAX_STRUCTURED_CHARS:
        return InputView(header=header, kind="text", text=text)
    for parse in (_as_json, _as_key_value, _as_triples, _as_pipe_table, _as_dialogue, _as_csv):
        view = parse(header, text)
        if view is not None:
            return view
    return InputView(header=header, kind="text", text=text)


def render_inputs(inputs: dict[str, Any]) -> list[InputView]:
    return [render_input(str(header), value if isinstance(value, str) else json.dumps(value))
            for header, value in inputs.items()]


def _loose_literal(value: Any) -> Any:
    """RotoWire nests Python-repr strings inside JSON; decode either form, else keep the string."""
    if not isinstance(value, str):
        return value
    stripped = value.strip()
    if not stripped or stripped[0] not in "[{" or nested_deeper_than(stripped, MAX_STRUCTURED_DEPTH):
        return value
    decoders = (json.loads, ast.literal_eval) if len(stripped) <= MAX_PYTHON_LITERAL_CHARS else (json.loads,)
    for decode in decoders:
        try:
            return decode(stripped)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    return value


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _as_json(header: str, text: str) -> InputView | None:
    stripped = text.strip()
    if not stripped.startswith("{") or nested_deeper_than(stripped, MAX_STRUCTURED_DEPTH):
        return None
    try:
        data = json.loads(stripped)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    facts: list[tuple[str, str]] = []
    tables: list[Table] = []
    lines = {k: _loose_literal(data[k]) for k in ("home_line", "vis_line") if k in data}
    team_rows = [v for v in lines.values() if isinstance(v, dict)]
    if team_rows:
        columns = _ordered_columns(team_rows, first=("TEAM-CITY", "TEAM-NAME", "TEAM-PTS", "TEAM-WINS",
                                                      "TEAM-LOSSES"))
        tables.append(Table(
            caption="Team lines",
            header=["Side", *(_pretty(c) for c in columns)],
            rows=[[("Home" if key == "home_line" else "Visitors"), *(_cell(row.get(c)) for c in columns)]
                  for key, row in lines.items() if isinstance(row, dict)],
        ))
    for key, raw in data.items():
        if key in lines:
            continue
        value = _loose_literal(raw)
        if isinstance(value, list) and value and all(isinstance(r, dict) for r in value):
            first = _BOX_FIRST if key == "box_score" else ()
            columns = [c for c in _ordered_columns(value, first=first) if c not in _BOX_SKIP]
            tables.append(Table(caption=_pretty(key), header=[_pretty(c) for c in columns],
                                rows=[[_cell(r.get(c)) for c in columns] for r in value]))
        elif isinstance(value, dict) and value and all(not isinstance(v, (dict, list)) for v in value.values()):
            tables.append(Table(caption=_pretty(key), header=["Field", "Value"],
                                rows=[[_pretty(k), _cell(v)] for k, v in value.items()]))
        else:
            facts.append((_pretty(key), _cell(value)))
    return InputView(header=header, kind="json", tables=tables, facts=facts)


def _ordered_columns(rows: Sequence[dict[str, Any]], first: Iterable[str] = ()) -> list[str]:
    seen: dict[str, None] = {}
    for row in rows:
        for key in row:
            seen.setdefault(str(key), None)
    leading = [c for c in first if c in seen]
    return leading + [c for c in seen if c not in leading]


def _pretty(name: str) -> str:
    return name.replace("TEAM-", "").replace("_", " ").strip()


def _as_key_value(header: str, text: str) -> InputView | None:
    if "[" not in text or not _KV_WHOLE.match(text):
        return None
    pairs = [(m.group(1).strip(), m.group(2)) for m in _KV_PAIR.finditer(text)]
    if not pairs:
        return None
    return InputView(header=header, kind="key_value",
                     tables=[Table(caption="", header=["Attribute", "Value"], rows=[list(p) for p in pairs])])


def _split_triples(text: str) -> list[str]:
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) == 1 and lines[0].count("|") > 2 and ";" in lines[0]:
        lines = [part for part in lines[0].split(";") if part.strip()]
    return lines


def _as_triples(header: str, text: str) -> InputView | None:
    lines = _split_triples(text)
    if not lines:
        return None
    rows = []
    for line in lines:
        if set(line.strip()) <= set("|-: "):
            return None  # a markdown table separator: this is a table, not triples
        parts = [p.strip() for p in line.strip().strip("|").split("|")]
        if len(parts) != 3 or not all(parts):
            return None
        rows.append(parts)
    return InputView(header=header, kind="triples",
                     tables=[Table(caption="", header=["Subject", "Predicate", "Object"], rows=rows)])


def _as_pipe_table(header: str, text: str) -> InputView | None:
    """A linearized table: every line has the same number (>= 2) of '|'-separated cells; the first is a header."""
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) < 2:
        return None
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in lines]
    rows = [r for r in rows if not all(set(c) <= set("-: ") for c in r)]  # markdown separator lines
    width = len(rows[0])
    if width < 2 or any(len(r) != width for r in rows) or len(rows) < 2:
        return None
    return InputView(header=header, kind="table", tables=[Table(caption="", header=rows[0], rows=rows[1:])])


def _as_dialogue(header: str, text: str) -> InputView | None:
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) < 2:
        return None
    turns: list[Turn] = []
    sides: dict[str, int] = {}
    for line in lines:
        match = _TURN.match(line)
        if match is None:
            if not turns:
                return None
            turns[-1].text += "\n" + line.strip()  # a turn that wraps onto the next line
            continue
        speaker = match.group(1).strip()
        sides.setdefault(speaker, len(sides) % 2)
        turns.append(Turn(speaker=speaker, text=match.group(2).strip(), side=sides[speaker]))
    if len(turns) < 2 or len(sides) > 4:
        return None
    return InputView(header=header, kind="dialogue", turns=turns)


def _as_csv(header: str, text: str) -> InputView | None:
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) < 2 or "," not in lines[0]:
        return None
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    width = len(rows[0])
    if width < 2 or any(len(r) != width for r in rows):
        return None
    return InputView(header=header, kind="table", tables=[Table(caption="", header=rows[0], rows=rows[1:])])
