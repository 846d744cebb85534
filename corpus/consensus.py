"""The final label of a judged span: the reviewer's decision, else the judges' majority, else `unresolved`.

Django-free on purpose: the labeled-set export, `export_items` and the estimates all call `consensus_label`,
so the rule exists once. The rule, per field (span verdict, explanation verdict):

- a reviewer's decision on the field wins (method `adjudicated`);
- else a value given by MORE than half of the judges who set the field (`MAJORITY_SHARE` = 0.5, strict) is the
  label: all of them agree -> `unanimous` (two or more judges) or `single` (one judge), else `majority`;
- else (a tie, or a plurality short of a majority, e.g. 1-1 or 1-1-1) the field is left `None` and the span's
  method is `unresolved`: ties are never broken by order, seniority or chance.

`agreement` is measured on the judges' votes before any adjudication (a decision never changes it): the
share of votes that go to the most common value, taken for each field that has votes, and the smaller of
the two (so a span is only as agreed as its less agreed field). It is None when nobody voted.

An ambiguous span's location follows the same rule: a judge who picked one of its occurrences (or "none of
these") votes for it, a judge who did not pick leaves the field open; without a majority of the picks the
span is unresolved and its picks are a disagreement. The consensus carries the picked `occurrence` only when
a majority chose one, or a reviewer decided it (the decision's `occurrence` wins like its verdicts).

Added errors use the same rule: every judge of the output votes, `error` if they marked an overlapping
error and `not_error` if they did not (see `added_error_votes`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from corpus.protocols.opennlgauge import SPAN_NOT_ERROR, SPAN_OK

MAJORITY_SHARE = 0.5  # a label needs strictly more than this share of the votes cast on its field

ADJUDICATED = "adjudicated"
UNANIMOUS = "unanimous"
MAJORITY = "majority"
SINGLE = "single"
UNRESOLVED = "unresolved"
UNJUDGED = "unjudged"
AUTO = "auto"  # a routed campaign's span resolved without an expert: the ensemble's verdict
METHODS: tuple[str, ...] = (ADJUDICATED, UNANIMOUS, MAJORITY, SINGLE, UNRESOLVED, UNJUDGED, AUTO)


Offsets = tuple[int | None, int | None]
"""A picked place: (start, end), or (None, None) for "the location is not in the output"."""


@dataclass(frozen=True)
class Vote:
    """One judge's verdicts on one span ('' or None = the judge left that field open)."""

    span_verdict: str | None
    explanation_verdict: str | None = None
    occurrence: Offsets | None = None  # the judge's pick of an ambiguous span's place; None = not picked


@dataclass(frozen=True)
class Consensus:
    span_verdict: str | None
    explanation_verdict: str | None
    method: str
    agreement: float | None
    judges: int
    occurrence: Offsets | None = None  # the majority's pick, None when nobody picked or the picks are split

    def as_record(self) -> Any:
        """The `consensus` object of export records (corpus.formats.ConsensusRecord)."""
        record = {"span_verdict": self.span_verdict, "explanation_verdict": self.explanation_verdict,
                  "method": self.method, "agreement": self.agreement}
        if self.occurrence is not None:
            record["occurrence"] = {"start": self.occurrence[0], "end": self.occurrence[1]}
        return record


def majority_value(votes: Iterable[str | None]) -> tuple[str | None, float | None, bool]:
    """Return (the majority value or None, the modal share, whether every vote agrees) over the votes cast."""
    counts = Counter(v for v in votes if v)
    cast = sum(counts.values())
    if not cast:
        return None, None, True
    ranked = counts.most_common()
    share = ranked[0][1] / cast
    value = ranked[0][0] if share > MAJORITY_SHARE else None
    return value, share, len(ranked) == 1


def consensus_label(votes: Sequence[Vote], decision: Vote | None = None) -> Consensus:
    """The final verdicts of one span from its judges' votes and an optional reviewer decision (module doc)."""
    span_value, span_share, span_all = majority_value(v.span_verdict for v in votes)
    exp_value, exp_share, exp_all = majority_value(v.explanation_verdict for v in votes)
    place, place_share, _ = majority_value(v.occurrence for v in votes)
    shares = [s for s in (span_share, exp_share) if s is not None]
    agreement = round(min(shares), 4) if shares else None
    judges = sum(1 for v in votes if v.span_verdict or v.explanation_verdict)
    # A field with votes but no majority is what makes a span unresolved.
    unresolved = (span_share is not None and span_value is None) or (exp_share is not None and exp_value is None)
    unresolved = unresolved or (place_share is not None and place is None)
    if decision is not None and (decision.span_verdict or decision.explanation_verdict
                                 or decision.occurrence is not None):
        decided_place = place if decision.occurrence is None else decision.occurrence
        return Consensus(decision.span_verdict or span_value, decision.explanation_verdict or exp_value,
                         ADJUDICATED, agreement, judges, decided_place)
    if judges == 0 and place_share is None:
        return Consensus(None, None, UNJUDGED, None, 0)
    if unresolved:
        return Consensus(span_value, exp_value, UNRESOLVED, agreement, judges, place)
    method = SINGLE if judges == 1 else UNANIMOUS if span_all and exp_all else MAJORITY
    return Consensus(span_value, exp_value, method, agreement, judges, place)


def is_disagreement(votes: Sequence[Vote]) -> bool:
    """Two or more judges set a field to different values, or picked different places of an ambiguous span
    (what puts a machine span in the review queue)."""
    spans = {v.span_verdict for v in votes if v.span_verdict}
    explanations = {v.explanation_verdict for v in votes if v.explanation_verdict}
    places = {v.occurrence for v in votes if v.occurrence is not None}
    return len(spans) > 1 or len(explanations) > 1 or len(places) > 1


def added_error_votes(found_by: int, judges: int) -> list[Vote]:
    """The votes on an added error: the judges who marked it say `error`, the other judges of the output
    (who read the same text and did not) say `not_error`."""
    return [Vote(SPAN_OK)] * found_by + [Vote(SPAN_NOT_ERROR)] * max(0, judges - found_by)
