"""What the judging flow asks of a campaign's quality checks; the `quality` app answers.

Access, the spans on a card, finishing an item, the answer key after a training item, the review queue and
exports each need an answer only the quality checks have. The quality app computes those answers from
judgments, so it sits above this app: this module declares the questions, and `quality` installs its answers
when Django starts (quality.apps). Without it a campaign has no checks: nothing is gated, no hidden span joins
a card, nobody's verdicts are left out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from annotator.models import Assignment
    from corpus.models import ErrorSpan


class Checks(Protocol):
    def gate(self, assignment: Assignment) -> str | None:
        """Why this real item is not open to its annotator yet (training unfinished or failed), or None."""

    def hidden_spans(self, assignment: Assignment, span_pk: int | None = None) -> list[tuple[ErrorSpan, str]]:
        """The check spans on this card (decoys; machine spans copied onto a planted output), with labels."""

    def item_finished(self, assignment: Assignment) -> None:
        """Called once the annotator finished the item (a training item may complete their qualification)."""

    def training_key(self, assignment: Assignment, rows: list) -> list[Any]:
        """The answer key of a finished training item beside the annotator's own verdicts."""

    def excluded_annotator_ids(self, campaign_id: int | None) -> list[int]:
        """The annotators whose verdicts the campaign's real figures leave out."""


class NoChecks:
    """The answers of a campaign without quality checks."""

    def gate(self, assignment: Assignment) -> str | None:
        return None

    def hidden_spans(self, assignment: Assignment, span_pk: int | None = None) -> list[tuple[ErrorSpan, str]]:
        return []

    def item_finished(self, assignment: Assignment) -> None:
        return None

    def training_key(self, assignment: Assignment, rows: list) -> list[Any]:
        return []

    def excluded_annotator_ids(self, campaign_id: int | None) -> list[int]:
        return []


_installed: Checks = NoChecks()


def install(checks: Checks) -> None:
    global _installed
    _installed = checks


def installed() -> Checks:
    return _installed
