"""ESA and ESA^AI on one item: the first opening (ESA^AI pre-fills the campaign's machine spans), spans marked,
re-graded, resized and deleted, missing content, the spans declared done, then the 0-100 score.

Spans are the annotator's own spans of the item (annotator.services.added_spans), so every change is a
WorkAction with the milliseconds the page measured, as a verdict is, and undo and redo work until the spans are
done. The arm follows the control arm's draw (annotator.engine.crossing): an assignment in the control arm is
plain ESA (no pre-fill, and saying the spans are done ends its marking phase as "done marking" does elsewhere);
every other assignment of a campaign with runs is ESA^AI.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from accounts.models import User
from annotator.access import check_can_work, check_item_open, check_protocol
from annotator.engine.phases import Phase
from annotator.models import Assignment, EsaPrefill, EsaScore
from annotator.selectors.esa import ESA_AI_ARM, esa_arm
from annotator.selectors.spans import judged_spans
from annotator.services.actions import activity_record
from annotator.services.added_spans import (
    KEEP,
    AddedSpanError,
    added_span_create,
    added_span_delete,
    added_span_update,
)
from annotator.services.assignments import assignment_add_time
from annotator.services.control_arm import assignment_reveal
from annotator.services.phases import assignment_move
from corpus import protocols
from corpus.models import ErrorSpan
from corpus.protocols import esa, prefill
from errors import Conflict, UserError


class EsaError(UserError):
    """An ESA step that cannot be taken as sent (a severity or score out of range)."""


def _severity(value: object) -> int:
    name = esa.severity_value(value)
    if name is None:
        raise EsaError(f"severity must be one of {', '.join(esa.SEVERITY_VALUES)}", field="severity")
    return esa.SEVERITY_CODES[name]


@transaction.atomic
def esa_open(*, assignment: Assignment, user: User) -> EsaScore:
    """The assignment's ESA row, made on the first opening; an ESA^AI item (outside the control arm, in a
    campaign with runs) is then pre-filled with the machine's spans. Opening again changes nothing."""
    state, created = EsaScore.objects.get_or_create(assignment_id=assignment.pk)
    if created and esa_arm(assignment) == ESA_AI_ARM:
        made = esa_prefill(assignment=assignment, user=user)
        if made:
            state.prefilled = True
            state.save(update_fields=["prefilled"])
    return state


def esa_prefill(*, assignment: Assignment, user: User) -> int:
    """Copy the machine spans of the campaign's runs on this item that the shared rule chooses
    (corpus.protocols.prefill: ESA spans do not overlap) as the annotator's spans, and record where each came
    from; return how many. Not on the undo stack: the annotator deletes what is wrong."""
    # With the checks: a planted copy is pre-filled like its neighbours (mqm_prefill says why).
    machine = {s.pk: s for s, _ in judged_spans(assignment)}
    chosen = prefill.prefill_choice(
        (prefill.MachineSpan(s.pk, s.start, s.end, s.severity) for s in machine.values()),
        major_from=prefill.major_from(assignment.campaign.protocol_options), overlapping=False)
    rows = []
    for picked, severity in chosen:
        span, code = machine[picked.key], esa.SEVERITY_CODES[severity]
        copy = added_span_create(assignment=assignment, user=user, start=span.start, end=span.end,
                                 aspect=span.annotation.aspect or None, severity=code, record=False)
        rows.append(EsaPrefill(assignment=assignment, span_id=copy.pk, machine_span=span, start=span.start,
                               end=span.end, severity=code, machine_severity=span.severity))
    EsaPrefill.objects.bulk_create(rows)
    return len(rows)


def esa_prefill_renumber(*, assignment: Assignment, old: int, new: int) -> None:
    """An undone delete recreates a span under a new id: a pre-filled span keeps its origin."""
    EsaPrefill.objects.filter(assignment_id=assignment.pk, span_id=old).update(span_id=new)


def esa_span_add(*, assignment: Assignment, user: User, start: object, end: object, severity: object,
                 ms: int | None = None) -> ErrorSpan:
    check_protocol(assignment, protocols.ESA)
    return added_span_create(assignment=assignment, user=user, start=start, end=end, severity=_severity(severity),
                             ms=ms)


@transaction.atomic
def esa_missing_add(*, assignment: Assignment, user: User, severity: object, ms: int | None = None) -> ErrorSpan:
    """Mark content missing at the end of the output: one such error per item (re-grade it to change it)."""
    check_can_work(assignment, user)
    check_protocol(assignment, protocols.ESA)
    code = _severity(severity)
    if ErrorSpan.objects.filter(annotation__source__added__campaign_id=assignment.campaign_id,
                                annotation__source__added__annotator_id=user.pk,
                                annotation__item_id=assignment.item_id, category=esa.MISSING).exists():
        raise Conflict("Missing content is already marked on this item; focus it to re-grade or delete it.")
    return added_span_create(assignment=assignment, user=user, start=None, end=None, category=esa.MISSING,
                             severity=code, ms=ms)


def esa_span_change(*, span: ErrorSpan, assignment: Assignment, user: User, severity: object = KEEP,
                    start: object = KEEP, end: object = KEEP, ms: int | None = None) -> ErrorSpan:
    """Re-grade and/or resize one of the annotator's spans (a pre-filled one included)."""
    check_protocol(assignment, protocols.ESA)
    if (start is not KEEP or end is not KEEP) and span.start is None:
        raise AddedSpanError(f"{esa.MISSING} has no place in the text to resize", field=("start", "end"))
    return added_span_update(span=span, assignment=assignment, user=user,
                             severity=KEEP if severity is KEEP else _severity(severity), start=start, end=end, ms=ms)


def esa_span_delete(*, span: ErrorSpan, assignment: Assignment, user: User, ms: int | None = None) -> None:
    check_protocol(assignment, protocols.ESA)
    added_span_delete(span=span, assignment=assignment, user=user, ms=ms)


@transaction.atomic
def esa_spans_done(*, assignment: Assignment, user: User, ms: int | None = None, seconds: int = 0) -> EsaScore:
    """The annotator says the spans are done: the item moves into the scoring phase, where its spans are fixed
    (undo stops at the move) and the score is asked. On a control-arm item this first ends its marking phase (its
    spans become the unprimed marks, its time the unprimed arm's)."""
    check_can_work(assignment, user)
    check_protocol(assignment, protocols.ESA)
    check_item_open(assignment, "spans")
    locked = Assignment.objects.select_for_update(of=("self",)).select_related("campaign").get(pk=assignment.pk)
    if locked.phase == Phase.SCORING:
        raise Conflict("The spans of this item are already done.")
    state, _ = EsaScore.objects.select_for_update().get_or_create(assignment_id=assignment.pk)
    if locked.in_control_arm and locked.phase == Phase.MARKING:
        locked = assignment_reveal(assignment=assignment, user=user, seconds=seconds)
    elif seconds:
        assignment_add_time(assignment=assignment, user=user, seconds=seconds)
        locked.refresh_from_db()
    for field in assignment_move(locked, Phase.SCORING):  # the spans close: undo stops here
        setattr(assignment, field, getattr(locked, field))
    state.spans_ms = ms
    state.save(update_fields=["spans_ms"])
    activity_record(assignment=assignment)
    return state


@transaction.atomic
def esa_score_set(*, assignment: Assignment, user: User, score: object, ms: int | None = None) -> EsaScore:
    """Set the segment's 0-100 score; only after the spans are done (409 before), and never once the item is
    finished (409: the score is what it was finished with, as its spans are)."""
    check_can_work(assignment, user)
    check_protocol(assignment, protocols.ESA)
    check_item_open(assignment, "score")
    value = esa.check_score(score)  # a ProtocolError (422) names the field
    phase = Assignment.objects.filter(pk=assignment.pk).values_list("phase", flat=True).first()
    state = EsaScore.objects.select_for_update().filter(assignment_id=assignment.pk).first()
    if state is None or phase != Phase.SCORING:
        raise Conflict("Mark the spans and say they are done (d) before the score.")
    EsaScore.objects.filter(pk=state.pk).update(score=value, scored_at=timezone.now(), score_ms=ms,
                                                score_changes=F("score_changes") + 1)
    activity_record(assignment=assignment)
    state.refresh_from_db()
    return state
