"""Selectors of the quality checks: each annotator's telemetry and vigilance in a campaign, and who is flagged.

`annotator_flags(campaign, user)` is the one question other parts ask ("is this annotator flagged, and why?");
`exclusion_for(campaign, choice)` the one answer to "whose work do the real figures leave out?".
"""

from __future__ import annotations

from collections import OrderedDict, defaultdict
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from django.db.models import Count, Max, Q, Sum

from accounts.models import User
from annotator.models import (
    AddedSource,
    Assignment,
    Campaign,
    ControlVerdict,
    ItemScore,
    JudgmentEvent,
    SpanJudgment,
    UnitOutput,
    WorkAction,
)
from annotator.selectors.worktime import times_by_annotator
from corpus import protocols
from corpus.models import AnnotationKind, ErrorSpan
from corpus.protocols import opennlgauge as protocol
from quality.engine.figures import Figures, Verdict, flag_reasons
from quality.models import CheckSpan, PlantedOutput, Qualification
from stats.intervals import wilson
from stats.overlap import shared_chars


@dataclass
class AnnotatorChecks:
    """One annotator's row of the vigilance table."""

    user_id: int
    annotator: str
    figures: Figures
    active_seconds: float  # working time, annotator.selectors.worktime
    wall_seconds: int
    qualification: Qualification | None
    reasons: list[str]

    def as_dict(self) -> dict[str, Any]:
        """The row of `GET /api/campaigns/ID/vigilance` (and `manage.py vigilance`)."""
        f = self.figures
        q = self.qualification
        return {
            "annotator": self.annotator,
            "decoys": {"shown": f.decoys.n, "rejected": f.decoys.k, "rate": f.decoys.rate,
                       "ci_low": f.decoys.low, "ci_high": f.decoys.high},
            "planted": {"shown": f.planted.n, "found": f.planted.k, "rate": f.planted.rate,
                        "ci_low": f.planted.low, "ci_high": f.planted.high},
            "median_ms_to_verdict": f.median_ms,
            "confirm_rate": f.confirm_rate,
            "fast_confirm_rate": f.fast_confirm_rate,
            "changed_rate": f.changed_rate,
            "drift": f.drift(),
            "active_seconds": round(self.active_seconds, 1),
            "wall_seconds": self.wall_seconds,
            "qualification": None if q is None else {"passed": q.passed, "score": q.score},
            "flagged": bool(self.reasons),
            "reasons": self.reasons,
        }


def _verdicts(campaign: Campaign) -> dict[int, list[Verdict]]:
    """Per annotator, their span verdicts on real work (not training) in the order first given."""
    judgments = SpanJudgment.objects.filter(assignment__campaign=campaign, assignment__is_training=False).exclude(
        span_verdict="").values_list("pk", "annotator_id", "span_verdict")
    events: dict[int, list[tuple[str, int | None]]] = defaultdict(list)
    first: dict[int, int] = {}  # judgment -> the rank of its first event in time (the database orders them)
    for rank, (judgment_id, old, ms) in enumerate(
        JudgmentEvent.objects.filter(judgment__assignment__campaign=campaign, field="span_verdict", undone=False)
        .order_by("at", "pk").values_list("judgment_id", "old_value", "ms")
    ):
        events[judgment_id].append((old, ms))
        first.setdefault(judgment_id, rank)
    rows = sorted(judgments, key=lambda r: (r[0] not in first, first.get(r[0], 0), r[0]))
    result: dict[int, list[Verdict]] = defaultdict(list)
    for judgment_id, annotator_id, verdict in rows:
        trail = events.get(judgment_id, [])
        result[annotator_id].append(Verdict(
            confirmed=verdict == protocol.SPAN_OK, ms=trail[0][1] if trail else None,
            changed=any(old for old, _ in trail),  # a verdict that replaced another one
        ))
    return result


def _decoys(campaign: Campaign) -> dict[int, tuple[int, int]]:
    """Per annotator: (rejected, shown) over the decoys on outputs they finished or judged."""
    decoys = dict(CheckSpan.objects.filter(campaign=campaign, role=CheckSpan.Role.DECOY)
                  .values_list("span_id", "span__annotation__item_id"))
    done = defaultdict(set)
    for annotator_id, item_id in Assignment.objects.filter(
        campaign=campaign, status=Assignment.Status.DONE, is_training=False
    ).values_list("annotator_id", "item_id"):
        done[annotator_id].add(item_id)
    verdicts = {
        (a, s): v for a, s, v in SpanJudgment.objects.filter(assignment__campaign=campaign, span_id__in=list(decoys))
        .values_list("annotator_id", "span_id", "span_verdict")
    }
    on_item: dict[int, list[int]] = defaultdict(list)
    for span_id, item_id in decoys.items():
        on_item[item_id].append(span_id)
    judged: dict[int, set[int]] = defaultdict(set)
    for annotator_id, span_id in verdicts:
        judged[annotator_id].add(span_id)
    result = {}
    for annotator_id in set(done) | set(judged):
        shown = judged[annotator_id].union(*(on_item[item_id] for item_id in done[annotator_id]))
        rejected = sum(verdicts.get((annotator_id, s)) == protocol.SPAN_NOT_ERROR for s in shown)
        result[annotator_id] = (rejected, len(shown))
    return result


def _planted(campaign: Campaign) -> dict[int, tuple[int, int]]:
    """Per annotator: (found, shown) over their planted outputs they finished, caught as the protocol declares."""
    check = protocols.get(campaign.protocol).planted_check
    if check == protocols.SCORED_LOWER:
        return _planted_scored_lower(campaign)
    if check == protocols.PREFERRED:
        return _planted_preferred(campaign)
    return _planted_marked(campaign)


def _planted_preferred(campaign: Campaign) -> dict[int, tuple[int, int]]:
    """A planted screen shows the copy beside its original: caught when the finished screen's choice is the
    original (a tie, or the copy, misses it)."""
    copies = {(p.annotator_id, p.item_id) for p in PlantedOutput.objects.filter(campaign=campaign,
                                                                                annotator__isnull=False)}
    rows = (UnitOutput.objects.filter(unit__campaign=campaign, unit__finished_at__isnull=False,
                                      assignment__item__derived_from__isnull=False)
            .values_list("unit_id", "unit__annotator_id", "unit__choice", "assignment__item_id", "position"))
    screens: dict[int, list[tuple]] = defaultdict(list)
    for row in rows:
        screens[row[0]].append(row)
    result: dict[int, tuple[int, int]] = {}
    for members in screens.values():
        copy = next((m for m in members if (m[1], m[3]) in copies), None)
        if copy is None:
            continue
        annotator_id, choice = copy[1], copy[2]
        found = choice not in (None, 0) and choice != copy[4]
        k, n = result.get(annotator_id, (0, 0))
        result[annotator_id] = (k + found, n + 1)
    return result


def _planted_scored_lower(campaign: Campaign) -> dict[int, tuple[int, int]]:
    """Appraise's BAD items: a finished copy is caught when its score is below the original's - the holder's own
    score of the original when they finished it, else the mean of the others' (a copy whose original nobody has
    scored yet does not count)."""
    scores: dict[tuple[int, int], int] = {
        (a, i): v for a, i, v in ItemScore.objects.filter(
            assignment__campaign=campaign, assignment__status=Assignment.Status.DONE, score__isnull=False)
        .values_list("assignment__annotator_id", "assignment__item_id", "score")}
    by_item: dict[int, list[int]] = defaultdict(list)
    for (_, item_id), value in scores.items():
        by_item[item_id].append(value)
    result: dict[int, tuple[int, int]] = {}
    for planted in PlantedOutput.objects.filter(campaign=campaign, annotator__isnull=False):
        copy = scores.get((planted.annotator_id, planted.item_id))
        original = scores.get((planted.annotator_id, planted.original_id))
        if original is None and by_item.get(planted.original_id):
            original = sum(by_item[planted.original_id]) / len(by_item[planted.original_id])
        if copy is None or original is None:
            continue
        k, n = result.get(planted.annotator_id, (0, 0))
        result[planted.annotator_id] = (k + (copy < original), n + 1)
    return result


def _planted_marked(campaign: Campaign) -> dict[int, tuple[int, int]]:
    """Found = an error the holder added overlaps the planted stretch."""
    done = set(Assignment.objects.filter(campaign=campaign, status=Assignment.Status.DONE)
               .values_list("annotator_id", "item_id"))
    added = defaultdict(list)
    sources = dict(AddedSource.objects.filter(campaign=campaign).values_list("pk", "annotator_id"))
    for source_id, item_id, start, end in ErrorSpan.objects.filter(
        annotation__source_id__in=list(sources), annotation__kind=AnnotationKind.HUMAN, start__isnull=False
    ).values_list("annotation__source_id", "annotation__item_id", "start", "end"):
        added[(sources[source_id], item_id)].append((start, end))
    result: dict[int, tuple[int, int]] = {}
    for planted in PlantedOutput.objects.filter(campaign=campaign):
        if (planted.annotator_id, planted.item_id) not in done:
            continue
        found = any(shared_chars((planted.start, planted.end), span)
                    for span in added[(planted.annotator_id, planted.item_id)])
        k, n = result.get(planted.annotator_id, (0, 0))
        result[planted.annotator_id] = (k + found, n + 1)
    return result


_MEMO: OrderedDict[tuple, list[AnnotatorChecks]] = OrderedDict()
_MEMO_SIZE = 32


def _inputs_version(campaign: Campaign) -> tuple:
    """A fingerprint of everything the checks read for `campaign`: verdicts given, changed or undone, items
    finished, added errors, decoys and planted outputs, qualification results, the vigilance threshold. An item
    score's every change is a WorkAction (its undo and redo mark one), so the actions' aggregates cover it.

    A handful of aggregates, so the participants page, the analytics (which ask whose verdicts count for every
    figure) and the end page compute the checks once per state of the campaign, not once per question."""
    judgments = SpanJudgment.objects.filter(assignment__campaign=campaign).aggregate(
        n=Count("id"), last=Max("updated_at"))
    assignments = Assignment.objects.filter(campaign=campaign).aggregate(
        n=Count("id"), top=Max("id"), who=Sum("annotator_id"), last=Max("finished_at"),
        done=Count("id", filter=Q(status=Assignment.Status.DONE)),
        active=Sum("active_seconds"), signal=Max("last_active_at"))
    events = JudgmentEvent.objects.filter(judgment__assignment__campaign=campaign).aggregate(
        top=Max("id"), undone=Count("id", filter=Q(undone=True)))
    actions = WorkAction.objects.filter(assignment__campaign=campaign).aggregate(
        top=Max("id"), undone=Count("id", filter=Q(undone=True)), last=Max("undone_at"))
    checks = CheckSpan.objects.filter(campaign=campaign).aggregate(n=Count("id"), top=Max("id"))
    planted = PlantedOutput.objects.filter(campaign=campaign).aggregate(n=Count("id"), top=Max("id"))
    qualified = Qualification.objects.filter(campaign=campaign).aggregate(
        n=Count("id"), last=Max("decided_at"), attempts=Sum("attempts"))
    return (campaign.pk, campaign.vigilance_min, *(tuple(sorted(d.items())) for d in (
        judgments, assignments, events, actions, checks, planted, qualified)))


def campaign_checks(campaign: Campaign) -> list[AnnotatorChecks]:
    """Every annotator of the campaign with their telemetry, vigilance and flags, by name (computed once per
    state of the campaign's data; see `_inputs_version`)."""
    key = _inputs_version(campaign)
    if key in _MEMO:
        _MEMO.move_to_end(key)
        return _MEMO[key]
    rows = _campaign_checks(campaign)
    _MEMO[key] = rows
    while len(_MEMO) > _MEMO_SIZE:
        _MEMO.popitem(last=False)
    return rows


def _campaign_checks(campaign: Campaign) -> list[AnnotatorChecks]:
    verdicts = _verdicts(campaign)
    decoys = _decoys(campaign)
    planted = _planted(campaign)
    qualifications = {q.annotator_id: q for q in Qualification.objects.filter(campaign=campaign)}
    times = times_by_annotator(Assignment.objects.filter(campaign=campaign))
    users = User.objects.filter(pk__in=list(times)).order_by("username")
    rows = []
    for user in users:
        q = qualifications.get(user.pk)
        figures = Figures(
            verdicts=verdicts.get(user.pk, []),
            decoys=wilson(*decoys.get(user.pk, (0, 0))),
            planted=wilson(*planted.get(user.pk, (0, 0))),
            qualification_passed=None if q is None else q.passed,
        )
        rows.append(AnnotatorChecks(
            user_id=user.pk, annotator=user.username, figures=figures,
            active_seconds=times[user.pk].active, wall_seconds=round(times[user.pk].wall),
            qualification=q, reasons=flag_reasons(figures, vigilance_min=campaign.vigilance_min),
        ))
    return rows


def annotator_flags(campaign: Campaign, user: User) -> list[str]:
    """Why `user` is flagged in `campaign` (reason codes of quality.engine.figures); empty = not flagged."""
    for row in campaign_checks(campaign):
        if row.user_id == user.pk:
            return row.reasons
    return []


@dataclass(frozen=True)
class Exclusion:
    """The choice a set of figures was computed under, and whom it left out. Who is flagged is asked of the
    quality checks only when needed (leaving out, or naming them), so an answer that counts everyone costs
    nothing more."""

    campaign: Campaign
    exclude: bool  # flagged annotators are left out of every figure
    asked: bool  # chosen for this request; False: the campaign's setting

    @cached_property
    def _flagged(self) -> list[AnnotatorChecks]:
        return [row for row in campaign_checks(self.campaign) if row.reasons]

    @property
    def flagged(self) -> tuple[str, ...]:
        """Every annotator the quality checks flag, by name."""
        return tuple(row.annotator for row in self._flagged)

    @property
    def excluded(self) -> tuple[str, ...]:
        return self.flagged if self.exclude else ()

    @property
    def excluded_ids(self) -> tuple[int, ...]:
        return tuple(row.user_id for row in self._flagged) if self.exclude else ()

    @property
    def origin(self) -> str:
        return "chosen for these figures" if self.asked else "the campaign's setting"

    def sentence(self) -> str:
        """One sentence a reader of any report format needs before the first figure."""
        who = ", ".join(self.flagged)
        if self.exclude:
            left = (f"left out of every figure: {who}" if self.flagged
                    else "to be left out of every figure, and nobody is flagged")
            return f"Flagged annotators are {left} ({self.origin})."
        counted = f"counted in every figure: {who}" if self.flagged else "counted; nobody is flagged"
        return f"Flagged annotators are {counted} ({self.origin})."


def exclusion_for(campaign: Campaign, exclude_flagged: bool | None) -> Exclusion:
    """Resolve a request's choice against the campaign: None follows its `exclude_flagged` setting, True leaves
    the flagged annotators out, False counts them. Every figure, export and report resolves it here."""
    exclude = campaign.exclude_flagged if exclude_flagged is None else exclude_flagged
    return Exclusion(campaign=campaign, exclude=exclude, asked=exclude_flagged is not None)


def excluded_annotator_ids(campaign_id: int | None, *, exclude_flagged: bool | None = None) -> list[int]:
    """The annotators whose work the campaign's real figures leave out (`exclusion_for`), for callers that hold
    only the campaign's id."""
    if campaign_id is None or exclude_flagged is False:
        return []  # nobody is left out: the checks need not run
    campaign = Campaign.objects.filter(pk=campaign_id).first()
    return [] if campaign is None else list(exclusion_for(campaign, exclude_flagged).excluded_ids)


@dataclass
class KeyRow:
    """One error of a finished training item: the annotator's verdicts beside the key and its note."""

    number: int
    label: str
    text: str
    given_span: str
    given_explanation: str
    key_span: str
    key_explanation: str
    note: str

    @property
    def span_right(self) -> bool:
        return self.given_span == self.key_span


def training_key(assignment: Assignment, rows: list) -> list[KeyRow]:
    """The key of a training item beside the annotator's own verdicts (shown once the item is finished)."""
    keys = {k.span_id: k for k in ControlVerdict.objects.filter(campaign_id=assignment.campaign_id,
                                                                 span_id__in=[r.span.pk for r in rows])}
    result = []
    for row in rows:
        key = keys.get(row.span.pk)
        if key is None:
            continue
        j = row.judgment
        result.append(KeyRow(
            number=row.number, label=row.label, text=row.span.text,
            given_span=j.span_verdict if j else "", given_explanation=j.explanation_verdict if j else "",
            key_span=key.span_verdict, key_explanation=key.explanation_verdict, note=key.note,
        ))
    return result
