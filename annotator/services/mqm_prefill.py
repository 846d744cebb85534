"""MQM items may open pre-filled: the campaign's machine spans (its runs' answers, with their categories) become
the annotator's own errors, to keep, change or delete."""

from __future__ import annotations

from django.db import transaction

from accounts.models import User
from annotator.models import Assignment
from annotator.selectors.spans import judged_spans
from annotator.services.added_spans import added_span_create
from corpus import protocols
from corpus.protocols import mqm, prefill

FALLBACK = "Other"


@transaction.atomic
def mqm_prefill(*, assignment: Assignment, user: User) -> int:
    """Copy the located machine spans of the campaign's runs on this item (a planted copy's included) as the
    annotator's errors as the shared rule chooses them (corpus.protocols.prefill: MQM errors may overlap, the
    campaign's major_from sets Major); return how many. A category outside the campaign's tree becomes Other (or
    is skipped when the tree has no Other). Not on the undo stack: the annotator deletes what is wrong."""
    names = protocols.mqm_tree(assignment.campaign.protocol_options)
    allowed = mqm.tree_names(names)
    made = 0
    # With the checks: a planted copy's machine spans pre-fill it as its neighbours are pre-filled (an empty copy
    # would tell it apart); set-up refuses decoys where machine spans get no verdicts, so none is among them.
    machine = {s.pk: s for s, _ in judged_spans(assignment)}
    chosen = prefill.prefill_choice(
        (prefill.MachineSpan(s.pk, s.start, s.end, s.severity) for s in machine.values()),
        major_from=prefill.major_from(assignment.campaign.protocol_options), overlapping=True)
    for picked, severity in chosen:
        span = machine[picked.key]
        category = mqm.canonical_category(span.category or FALLBACK, names)
        if category not in allowed:
            if FALLBACK not in allowed:
                continue
            category = FALLBACK
        added_span_create(assignment=assignment, user=user, start=span.start, end=span.end,
                          aspect=span.annotation.aspect or None, category=category,
                          severity=mqm.SEVERITY_CODES[severity], note=span.explanation, record=False)
        made += 1
    return made
