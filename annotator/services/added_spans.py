"""Errors the machines missed: annotators add, edit and delete their own spans with exact offsets."""

from __future__ import annotations

from django.db import transaction
from django.db.models import Max

from accounts.models import User
from annotator.access import check_can_work, check_item_open
from annotator.models import AddedSource, Assignment, Campaign, UnprimedMark, WorkAction
from annotator.protocols import hooks_for
from annotator.services.actions import action_record, activity_record
from corpus import cleaning, protocols
from corpus.models import Annotation, AnnotationKind, ErrorSpan, Item, MatchKind
from corpus.protocols import opennlgauge as protocol
from errors import UserError

KEEP: object = object()
"""Default of added_span_update's fields: leave the stored value as it is."""
MAX_NOTE = 4000
SEVERITY_RULE = f"severity must be {min(protocol.SEVERITIES)} to {max(protocol.SEVERITIES)}"
MAX_CATEGORY = 100
MAX_ASPECT = 200  # Annotation.aspect


class AddedSpanError(UserError):
    """An added span that cannot be stored (bad offsets, bad severity, closed campaign, not yours)."""


def _offsets(output: str, start: object, end: object) -> tuple[int, int]:
    try:
        a, b = int(str(start)), int(str(end))
    except ValueError:
        raise AddedSpanError("start and end must be whole numbers", field=("start", "end")) from None
    if not 0 <= a < b <= len(output):
        raise AddedSpanError(f"offsets must satisfy 0 <= start < end <= {len(output)}; got {a}-{b}",
                             field=("start", "end"))
    return a, b


def _severity(campaign: Campaign, value: object) -> int | None:
    """A severity code the campaign's protocol allows (MQM's Neutral, Minor, Major are 1, 2 and 4)."""
    declared = protocols.get(campaign.protocol)
    rule = SEVERITY_RULE if declared.severity_scale else (
        f"severity must be one of {', '.join(map(str, declared.severities))}")
    if value in (None, ""):
        if declared.severity_required:
            raise AddedSpanError(f"{rule} (the {declared.name} protocol needs one)", field="severity")
        return None
    try:
        number = int(str(value))
    except ValueError:
        raise AddedSpanError(rule, field="severity") from None
    if number not in declared.severities:
        raise AddedSpanError(rule, field="severity")
    return number


def _text(value: object, limit: int, name: str) -> str:
    text = "" if value is None else str(value).strip()
    return cleaning.check_field(text, name, max_length=limit, error=AddedSpanError)


def _category(campaign: Campaign, value: object) -> str:
    """A category of the campaign's protocol (MQM: its error tree) or label set (any short text when the
    campaign defines none)."""
    text = _text(value, MAX_CATEGORY, "category")
    tree = protocols.get(campaign.protocol).categories(campaign.protocol_options)
    if tree is not None:
        if text not in tree:
            raise AddedSpanError(f"category {text!r} is not in this campaign's error tree", field="category")
        return text
    names = [c["name"] for c in campaign.categories or []]
    if text and names and text not in names:
        raise AddedSpanError(f"category {text!r} is not one of this campaign's: {', '.join(names)}", field="category")
    return text


def _check_spans_open(assignment: Assignment) -> None:
    """A protocol may close the spans before the item is done (ESA: once they are done, the score follows them)."""
    if (closed := hooks_for(assignment.campaign).spans_closed(assignment)) is not None:
        raise AddedSpanError(closed)


def _side(campaign: Campaign, value: object) -> str:
    """Where a new error lies: the output, or the source where the protocol marks errors there (MQM's
    omissions)."""
    side = protocols.OUTPUT if value in (None, "") else str(value)
    if side not in (protocols.OUTPUT, protocols.SOURCE):
        raise AddedSpanError(f"side must be {protocols.OUTPUT} or {protocols.SOURCE}; got {side[:40]!r}", field="side")
    declared = protocols.get(campaign.protocol)
    if side not in declared.marks:
        raise AddedSpanError(f"the {declared.name} protocol marks no errors in the {side}", field="side")
    return side


def marked_text(span: ErrorSpan | None, item: Item, side: str) -> str:
    """The text an error's offsets count in: the item's source for one marked there, else its output."""
    in_source = span.in_source if span is not None else side == protocols.SOURCE
    return protocols.source_text(item.inputs) if in_source else item.output


def _location(campaign: Campaign, text: str, start: object, end: object,
              category: object) -> tuple[int, int] | tuple[None, None]:
    """The offsets of a new error; none for the protocol's unlocated category (ESA's missing content) only."""
    declared = protocols.get(campaign.protocol)
    unlocated = declared.unlocated_category
    if protocols.UNPLACED in declared.marks and category == unlocated:
        if start is not None or end is not None:
            raise AddedSpanError(f"{unlocated} has no place in the text: send no offsets", field=("start", "end"))
        return None, None
    return _offsets(text, start, end)


def _check_not_unprimed(span: ErrorSpan) -> None:
    """An error marked before the reveal is the control arm's evidence: it stays exactly as it was marked."""
    if UnprimedMark.objects.filter(span_id=span.pk).exists():
        raise AddedSpanError("this error was marked before the machine's errors were shown; it can no longer change")


def snapshot(span: ErrorSpan) -> dict[str, object]:
    """What it takes to recreate an added error exactly (the undo stack keeps it)."""
    if span.in_source:
        return {"start": span.source_start, "end": span.source_end, "side": protocols.SOURCE,
                "category": span.category, "severity": span.severity, "note": span.explanation,
                "aspect": span.annotation.aspect}
    return {"start": span.start, "end": span.end, "category": span.category, "severity": span.severity,
            "note": span.explanation, "aspect": span.annotation.aspect}


def _aspect(campaign: Campaign, aspect: str | None) -> str:
    aspects = list(campaign.aspects or [])
    if not aspect:
        return aspects[0] if aspects else ""
    aspect = _text(aspect, MAX_ASPECT, "aspect")
    if aspects and aspect not in aspects:
        raise AddedSpanError(f"aspect {aspect!r} is not judged in this campaign ({', '.join(aspects)})", field="aspect")
    return aspect


@transaction.atomic
def added_span_create(
    *, assignment: Assignment, user: User, start: object, end: object, aspect: str | None = None,
    category: object = "", severity: object = None, note: object = "", side: object = None, record: bool = True,
    ms: int | None = None,
) -> ErrorSpan:
    """Store a missed error as a span of the annotator's own human annotation of the item; `side` SOURCE puts
    it in the item's source (offsets count there) where the protocol marks errors in the source.

    The annotation's source is the annotator's source in this campaign (labelled with their username), so
    the same expert adding errors to the same item in another campaign writes to another annotation."""
    check_can_work(assignment, user)
    if record:
        check_item_open(assignment, "errors")
    _check_spans_open(assignment)
    where = _side(assignment.campaign, side)
    text = marked_text(None, assignment.item, where)
    a, b = _location(assignment.campaign, text, start, end, category)
    in_source = where == protocols.SOURCE
    aspect_name = _aspect(assignment.campaign, aspect)
    source, _ = AddedSource.objects.get_or_create(
        campaign_id=assignment.campaign_id, annotator=user, defaults={"label": user.username}
    )
    annotation, _ = Annotation.objects.get_or_create(
        item_id=assignment.item_id, aspect=aspect_name, source=source, kind=AnnotationKind.HUMAN, model="",
        defaults={"author": user},
    )
    position = (annotation.spans.aggregate(m=Max("position"))["m"] or 0) + 1
    span = ErrorSpan.objects.create(
        annotation=annotation, position=position, text="" if a is None else text[a:b],
        start=None if in_source else a, end=None if in_source else b,
        source_start=a if in_source else None, source_end=b if in_source else None,
        match=MatchKind.NONE if in_source else MatchKind.EXACT,
        category=_category(assignment.campaign, category), severity=_severity(assignment.campaign, severity),
        explanation=_text(note, MAX_NOTE, "note"),  # the annotator's note is this error's explanation
    )
    if record:
        action_record(assignment=assignment, user=user, kind=WorkAction.Kind.ADDED,
                      payloads=[{"span": span.pk, "before": None, "after": snapshot(span)}], ms=ms)
        activity_record(assignment=assignment)
    return span


@transaction.atomic
def added_span_update(
    *, span: ErrorSpan, assignment: Assignment, user: User, category: object = KEEP, severity: object = KEEP,
    note: object = KEEP, start: object = KEEP, end: object = KEEP, record: bool = True, ms: int | None = None,
) -> ErrorSpan:
    """Change an added span's category, severity, note and (optionally) its offsets; KEEP leaves a field."""
    check_can_work(assignment, user)
    if record:
        check_item_open(assignment, "errors")
    _check_spans_open(assignment)
    _check_not_unprimed(span)
    before = snapshot(span)
    fields: list[str] = []
    if start is not KEEP or end is not KEEP:  # an error stays on its side: offsets count in its own text
        text = marked_text(span, assignment.item, protocols.OUTPUT)
        first, last = ("source_start", "source_end") if span.in_source else ("start", "end")
        a, b = _offsets(text, getattr(span, first) if start is KEEP else start,
                        getattr(span, last) if end is KEEP else end)
        setattr(span, first, a)
        setattr(span, last, b)
        span.text = text[a:b]
        fields += [first, last, "text"]
    if category is not KEEP:
        span.category = _category(assignment.campaign, category)
        fields.append("category")
    if severity is not KEEP:
        span.severity = _severity(assignment.campaign, severity)
        fields.append("severity")
    if note is not KEEP:
        span.explanation = _text(note, MAX_NOTE, "note")
        fields.append("explanation")
    if fields:
        span.save(update_fields=fields)
        after = snapshot(span)
        if record and after != before:
            action_record(assignment=assignment, user=user, kind=WorkAction.Kind.ADDED,
                          payloads=[{"span": span.pk, "before": before, "after": after}], ms=ms)
            activity_record(assignment=assignment)
    return span


@transaction.atomic
def added_span_delete(
    *, span: ErrorSpan, assignment: Assignment, user: User, record: bool = True, ms: int | None = None
) -> None:
    """Delete an added span, and its annotation when no span is left in it."""
    check_can_work(assignment, user)
    if record:
        check_item_open(assignment, "errors")
    _check_spans_open(assignment)
    _check_not_unprimed(span)
    if record:
        action_record(assignment=assignment, user=user, kind=WorkAction.Kind.ADDED,
                      payloads=[{"span": span.pk, "before": snapshot(span), "after": None}], ms=ms)
        activity_record(assignment=assignment)
    annotation_id = span.annotation_id
    span.delete()
    if not ErrorSpan.objects.filter(annotation_id=annotation_id).exists():
        Annotation.objects.filter(pk=annotation_id).delete()
