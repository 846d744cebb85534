"""Error categories experts pick when they add a missed error: a keyed, coloured label set per campaign.

Django-free: the defaults per task and the validation of a researcher's set live here; the campaign stores
its set as JSON and the item screen, the add dialog and the services all read that one list.
"""

from __future__ import annotations

import re
from typing import TypedDict

from errors import UserError


class Category(TypedDict):
    key: str
    name: str
    colour: str


# Colours chosen to stay apart for the common colour-vision deficiencies (a blue/orange/purple/green axis)
# and readable as a 4px bar beside black text; the name is always written next to the colour.
PALETTE: tuple[str, ...] = ("#0b63c5", "#c2410c", "#7e22ce", "#15803d", "#a16207", "#475569", "#be185d",
                            "#0e7490", "#4d7c0f")

# The error types of the RotoWire fact-checking task (Thomson & Reiter's categories) for data-to-text.
_DATA_TO_TEXT = ("NAME", "NUMBER", "WORD", "CONTEXT", "NOT_CHECKABLE", "OTHER")
_GENERIC = ("FACTUAL", "OMISSION", "GRAMMAR", "FLUENCY", "COHERENCE", "OTHER")
TASK_DEFAULTS: dict[str, tuple[str, ...]] = {"data-to-text": _DATA_TO_TEXT}

_NAME = re.compile(r"^[A-Za-z0-9_ -]{1,40}$")
MAX_CATEGORIES = len(PALETTE)


class CategoryError(UserError):
    """A category set that cannot be used: a bad name, a repeated one, too many."""


def category_set(names: tuple[str, ...] | list[str]) -> list[Category]:
    """Return `names` as a keyed set: keys 1..9 in order, colours from the palette."""
    clean = [n.strip() for n in names if n.strip()]
    if len(clean) > MAX_CATEGORIES:
        raise CategoryError(f"at most {MAX_CATEGORIES} categories (one per key 1-{MAX_CATEGORIES}); got {len(clean)}",
                            field="categories")
    seen: set[str] = set()
    for name in clean:
        if not _NAME.match(name):
            raise CategoryError(f"category {name!r}: use letters, digits, spaces, '_' or '-' (at most 40)",
                                field="categories")
        if name.casefold() in seen:
            raise CategoryError(f"category {name!r} is listed twice", field="categories")
        seen.add(name.casefold())
    return [Category(key=str(i), name=name, colour=PALETTE[i - 1]) for i, name in enumerate(clean, start=1)]


def default_categories(task_slug: str) -> list[Category]:
    """The default label set of a task: RotoWire's categories for data-to-text, a general set otherwise."""
    return category_set(TASK_DEFAULTS.get(task_slug, _GENERIC))


def parse_category_names(text: str) -> list[Category]:
    """A researcher's set typed as one name per line or comma-separated."""
    return category_set(re.split(r"[\n,]", text))
