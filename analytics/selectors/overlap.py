"""Overlap of each run's spans with reference spans (gold or human): span- and character-level P/R/F1."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from django.db.models import Q

from analytics.selectors.base import (
    RunInfo,
    Scope,
    _final_q,
    final_kinds,
)
from annotator.models import Adjudication, Assignment, Campaign, CampaignRun, SpanJudgment
from annotator.selectors.spans import spans_experts_confirm
from corpus.models import Annotation, AnnotationKind, ErrorSpan, SourceKind
from errors import UserError
from stats.overlap import PRF, overlap_prf_arrays

# --------------------------------------------------------------------------------------------- overlap


@dataclass(frozen=True)
class Reference:
    """Reference spans: imported gold ones, or those the humans of a campaign marked.

    `human` takes the spans annotators added (kind "human" in the campaign); with `include_confirmed`
    also the machine spans a strict majority of their judges called an Error, so that a machine is not
    charged a false positive for an error the humans confirmed instead of re-marking it. Only items with
    a finished assignment count, since only there is the human reference complete.
    """

    kind: Literal["gold", "human", "external"] = "gold"
    source: str = ""
    campaign_id: int | None = None
    include_confirmed: bool = True


class UnknownReference(UserError):
    """A reference that names no reference of the scope; the message lists the ones there are."""


@dataclass(frozen=True)
class OverlapRow:
    run_id: int
    n_items: int
    exact: PRF
    overlap: PRF
    chars: PRF
    unlocated: int


def _reference_spans(reference: Reference, scope: Scope) -> tuple[set[tuple[int, str]], dict, Q]:
    """Return the (item, aspect) pairs under the reference, their spans, and the condition on items in scope."""
    items = Q()
    if scope.dataset_id is not None:
        items &= Q(item__dataset_id=scope.dataset_id)
    if scope.system:
        items &= Q(item__system=scope.system)
    spans: dict[tuple[int, str], list[tuple[int, int] | None]] = defaultdict(list)
    if reference.kind in ("gold", "external"):
        if reference.kind == "gold":
            annotations = Annotation.objects.filter(items, kind=AnnotationKind.GOLD)
        else:
            annotations = Annotation.objects.filter(items, source__kind=SourceKind.EXTERNAL)
        if reference.source:
            annotations = annotations.filter(source__label=reference.source)
        if scope.campaign_id is not None:
            in_campaign = Assignment.objects.filter(campaign_id=scope.campaign_id).values("item_id")
            annotations = annotations.filter(item_id__in=in_campaign)
        keys = set(annotations.values_list("item_id", "aspect").order_by())
        rows = ErrorSpan.objects.filter(annotation__in=annotations).values_list(
            "annotation__item_id", "annotation__aspect", "start", "end"
        )
    else:
        campaign_id = reference.campaign_id or scope.campaign_id
        if campaign_id is None:
            raise ValueError("a human reference needs a campaign")
        aspects = Campaign.objects.filter(pk=campaign_id).values_list("aspects", flat=True).first() or []
        done = Assignment.objects.filter(items, campaign_id=campaign_id, status=Assignment.Status.DONE,
                                         is_training=False, item__derived_from__isnull=True)
        done_items = set(done.values_list("item_id", flat=True))
        run_aspects = set(
            CampaignRun.objects.filter(campaign_id=campaign_id).values_list("run__aspect__name", flat=True)
        )
        keys = {(i, a) for i in done_items for a in ((set(aspects) | run_aspects) or {""})}
        added = ErrorSpan.objects.filter(
            annotation__kind=AnnotationKind.HUMAN, annotation__source__added__campaign_id=campaign_id,
            annotation__item_id__in=done.values("item_id"),
        ).values_list("annotation__item_id", "annotation__aspect", "start", "end")
        rows = list(added)
        if reference.include_confirmed:
            confirmed = spans_experts_confirm(campaign_id, done.values("item_id")).values_list(
                "annotation__item_id", "annotation__source__run__aspect__name", "start", "end"
            )
            rows += list(confirmed)
    seen: set[tuple[int, str, int, int]] = set()
    for item_id, aspect, start, end in rows:
        if start is None:
            spans[(item_id, aspect)].append(None)
            continue
        # the same error marked twice (two gold sources, two annotators, a confirmed machine span) is one error
        if (item_id, aspect, start, end) not in seen:
            seen.add((item_id, aspect, start, end))
            spans[(item_id, aspect)].append((start, end))
    return keys, spans, items


def _majority_picks(campaign_id: int | None) -> dict[int, tuple[int | None, int | None]]:
    """Per machine span of the campaign whose occurrence its experts picked: the place a reviewer decided, else the
    place most of its pickers chose ((None, None) for "not in the output"); a tie moves nothing. Outside a campaign
    there are no picks."""
    if campaign_id is None:
        return {}
    votes: dict[int, Counter] = defaultdict(Counter)
    rows = (SpanJudgment.objects.filter(assignment__campaign_id=campaign_id)
            .filter(Q(picked_start__isnull=False) | Q(picked_none=True))
            .values_list("span_id", "picked_start", "picked_end", "picked_none"))
    for span_id, start, end, none in rows:
        votes[span_id][(None, None) if none else (start, end)] += 1
    picks = {}
    for span_id, counted in votes.items():
        (place, n), *rest = counted.most_common()
        if not rest or rest[0][1] < n:
            picks[span_id] = place
    for decision in Adjudication.objects.filter(campaign_id=campaign_id).exclude(occurrence=""):
        if (place := decision.decided_place()) is not None:  # a reviewer's decision outranks the pickers
            picks[decision.span_id] = place
    return picks


def overlap_report(
    *, runs: Sequence[RunInfo], reference: Reference, scope: Scope, imported: Sequence[RunInfo] = ()
) -> list[OverlapRow]:
    """Return each run's span-level (exact, any-overlap; one-to-one) and character-level P/R/F1.

    An item counts for a run when the reference covers it (for the run's aspect or for any aspect) and
    the run gave it a final annotation, with or without spans; spans without offsets are predictions
    that match nothing. `imported` sources (other tools' files) count like runs, all their annotations
    being their answers.
    """
    keys, ref_spans, items = _reference_spans(reference, scope)
    ref_items = {i for i, _ in keys}
    kinds = final_kinds([r.run_id for r in runs])
    answered: dict[int, set[int]] = defaultdict(set)
    predicted: dict[tuple[int, int], list[tuple[int, int] | None]] = defaultdict(list)
    answers = _final_q(kinds) | Q(source_id__in=[s.run_id for s in imported])
    if (kinds or imported) and ref_items:
        final = Annotation.objects.filter(answers, items)
        for run_id, item_id in final.values_list("source_id", "item_id").order_by().distinct():
            if item_id in ref_items:
                answered[run_id].add(item_id)
        picks = _majority_picks(scope.campaign_id)
        for pk, run_id, item_id, start, end in ErrorSpan.objects.filter(annotation__in=final).values_list(
            "pk", "annotation__source_id", "annotation__item_id", "start", "end"
        ):
            if item_id in ref_items:
                place = picks.get(pk, (start, end))  # the experts' pick of an ambiguous span's occurrence moves it
                predicted[(run_id, item_id)].append(None if place[0] is None else place)
    out = []
    for run in [*runs, *imported]:
        pred_rows: list[tuple[int, int, int]] = []
        ref_rows: list[tuple[int, int, int]] = []
        n_items = 0
        for item_id in sorted(answered.get(run.run_id, ())):
            if (item_id, run.aspect) not in keys and (item_id, "") not in keys:
                continue
            n_items += 1
            for span in predicted.get((run.run_id, item_id), ()):
                pred_rows.append((item_id, *span) if span is not None else (item_id, -1, -1))
            for span in ref_spans.get((item_id, run.aspect), []) + ref_spans.get((item_id, ""), []):
                ref_rows.append((item_id, *span) if span is not None else (item_id, -1, -1))
        counts = overlap_prf_arrays(np.array(pred_rows, dtype=np.int64), np.array(ref_rows, dtype=np.int64))
        out.append(
            OverlapRow(
                run_id=run.run_id, n_items=n_items, exact=counts.exact, overlap=counts.overlap,
                chars=counts.chars, unlocated=sum(1 for row in pred_rows if row[1] < 0),
            )
        )
    return out


def reference_choices(scope: Scope) -> list[tuple[str, str]]:
    """Return the references available in scope as (value, label): gold sources, and the campaign's humans."""
    choices = []
    # Only gold sources that hold spans: a gold annotation without spans would make a table of zeros.
    gold = Annotation.objects.filter(kind=AnnotationKind.GOLD, spans__isnull=False)
    if scope.dataset_id is not None:
        gold = gold.filter(item__dataset_id=scope.dataset_id)
    for source in gold.values_list("source__label", flat=True).distinct().order_by("source__label"):
        choices.append((f"gold:{source}", f"gold ({source})"))
    external = Annotation.objects.filter(source__kind=SourceKind.EXTERNAL)
    if scope.dataset_id is not None:
        external = external.filter(item__dataset_id=scope.dataset_id)
    for source in external.values_list("source__label", flat=True).distinct().order_by("source__label"):
        choices.append((f"external:{source}", f"imported {source}"))
    if scope.campaign_id is not None:
        choices.append(("human", "humans of this campaign (added + confirmed)"))
        choices.append(("human-added", "spans humans added only"))
    return choices


def parse_reference(value: str, scope: Scope, choices: Sequence[tuple[str, str]] | None = None) -> Reference:
    """Turn a reference choice ("gold:SOURCE", "gold", "external:SOURCE", "human", "human-added") into a Reference.

    A value that is not among the scope's choices raises UnknownReference: an empty table would hide the typo.
    """
    choices = reference_choices(scope) if choices is None else choices
    values = [v for v, _ in choices]
    if value not in values and not (value == "gold" and any(v.startswith("gold:") for v in values)):
        raise UnknownReference(
            f"unknown reference {value!r}; references here: {', '.join(values) or 'none (import gold spans first)'}",
            field="reference",
        )
    if value.startswith("gold"):
        return Reference(kind="gold", source=value.partition(":")[2])
    if value.startswith("external:"):
        return Reference(kind="external", source=value.partition(":")[2])
    return Reference(kind="human", campaign_id=scope.campaign_id, include_confirmed=value == "human")


def imported_sources(scope: Scope) -> list[RunInfo]:
    """Other tools' sources with annotations in scope, shaped like runs for the overlap table."""
    annotations = Annotation.objects.filter(source__kind=SourceKind.EXTERNAL)
    if scope.dataset_id is not None:
        annotations = annotations.filter(item__dataset_id=scope.dataset_id)
    elif scope.campaign_id is not None:
        annotations = annotations.filter(item__dataset__campaigns=scope.campaign_id)
    rows = annotations.values_list("source_id", "source__label", "source__tool", "item__dataset_id").distinct()
    return sorted(
        (RunInfo(run_id=pk, label=f"{label} (imported)", evaluator=tool, aspect="", dataset_id=dataset)
         for pk, label, tool, dataset in rows),
        key=lambda r: r.label,
    )


