"""One name on screen for each kind of long job: an evaluator run, a DHP run, a comparison.

Retired names for an evaluator run must not come back in templates or in the views' flash messages."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import REPO

RETIRED = ("pre-annotation run", "ensemble run", "evaluation run", "new run", "simulated run")
_COMMENT = re.compile(r"\{#.*?#\}|\{% comment %\}.*?\{% endcomment %\}", re.DOTALL)
_SCREENS = sorted((REPO / "templates").rglob("*.html"))
_VIEWS = sorted(p for app in ("evaluation", "annotator", "dhp", "comparison", "analytics")
                for p in (REPO / app).rglob("*.py") if p.name == "views.py" or p.parent.name == "views")


def _shown(path: Path) -> str:
    """The text a template puts on screen (its comments and the URLs of its links removed)."""
    text = _COMMENT.sub("", path.read_text())
    return re.sub(r'href="[^"]*"', "", text).lower()


@pytest.mark.parametrize("path", _SCREENS + _VIEWS, ids=lambda p: str(p.relative_to(REPO)))
def test_screens_call_an_evaluator_run_by_one_name(path: Path) -> None:
    shown = _shown(path)
    assert [word for word in RETIRED if re.search(rf"\b{word}s?\b", shown)] == []


def test_shown_text_drops_comments_and_link_targets_only(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text('{# a pre-annotation run #}<a href="/docs/#ensemble-run">New pre-annotation run</a>')
    assert _shown(page) == "<a >new pre-annotation run</a>"
    assert len(_SCREENS) > 40 and any(p.name == "campaigns.py" for p in _VIEWS)
