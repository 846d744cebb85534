"""The mark a view carries when it is an annotator's action on their own work, and the URLs that carry it.

A view says so where it is declared (`@own_work(Own.ASSIGNMENT)`), so everything that must know the item
screen's actions (who may reach them: studies.middleware; the test that walks them) reads the marks from the URL
conf instead of keeping a list that a new screen's action would be missing from.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

from django.urls import URLPattern, URLResolver, get_resolver

MARK = "own_work"
View = TypeVar("View", bound=Callable)


class Own(StrEnum):
    """What the URL's arguments name: the object the view checks belongs to the signed-in annotator."""

    ASSIGNMENT = "assignment"  # `pk` is one of their assignments (a `span_pk` beside it: a span judged on it)
    ADDED_SPAN = "added_span"  # `span_pk` is a span they added on one of their items
    SETTING = "setting"  # no object: a setting of their own item screen


def own_work(own: Own) -> Callable[[View], View]:
    """Mark a view as an action on the signed-in annotator's own work; the view still checks the ownership."""

    def mark(view: View) -> View:
        setattr(view, MARK, own)
        return view

    return mark


def own_work_of(view: Callable | None) -> Own | None:
    """What the view acts on, if it is marked (None for every other view)."""
    return getattr(view, MARK, None)


@dataclass(frozen=True)
class MarkedUrl:
    name: str
    route: str  # the pattern as written, prefixes of its includes joined
    own: Own
    view: Callable


def marked_urls(patterns: list | None = None, prefix: str = "") -> Iterator[MarkedUrl]:
    """Every URL of the URL conf whose view is marked, includes followed."""
    for entry in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(entry, URLResolver):
            yield from marked_urls(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern) and (own := own_work_of(entry.callback)) is not None:
            yield MarkedUrl(name=entry.name or "", route=prefix + str(entry.pattern), own=own, view=entry.callback)
