"""MQM items may open pre-filled: the campaign's machine spans (its runs' answers, with their categories) become
the annotator's own errors, to keep, change or delete."""

from __future__ import annotations

from django.db import transaction

from accounts.models import User
from annotator.models import Assignment
from annotator.selectors.spans import judged_spans
from annotator.services.added_spans import added_span_create
from corpus import protocols
from corpus.protocols import mqm

MAJOR_FROM = 4  # a machine severity (1-5) from which a pre-filled error is Major; below it, Minor
FALLBACK = "Other"


@transaction.atomic
def mqm_prefill(*, assignment: Assignment, user: User) -> int:
    """Copy the located machine spans of the campaign's runs on this item (a planted copy's included) as the
    annotator's errors; return how many. A category outside the campaign's tree becomes Other (or is skipped when
    the tree has no Other); severities 4-5 become Major, the rest Minor. Not on the undo stack: the annotator
    deletes what is wrong."""
    names = protocols.mqm_tree(assignment.campaign.protocol_options)
    allowed = mqm.tree_names(names)
    made = 0
    # With the checks: a planted copy's machine spans pre-fill it as its neighbours are pre-filled (an empty copy
    # would tell it apart); set-up refuses decoys where machine spans get no verdicts, so none is among them.
    for span, _ in judged_spans(assignment):
        if span.start is None:
            continue
        category = mqm.canonical_category(span.category or FALLBACK, names)
        if category not in allowed:
            if FALLBACK not in allowed:
                continue
            category = FALLBACK
        severity = "major" if (span.severity or 0) >= MAJOR_FROM else "minor"
        added_span_create(assignment=assignment, user=user, start=span.start, end=span.end,
                          aspect=span.annotation.aspect or None, category=category,
                          severity=mqm.SEVERITY_CODES[severity], note=span.explanation, record=False)
        made += 1
    return made
