"""ESA figures of a campaign, gathered from its finished assignments (stats.esa computes them).

A rating is a finished, scored assignment (training and known-answer control items left out): its system is
the item's system, its segment the item's id (what every system's output of one segment shares), its rater the
username, its arm ESA in the control arm (or in a campaign without runs) and ESA^AI otherwise. Its spans are
the annotator's own spans on the item in the campaign; its seconds the working time the study reports for both
arms (annotator.services.control_arm.work_seconds). The annotators the quality checks flag are left out or
counted as every analytics answer decides, and derived items (planted copies) are no rating of a system
(analytics.selectors.exclusion.rated_assignments).
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

from accounts.models import User
from analytics.selectors.exclusion import Exclusion, exclusion_for, rated_assignments
from analytics.selectors.systems import system_rows
from annotator.models import Assignment, Campaign, EsaPrefill, EsaScore
from annotator.selectors.esa import ESA_AI_ARM, esa_arm
from annotator.services.control_arm import work_seconds
from corpus import protocols
from corpus.interop.pearmut import PearmutRating, PearmutSpan
from corpus.models import ErrorSpan, Item
from corpus.protocols import esa, prefill
from corpus.selectors.pearmut import item_fields, stored_span
from errors import UserError
from stats import esa as stats
from stats.correlation import Correlation
from stats.overlap import PRF

RESAMPLES = 1000
MAX_RESAMPLES = 100_000
SEED = 0
SEED_MIN, SEED_MAX = 0, 2**32 - 1  # numpy's seeds
NO_SYSTEM = "(no system)"


class EsaData:
    """The campaign's real ratings (`rated_assignments` under the exclusion) in the statistics' shape, with
    ESA^AI's pre-filled spans and what became of them."""

    def __init__(self, exclusion: Exclusion) -> None:
        campaign = self.campaign = exclusion.campaign
        assignments = list(rated_assignments(exclusion).select_related("item", "campaign").order_by("pk"))
        scores = dict(EsaScore.objects.filter(assignment__in=assignments, score__isnull=False)
                      .values_list("assignment_id", "score"))
        phase_ms = dict(EsaScore.objects.filter(assignment__in=assignments).values_list("assignment_id", "spans_ms"))
        self.assignments = [a for a in assignments if a.pk in scores]
        names = dict(User.objects.filter(pk__in={a.annotator_id for a in self.assignments})
                     .values_list("pk", "username"))
        spans: dict[tuple[int, int], dict[int, stats.Span]] = defaultdict(dict)
        for pk, item_id, annotator_id, start, end, severity in (
            ErrorSpan.objects.filter(annotation__source__added__campaign=campaign)
            .order_by("start", "pk")
            .values_list("pk", "annotation__item_id", "annotation__source__added__annotator_id", "start", "end",
                         "severity")
        ):
            spans[(item_id, annotator_id)][pk] = stats.Span(start, end, esa.severity_of_code(severity))
        prefills: dict[int, list[EsaPrefill]] = defaultdict(list)
        for row in EsaPrefill.objects.filter(assignment__in=self.assignments).order_by("start", "pk"):
            prefills[row.assignment_id].append(row)
        self.ratings: list[stats.Rating] = []
        self.prefilled: list[tuple[list[stats.Prefilled], int]] = []
        self.machine: dict[tuple[str, str], list[tuple[int, int]]] = {}
        self.kept: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
        has_runs = campaign.runs.exists()
        for a in self.assignments:
            mine = spans.get((a.item_id, a.annotator_id), {})
            arm = stats.ESA_AI if esa_arm(a, has_runs=has_runs) == ESA_AI_ARM else stats.ESA
            rating = stats.Rating(
                system=a.item.system or NO_SYSTEM, segment=a.item.external_id, rater=names[a.annotator_id],
                score=float(scores[a.pk]), spans=tuple(mine.values()), arm=arm, seconds=float(work_seconds(a)),
                spans_ms=phase_ms.get(a.pk))
            self.ratings.append(rating)
            if arm != stats.ESA_AI:
                continue
            origins = prefills.get(a.pk, [])
            made = [stats.Prefilled(p.start, p.end, esa.severity_of_code(p.severity), mine.get(p.span_id))
                    for p in origins]
            self.prefilled.append((made, len(set(mine) - {p.span_id for p in origins})))
            self.machine.setdefault(rating.output, [(p.start, p.end) for p in origins])
            self.kept[rating.output] += [(p.start, p.end) for p, m in zip(origins, made, strict=True) if m.final]


def _corr(c: Correlation) -> dict[str, Any]:
    return {"n": c.n, "pearson": c.pearson, "pearson_p": c.pearson_p, "kendall": c.kendall, "kendall_p": c.kendall_p}


def _f1(prf: PRF) -> float | None:
    return prf.f1


def _paired(p: stats.Paired) -> dict[str, Any]:
    return {"difference": p.difference, "ci_low": p.ci_low, "ci_high": p.ci_high, "outputs": p.outputs}


def campaign_esa(campaign: Campaign, *, n_resamples: int = RESAMPLES, seed: int = SEED,
                 exclude_flagged: bool | None = None) -> dict[str, Any]:
    """Every ESA figure of a campaign as JSON: what GET /api/analytics/campaigns/ID/esa returns and
    `manage.py esa_scores` prints (docs: guides/esa.md), the flagged annotators left out or counted as
    `exclude_flagged` says (None: the campaign's setting) and named as the other analytics answers name them."""
    exclusion = exclusion_for(campaign, exclude_flagged)
    data = EsaData(exclusion)
    ranking = stats.system_ranking(data.ratings, n_resamples=n_resamples, seed=seed)
    agreement = stats.rater_agreement(data.ratings)
    outcomes = stats.prefill_outcomes(data.prefilled)
    arms = stats.arm_comparison(data.ratings, machine=data.machine, kept=data.kept, n_resamples=n_resamples,
                                seed=seed)
    return {
        "campaign": campaign.pk,
        "ratings": len(data.ratings),
        "resamples": n_resamples,
        "seed": seed,
        "exclude_flagged": exclusion.exclude,
        "excluded": list(exclusion.excluded),
        "systems": system_rows(ranking.systems),
        "pairs": [{"a": p.a, "b": p.b, "difference": p.difference, "p": p.p, "p_holm": p.p_holm,
                   "segments": p.segments} for p in ranking.pairs],
        "severities": [{"system": c.system, "ratings": c.ratings, "minor": c.minor, "major": c.major,
                        "missing": c.missing, "spans": c.spans, "per_rating": c.per_rating}
                       for c in stats.severity_counts(data.ratings)],
        "agreement": {
            "scores": _corr(agreement.scores), "char_f1": _f1(agreement.char),
            "char_f1_severity": _f1(agreement.char_labelled),
            "pairs": [{"a": p.a, "b": p.b, "outputs": p.outputs, **{k: v for k, v in _corr(p.scores).items()
                                                                     if k != "n"},
                       "char_f1": _f1(p.char), "char_f1_severity": _f1(p.char_labelled)} for p in agreement.pairs],
        },
        "prefill": {"outputs": outcomes.outputs, "prefilled": outcomes.prefilled, "kept": outcomes.kept,
                    "deleted": outcomes.deleted, "resized": outcomes.resized, "regraded": outcomes.regraded,
                    "added": outcomes.added, "major_from": prefill.major_from(campaign.protocol_options)},
        "arms": {
            "arms": [{"arm": a.arm, "ratings": a.ratings, "outputs": a.outputs, "score": a.score, "spans": a.spans,
                      "minor": a.minor, "major": a.major, "seconds": a.seconds,
                      "seconds_per_item": a.seconds_per_item, "seconds_per_span": a.seconds_per_span,
                      "span_phase_seconds_per_span": a.span_phase_seconds_per_span} for a in arms.arms],
            "score_difference": _paired(arms.score),
            "spans_difference": _paired(arms.spans),
            "machine": {"machine_spans": arms.machine.machine_spans, "found_unprimed": arms.machine.found_unprimed,
                        "kept_primed": arms.machine.kept_primed},
        },
    }


def has_esa_figures(campaign: Campaign) -> bool:
    """Whether the campaign's protocol declares ESA's scores among its figures (asked, not named)."""
    return "esa_scores" in protocols.get(campaign.protocol).figures


class NotEsa(UserError):
    """Figures asked of a campaign that does not run ESA, or with settings out of range (422)."""


def check_esa_request(campaign: Campaign, *, resamples: int, seed: int) -> None:
    """Refuse, naming the field, what campaign_esa cannot answer."""
    if not has_esa_figures(campaign):
        raise NotEsa(f"campaign: {campaign.name!r} runs the {campaign.protocol} protocol; ESA figures need "
                     f"protocol {protocols.ESA!r}", field="campaign")
    if not 1 <= resamples <= MAX_RESAMPLES:
        raise NotEsa(f"resamples: from 1 to {MAX_RESAMPLES}, not {resamples}", field="resamples")
    if not SEED_MIN <= seed <= SEED_MAX:
        raise NotEsa(f"seed: from {SEED_MIN} to {SEED_MAX}, not {seed}", field="seed")


def _epoch(moment: datetime | None) -> float | None:
    return None if moment is None else round(moment.timestamp(), 3)


def campaign_pearmut_ratings(campaign: Campaign) -> list[PearmutRating]:
    """The campaign's scored, finished ratings as Pearmut's log holds them: the user's document `item_i` is the
    item's place in their queue (0-based), the item what they saw (ESA^AI's pre-filled spans as they arrived),
    the rating their score and spans, the actions the moments the item screen recorded."""
    scored = {s.assignment_id: s for s in EsaScore.objects.filter(
        assignment__campaign=campaign, assignment__status=Assignment.Status.DONE, assignment__is_training=False,
        score__isnull=False)}
    assignments = list(Assignment.objects.filter(pk__in=list(scored)).select_related("item", "annotator")
                       .order_by("annotator__username", "order"))
    items = {row["pk"]: row for row in Item.objects.filter(pk__in={a.item_id for a in assignments})
             .values("pk", "system", "external_id", "position", "output", "inputs", "reference", "extra")}
    spans: dict[tuple[int, int], list[PearmutSpan]] = defaultdict(list)
    for item_id, annotator_id, start, end, severity, category in (
        ErrorSpan.objects.filter(annotation__source__added__campaign=campaign).order_by("start", "pk")
        .values_list("annotation__item_id", "annotation__source__added__annotator_id", "start", "end", "severity",
                     "category")
    ):
        spans[(item_id, annotator_id)].append(stored_span(start, end, severity, category))
    prefills: dict[int, list[PearmutSpan]] = defaultdict(list)
    for row in EsaPrefill.objects.filter(assignment_id__in=list(scored)).order_by("start", "pk"):
        prefills[row.assignment_id].append(PearmutSpan(row.start, row.end, esa.severity_of_code(row.severity)))
    out = []
    has_runs = campaign.runs.exists()
    for a in assignments:
        state = scored[a.pk]
        fields = item_fields(items[a.item_id])
        actions = [{"time": t, "action": name} for name, t in (
            ("load", _epoch(state.opened_at)), ("spans_done", _epoch(state.spans_done_at)),
            ("score", _epoch(state.scored_at)), ("submit", _epoch(a.finished_at))) if t is not None]
        out.append(PearmutRating(
            user_id=a.annotator.username, item_i=a.order - 1, k=0, m=0, item_id=fields["item_id"],
            system=items[a.item_id]["system"] or NO_SYSTEM, source=fields["source"], reference=fields["reference"],
            output=items[a.item_id]["output"], score=float(state.score),
            spans=spans.get((a.item_id, a.annotator_id), []),
            prefill=prefills.get(a.pk, []) if esa_arm(a, has_runs=has_runs) == ESA_AI_ARM else None,
            line_extra={"actions": actions},
        ))
    return out
