"""Selectors of the quality checks: each annotator's telemetry and vigilance in a campaign, and who is flagged.

`annotator_flags(campaign, user)` is the one question other parts ask ("is this annotator flagged, and why?").
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from django.db.models import Sum

from accounts.models import User
from annotator.models import AddedSource, Assignment, Campaign, ControlVerdict, JudgmentEvent, SpanJudgment
from corpus.models import AnnotationKind, ErrorSpan
from quality.engine.figures import Figures, Verdict, flag_reasons
from quality.models import CheckSpan, PlantedOutput, Qualification
from stats.intervals import wilson


@dataclass
class AnnotatorChecks:
    """One annotator's row of the vigilance table."""

    user_id: int
    annotator: str
    figures: Figures
    active_seconds: float
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
    first_at: dict[int, object] = {}
    for judgment_id, old, ms, at in (
        JudgmentEvent.objects.filter(judgment__assignment__campaign=campaign, field="span_verdict", undone=False)
        .order_by("at", "pk").values_list("judgment_id", "old_value", "ms", "at")
    ):
        events[judgment_id].append((old, ms))
        first_at.setdefault(judgment_id, at)
    rows = sorted(judgments, key=lambda r: (first_at.get(r[0]) is None, first_at.get(r[0]) or 0, r[0]))
    result: dict[int, list[Verdict]] = defaultdict(list)
    for judgment_id, annotator_id, verdict in rows:
        trail = events.get(judgment_id, [])
        result[annotator_id].append(Verdict(
            confirmed=verdict == "error", ms=trail[0][1] if trail else None,
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
    result = {}
    annotators = set(done) | {a for a, _ in verdicts}
    for annotator_id in annotators:
        shown = [s for s, item_id in decoys.items()
                 if item_id in done[annotator_id] or (annotator_id, s) in verdicts]
        rejected = sum(verdicts.get((annotator_id, s)) == "not_error" for s in shown)
        result[annotator_id] = (rejected, len(shown))
    return result


def _planted(campaign: Campaign) -> dict[int, tuple[int, int]]:
    """Per annotator: (found, shown) over their planted outputs they finished; found = an error they added
    overlaps the planted stretch."""
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
        found = any(a < planted.end and planted.start < b for a, b in added[(planted.annotator_id, planted.item_id)])
        k, n = result.get(planted.annotator_id, (0, 0))
        result[planted.annotator_id] = (k + found, n + 1)
    return result


def campaign_checks(campaign: Campaign) -> list[AnnotatorChecks]:
    """Every annotator of the campaign with their telemetry, vigilance and flags, by name."""
    verdicts = _verdicts(campaign)
    decoys = _decoys(campaign)
    planted = _planted(campaign)
    qualifications = {q.annotator_id: q for q in Qualification.objects.filter(campaign=campaign)}
    times = {
        row["annotator_id"]: row for row in Assignment.objects.filter(campaign=campaign).values("annotator_id")
        .annotate(active=Sum("active_seconds"), wall=Sum("seconds_spent")).order_by()
    }
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
            active_seconds=times[user.pk]["active"] or 0.0, wall_seconds=times[user.pk]["wall"] or 0,
            qualification=q, reasons=flag_reasons(figures, vigilance_min=campaign.vigilance_min),
        ))
    return rows


def annotator_flags(campaign: Campaign, user: User) -> list[str]:
    """Why `user` is flagged in `campaign` (reason codes of quality.engine.figures); empty = not flagged."""
    for row in campaign_checks(campaign):
        if row.user_id == user.pk:
            return row.reasons
    return []


def flagged_annotator_ids(campaign: Campaign) -> list[int]:
    return [row.user_id for row in campaign_checks(campaign) if row.reasons]


def excluded_annotator_ids(campaign_id: int | None) -> list[int]:
    """The annotators whose verdicts the campaign's real figures leave out (none unless `exclude_flagged`)."""
    if campaign_id is None:
        return []
    campaign = Campaign.objects.filter(pk=campaign_id).first()
    if campaign is None or not campaign.exclude_flagged:
        return []
    return flagged_annotator_ids(campaign)


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
