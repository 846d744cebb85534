"""Read side of routed judging: the spans a routed campaign resolved without an expert, per output, the
probability the design gave each span of reaching an expert, and an active design's batches as its estimator
reads them."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

from annotator.models import AutoResolved, Campaign, CampaignRun, SampledSpan, SpanDraw
from annotator.selectors.review import campaign_votes
from corpus.models import ErrorSpan
from corpus.protocols.opennlgauge import EXPLANATION_OK, SPAN_OK
from evaluation.models import SpanConfidence
from stats.ppi import DrawBatch, SpanSignals, cross_fit, design_matrix, model_decision
from stats.routing import CONFIDENT

NO_CATEGORY = "(none)"


def inclusion_probabilities(campaign: Campaign) -> dict[int, float] | None:
    """Span id -> the probability the campaign's design gave it of being judged by an expert (drawn / spans in
    its stratum), for the spans drawn and those resolved without an expert; None for a campaign that judges
    every span (each has probability 1)."""
    design = getattr(campaign, "sample_design", None) if campaign.is_sampled else None
    if design is None:
        return None
    if design.is_active:
        return _active_probabilities(design)
    rows = list(SampledSpan.objects.filter(design=design).values_list("span_id", "run_id", "stratum"))
    drawn = Counter((run_id, stratum) for _, run_id, stratum in rows)

    def probability(run_id: int, stratum: str) -> float:
        size = design.population.get(str(run_id), {}).get(stratum, 0)
        return drawn[(run_id, stratum)] / size if size else 1.0

    out = {span_id: probability(run_id, stratum) for span_id, run_id, stratum in rows}
    for span_id, run_id in AutoResolved.objects.filter(design=design).values_list("span_id", "run_id"):
        out[span_id] = probability(run_id, CONFIDENT)
    return out


def _active_probabilities(design) -> dict[int, float]:
    """An active design's: a drawn span's probability in the batch that drew it (its weight is 1 / that); an
    undrawn one's chance of having been drawn in some batch, 1 - prod(1 - pi_t)."""
    out: dict[int, float] = {}
    missed: dict[int, float] = {}
    for span_id, probability, drawn in SpanDraw.objects.filter(design=design).values_list(
            "span_id", "probability", "drawn").order_by("batch"):
        if drawn and span_id not in out:
            out[span_id] = probability
        elif span_id not in out:
            missed[span_id] = missed.get(span_id, 1.0) * (1 - probability)
    return out | {span_id: 1 - left for span_id, left in missed.items() if span_id not in out}


def auto_resolved_by_item(campaign: Campaign) -> dict[int, list[tuple[ErrorSpan, str, str]]]:
    """Item id -> (span, the run's real label, the ensemble's verdict) for each auto-resolved span, in the
    evaluator's own order; {} for a campaign that does not route."""
    rows = (AutoResolved.objects.filter(design__campaign=campaign).select_related("span__annotation")
            .order_by("span__annotation__item_id", "span__annotation_id", "span__position", "span_id"))
    labels = dict(CampaignRun.objects.filter(campaign=campaign).values_list("run_id", "run__label"))
    out: dict[int, list[tuple[ErrorSpan, str, str]]] = {}
    for row in rows:
        out.setdefault(row.span.annotation.item_id, []).append((row.span, labels.get(row.run_id, "?"),
                                                                 row.span_verdict))
    return out


def span_signals(span_ids: Sequence[int]) -> list[SpanSignals]:
    """What the ensemble says about each span (stats.ppi's predictor input), in the order given; a span without a
    stored confidence (no per-model answers behind it) reads as k = n = 0 with no supervisor decision."""
    stored = {row[0]: row[1:] for row in SpanConfidence.objects.filter(span_id__in=list(span_ids)).values_list(
        "span_id", "k", "n", "supervisor", "severity_agreement", "category_agreement")}
    spans = {pk: (run_id, text, category) for pk, run_id, text, category in ErrorSpan.objects.filter(
        pk__in=list(span_ids)).values_list("pk", "annotation__source_id", "text", "category")}
    out = []
    for pk in span_ids:
        run_id, text, category = spans[pk]
        k, n, supervisor, severity, category_agreement = stored.get(pk, (0, 0, "", None, None))
        out.append(SpanSignals(k, n, supervisor, severity, category_agreement, str(run_id), len(text),
                               category or NO_CATEGORY))
    return out


@dataclass
class ActiveRun:
    """One evaluator of an active routed campaign, its spans in span-id order: which are drawn and labelled, the
    experts' labels, its batches (stats.ppi.DrawBatch), and the label the model gives a span no expert judged."""

    run_id: int
    span_ids: list[int]
    drawn: np.ndarray
    labeled: np.ndarray
    outcome: np.ndarray  # True: the experts' consensus calls the span an error (read where labeled)
    batches: list[DrawBatch]
    decision: np.ndarray  # True: the model's label is Error
    explained: np.ndarray  # the consensus has an explanation verdict
    explanation_ok: np.ndarray


@dataclass
class ActiveDesign:
    runs: list[ActiveRun]
    batches: int
    signals: list[SpanSignals]  # every routed span's, in span-id order
    span_ids: list[int]


def active_design_data(campaign: Campaign, *, excluded: Collection[int] | None = None) -> ActiveDesign | None:
    """The active design's batches as the estimator reads them; None for a campaign without one.

    A batch's stored prediction is the one its probabilities came from (fitted on the earlier batches' labels);
    the first, uniform, batch has none, so its estimate uses the cross-fitted prediction from its own labels (no
    span's prediction from a fit that saw its label). `excluded` as in campaign_votes."""
    design = getattr(campaign, "sample_design", None) if campaign.is_sampled else None
    if design is None or not design.is_active:
        return None
    rows = list(SpanDraw.objects.filter(design=design).values_list(
        "batch", "span_id", "run_id", "probability", "prediction", "drawn").order_by("batch", "span_id"))
    span_ids = sorted({row[1] for row in rows})
    index = {pk: i for i, pk in enumerate(span_ids)}
    run_of = {row[1]: row[2] for row in rows}
    drawn = np.zeros(len(span_ids), dtype=bool)
    for _, span_id, _, _, _, was_drawn in rows:
        drawn[index[span_id]] |= was_drawn
    votes = campaign_votes(campaign, excluded=excluded)
    labeled, outcome, explained, explanation_ok = (np.zeros(len(span_ids), dtype=bool) for _ in range(4))
    for i in np.flatnonzero(drawn):
        label = votes.machine_consensus(span_ids[i])
        if label.span_verdict is not None:
            labeled[i], outcome[i] = True, label.span_verdict == SPAN_OK
        if label.explanation_verdict is not None:
            explained[i], explanation_ok[i] = True, label.explanation_verdict == EXPLANATION_OK
    signals = span_signals(span_ids)
    first_drawn = {index[span_id] for batch, span_id, _, _, _, was_drawn in rows if batch == 0 and was_drawn}
    fitted = cross_fit(design_matrix(signals), {i: bool(outcome[i]) for i in sorted(first_drawn) if labeled[i]},
                       seed=design.seed)
    first = fitted if fitted is not None else np.full(len(span_ids), 0.5)
    per_run: dict[int, dict[int, list[tuple[int, float, float | None, bool]]]] = defaultdict(lambda: defaultdict(list))
    for batch, span_id, run_id, probability, prediction, was_drawn in rows:
        per_run[run_id][batch].append((index[span_id], probability, prediction, was_drawn))
    out = []
    for run_id in sorted(per_run):
        mine = np.array(sorted(i for i, pk in enumerate(span_ids) if run_of[pk] == run_id), dtype=int)
        position = {int(i): j for j, i in enumerate(mine)}
        batches, so_far, latest = [], np.zeros(len(mine), dtype=bool), None
        for batch in sorted(per_run[run_id]):
            probability, prediction = np.ones(len(mine)), first[mine].copy()
            stored = True
            for i, p, f, was_drawn in per_run[run_id][batch]:
                j = position[i]
                probability[j] = p
                so_far[j] |= was_drawn
                if f is None:
                    stored = False
                else:
                    prediction[j] = f
            batches.append(DrawBatch(probability, so_far.copy(), prediction))
            latest = prediction if stored else None
        decision = np.ones(len(mine), dtype=bool) if latest is None else model_decision(latest)
        out.append(ActiveRun(run_id, [span_ids[i] for i in mine], drawn[mine], labeled[mine], outcome[mine],
                             batches, decision, explained[mine], explanation_ok[mine]))
    return ActiveDesign(out, 1 + max((row[0] for row in rows), default=-1), signals, span_ids)
