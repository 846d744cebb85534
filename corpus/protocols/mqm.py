"""The MQM protocol's vocabulary: severities, the error tree, the keys that set them, and the weights that score them.

Django-free on purpose, like the OpeNLGauge vocabulary (corpus.protocols.opennlgauge): the item screen, the TSV
reader and writer, the scoring and the docs all derive from here. Severities and weights follow Freitag et al. 2021
("Experts, Errors, and Context"): Major 5, Minor 1, Minor Fluency/Punctuation 0.1, Non-translation 25,
Neutral 0; the help texts are ours.

Category names are read tolerantly, because Google's releases spell them differently (`Non-translation!`,
`Terminology/Inappropriate` for `Terminology/Inappropriate for context`): `category_key` folds case, drops a
trailing `!`, and squeezes whitespace (around `/` too); `canonical_category` then maps a name onto the tree's
spelling when the two are equal under that folding, or when one is a whole-word prefix of the other and only
one tree category fits. Stored spans keep the file's spelling, so an export writes back what was read.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from corpus.protocols.errors import ProtocolError
from corpus.protocols.opennlgauge import Term

SEVERITIES: tuple[Term, ...] = (
    Term("neutral", "Neutral", "q", "A matter of taste: noted, but not an error (weight 0)."),
    Term("minor", "Minor", "w", "A real imperfection that does not change the meaning or hinder reading."),
    Term("major", "Major", "e", "Changes the meaning, misleads or makes the text hard to understand."),
)
SEVERITY_VALUES: tuple[str, ...] = tuple(t.value for t in SEVERITIES)
NO_ERROR = "no-error"  # the severity of the one row a clean segment has in the TSV
# How an MQM severity sits on ErrorSpan.severity's 1-5 scale (5 the most severe), so that every export and
# figure that shows a span's severity shows something ordered; `severity_of_code` reads it back.
SEVERITY_CODES: dict[str, int] = {"neutral": 1, "minor": 2, "major": 4}
SEVERITY_LABELS: dict[str, str] = {t.value: t.label for t in SEVERITIES}

SOURCE_HEADER = "Source"  # an item's input header for the source segment
OUTPUT_HEADER = "Translation"
NON_TRANSLATION = "Non-translation"
SOURCE_ERROR = "Source error"
NON_TRANSLATION_KEY = "t"  # marks the whole segment as a non-translation (Major)


@dataclass(frozen=True)
class Category:
    """A top-level category of the error tree and its subcategories (full names are `Parent/Child`)."""

    name: str
    children: tuple[str, ...] = ()

    def full_names(self) -> list[str]:
        return [f"{self.name}/{c}" for c in self.children] or [self.name]


DEFAULT_TREE: tuple[Category, ...] = (
    Category("Accuracy", ("Mistranslation", "Addition", "Omission", "Untranslated text")),
    Category("Fluency", ("Grammar", "Spelling", "Punctuation", "Register", "Inconsistency", "Character encoding")),
    Category("Terminology", ("Inappropriate for context", "Inconsistent use")),
    Category("Style", ("Awkward",)),
    Category("Locale convention", ("Address", "Date", "Currency", "Telephone", "Time format", "Name format")),
    Category(NON_TRANSLATION),
    Category(SOURCE_ERROR),
    Category("Other"),
)
MAX_TOP = 9  # categories and subcategories are picked with the digits 1-9
MAX_NAME = 100  # ErrorSpan.category's length


def tree_names(tree: Iterable[Category]) -> list[str]:
    """Every category a span may carry, in screen order (a parent with children is not itself a choice)."""
    return [name for c in tree for name in c.full_names()]


def tree_as_json(tree: Iterable[Category]) -> list[dict[str, Any]]:
    return [{"name": c.name, "children": list(c.children)} for c in tree]


def parse_tree(value: Any, where: str = "mqm_tree") -> tuple[Category, ...]:
    """Read a campaign's own tree: a list of {"name", "children": [...]} (or plain names), or an object
    name -> list of children. Raise ProtocolError naming the first problem."""
    if isinstance(value, Mapping):
        value = [{"name": k, "children": v} for k, v in value.items()]
    if not isinstance(value, list) or not value:
        raise ProtocolError(f"{where}: a tree is a non-empty list of categories", field=where)
    if len(value) > MAX_TOP:
        raise ProtocolError(f"{where}: at most {MAX_TOP} top-level categories (they are picked with 1-9)", field=where)
    tree: list[Category] = []
    for number, entry in enumerate(value, 1):
        place = f"{where}[{number}]"
        name, children = (entry, []) if isinstance(entry, str) else (
            (entry.get("name"), entry.get("children") or []) if isinstance(entry, Mapping) else (None, None))
        if not isinstance(name, str) or not name.strip() or "/" in name:
            raise ProtocolError(f"{place}: a category needs a name without '/'", field=place)
        if not isinstance(children, list) or not all(isinstance(c, str) and c.strip() and "/" not in c
                                                      for c in children):
            raise ProtocolError(f"{place}: 'children' is a list of names without '/'", field=place)
        if len(children) > MAX_TOP:
            raise ProtocolError(f"{place}: at most {MAX_TOP} subcategories (they are picked with 1-9)", field=place)
        category = Category(name.strip(), tuple(c.strip() for c in children))
        if any(len(n) > MAX_NAME for n in category.full_names()):
            raise ProtocolError(f"{place}: a full category name is at most {MAX_NAME} characters", field=place)
        tree.append(category)
    keys = [category_key(n) for n in tree_names(tree)] + [category_key(c.name) for c in tree if c.children]
    if len(set(keys)) != len(keys):
        raise ProtocolError(f"{where}: category names repeat", field=where)
    return tuple(tree)


def category_key(name: str) -> str:
    """The folded form categories are compared in: case, a trailing '!', and whitespace do not count."""
    text = name.strip().rstrip("!").strip()
    text = re.sub(r"\s*/\s*", "/", " ".join(text.split()))
    return text.casefold()


_ALIASES = {"source issue": SOURCE_ERROR, "non translation": NON_TRANSLATION, "nontranslation": NON_TRANSLATION}


def _word_prefix(short: str, long: str) -> bool:
    return long.startswith(short) and (len(long) == len(short) or long[len(short)] in " /")


def canonical_category(name: str, tree: Iterable[Category] = DEFAULT_TREE) -> str:
    """The tree's spelling of `name` (see the module's docstring), else `name` trimmed as written."""
    key = category_key(name)
    if key in _ALIASES:
        return _ALIASES[key]
    names = tree_names(tree) + [c.name for c in tree]
    exact = [n for n in names if category_key(n) == key]
    if exact:
        return exact[0]
    if "/" in key:
        fits = {n for n in names if "/" in n and (_word_prefix(key, category_key(n)) or
                                                  _word_prefix(category_key(n), key))}
        if len(fits) == 1:
            return fits.pop()
    return name.strip().rstrip("!").strip() or name


def top_category(name: str) -> str:
    return name.split("/", 1)[0]


def severity_value(text: str) -> str | None:
    """The severity a TSV cell names (any case, spaces or a '-' around), NO_ERROR, or None when unknown."""
    key = text.strip().casefold().replace("_", "-").replace(" ", "-")
    if key in ("no-error", "noerror", "none"):
        return NO_ERROR
    return key if key in SEVERITY_CODES else None


def severity_of_code(code: int | None) -> str:
    """The MQM severity stored as `code` on ErrorSpan.severity (Minor for a code the protocol never writes)."""
    for value, stored in SEVERITY_CODES.items():
        if stored == code:
            return value
    return "minor"


# --- weights -----------------------------------------------------------------------------------------------

DEFAULT_WEIGHTS: dict[str, dict[str, float]] = {
    "*": {"major": 5.0, "minor": 1.0, "neutral": 0.0},
    "Fluency/Punctuation": {"minor": 0.1},
    NON_TRANSLATION: {"*": 25.0},
}
MAX_WEIGHT = 1e6
MAX_PATTERN = 200  # characters of one category pattern: longer than any category name with room to spare


@dataclass(frozen=True)
class Weights:
    """category pattern -> severity -> weight. Patterns are full category names in which `*` matches any run
    of characters; the most specific pattern that names the severity (or `*`) wins: an exact name first, then
    patterns by how many characters they spell out, `*` alone last. Names compare as `category_key` folds them."""

    table: tuple[tuple[str, tuple[tuple[str, float], ...]], ...]

    @classmethod
    def from_mapping(cls, value: Any, where: str = "weights") -> Weights:
        if not isinstance(value, Mapping) or not value:
            raise ProtocolError(f"{where}: a JSON object of category -> severity -> weight, e.g. "
                                '{"*": {"major": 5, "minor": 1}}', field=where)
        rows = []
        for category, severities in value.items():
            if not isinstance(category, str) or not category.strip():
                raise ProtocolError(f"{where}: a category pattern must be a non-empty string", field=where)
            if len(category) > MAX_PATTERN:
                raise ProtocolError(f"{where}: a category pattern of {len(category)} characters is longer than "
                                    f"{MAX_PATTERN}", field=where)
            if not isinstance(severities, Mapping) or not severities:
                raise ProtocolError(f"{where}[{category!r}]: an object of severity -> weight", field=where)
            entries = []
            for severity, weight in severities.items():
                key = "*" if severity == "*" else severity_value(str(severity))
                if key is None or key == NO_ERROR:
                    raise ProtocolError(f"{where}[{category!r}]: unknown severity {severity!r} (known: "
                                        f"{', '.join(SEVERITY_VALUES)} or *)", field=where)
                if isinstance(weight, bool) or not isinstance(weight, int | float) or not math.isfinite(weight) \
                        or not 0 <= weight <= MAX_WEIGHT:
                    raise ProtocolError(f"{where}[{category!r}][{severity!r}]: a weight is a number from 0 to "
                                        f"{MAX_WEIGHT:g}, not {weight!r}", field=where)
                entries.append((key, float(weight)))
            rows.append((category_key(category), tuple(entries)))
        # most specific first: exact names, then patterns by their spelled-out characters
        rows.sort(key=lambda row: ("*" in row[0], -len(row[0].replace("*", ""))))
        return cls(tuple(rows))

    @classmethod
    def from_json(cls, text: str, where: str = "weights") -> Weights:
        try:
            value = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise ProtocolError(f"{where}: not JSON ({exc})", field=where) from None
        return cls.from_mapping(value, where)

    def weight(self, category: str, severity: str) -> float:
        """The weight of one error; 0 when no pattern names its severity."""
        key = category_key(category)
        for pattern, entries in self.table:
            if pattern == key or ("*" in pattern and _matches(pattern, key)):
                found = dict(entries)
                if severity in found:
                    return found[severity]
                if "*" in found:
                    return found["*"]
        return 0.0

    def as_mapping(self) -> dict[str, dict[str, float]]:
        return {pattern: dict(entries) for pattern, entries in self.table}


def _matches(pattern: str, key: str) -> bool:
    """Whether `key` is `pattern` with each `*` standing for any run of characters.

    The pieces between stars are found left to right, each at its first place after the one before: for `*`
    alone that first place is always right, so the match takes one pass per piece and never backtracks (a
    regex of `.*` pieces tries exponentially many splits when it fails)."""
    pieces = pattern.split("*")
    if len(pieces) == 1:
        return pattern == key
    head, *middle, tail = pieces
    if len(key) < len(head) + len(tail) or not key.startswith(head) or not key.endswith(tail):
        return False
    at, stop = len(head), len(key) - len(tail)
    for piece in middle:
        found = key.find(piece, at, stop)
        if found < 0:
            return False
        at = found + len(piece)
    return True


DEFAULT = Weights.from_mapping(DEFAULT_WEIGHTS)


# --- where a stored span lies ---------------------------------------------------------------------------
# An error marked in the translation has ErrorSpan.start/end; one marked in the source (an omission) has
# source_start/source_end instead. A marker the file left open (no closing </v>) is said in the span's `note` as
# "mqm:open", so that the TSV export writes the row back as it was read. Older rows said a source mark in the note
# too ("mqm:source START-END"): migration corpus 0008 moved those into the fields, with SOURCE_NOTE.
OPEN_NOTE = "mqm:open"
SOURCE_NOTE = re.compile(r"mqm:source (\d+)-(\d+)")


def open_note(open_end: bool) -> str:
    return OPEN_NOTE if open_end else ""


def note_open_end(note: str) -> bool:
    """Whether a span's marker was left open in the file it came from."""
    return OPEN_NOTE in (note or "")


def source_text(inputs: object) -> str:
    """An item's source segment: its Source input, else its first input (a dataset imported from elsewhere)."""
    if not isinstance(inputs, dict) or not inputs:
        return ""
    return str(inputs.get(SOURCE_HEADER, next(iter(inputs.values()))))
