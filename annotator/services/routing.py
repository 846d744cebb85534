"""Route a campaign's machine spans (stats.routing): experts judge the uncertain ones and an audit of the rest.

A routed campaign is a designed sample (SampleDesign, strata `evaluator+confidence`): the spans experts judge
are its SampledSpan rows, so the judging screen, Finish and the designed-sample estimates need nothing new;
the confident spans left to the ensemble are AutoResolved rows with its verdict. Only the evaluator runs'
machine spans are routed: decoys and planted outputs are added to the work afterwards and always reach an
expert.

The active design (stats.ppi) stores a first, uniform batch at creation; `campaign_route_top_up` draws the
next once every span drawn so far has an expert label: the predictor is fitted on those labels, and each
evaluator that still needs judgments gets a batch of its spans not drawn yet, each with a probability that
follows the predicted uncertainty (none below the floor), the whole expected to reach the target width
(stats.ppi.top_up_budget) or to spend the rest of the budget. Its spans go to experts (a finished output with a
new span reopens; an output without work is dealt to the registered annotators), and the spans left to the
model take the new predictor's labels. Finishing an item tops up when it can (`top_up_when_ready`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from django.db import transaction

from annotator.engine.phases import Phase, initial_phase
from annotator.models import Assignment, AutoResolved, Campaign, SampleDesign, SampledSpan, SpanDraw
from annotator.selectors.campaigns import campaign_run_labels
from annotator.selectors.routing import ActiveRun, active_design_data
from annotator.selectors.spans import judged_spans_by_item
from annotator.services.phases import assignments_move
from corpus.models import ErrorSpan
from corpus.protocols.opennlgauge import SPAN_NOT_ERROR, SPAN_OK
from errors import Conflict
from evaluation.models import SpanConfidence
from evaluation.services.confidence import confidence_store
from stats.ppi import (
    batch_shares,
    cross_fit,
    design_matrix,
    first_batch_budget,
    inclusion_probabilities,
    model_decision,
    next_batch_budget,
    poisson_draw,
)
from stats.routing import (
    ACTIVE,
    ACTIVE_STRATUM,
    CONFIDENT,
    DEFAULT_MIN_PROBABILITY,
    THRESHOLD,
    UNCERTAIN,
    RoutingError,
    check_settings,
    route,
)


@dataclass(frozen=True)
class RoutingSpec:
    """The routing object. `threshold` (the default): spans at least `min_k` models flagged are resolved by the
    ensemble, but for an audit at `audit_rate`. `active`: batches drawn by the predicted uncertainty, none below
    `min_probability`, until `target_ci_width` (full 95% width) or `budget_spans` per evaluator."""

    min_k: int | None = None
    audit_rate: float | None = None
    seed: int = 0
    design: str = THRESHOLD
    min_probability: float | None = None
    target_ci_width: float | None = None
    budget_spans: int | None = None

    def check(self) -> None:
        check_settings(design=self.design, min_k=self.min_k, audit_rate=self.audit_rate,
                       min_probability=self.min_probability, target_ci_width=self.target_ci_width,
                       budget_spans=self.budget_spans)

    @property
    def floor(self) -> float:
        return DEFAULT_MIN_PROBABILITY if self.min_probability is None else self.min_probability


def campaign_route_draw(*, campaign: Campaign, item_ids: Sequence[int], spec: RoutingSpec) -> list[int]:
    """Route the machine spans the campaign would show on `item_ids`, store the design, its judged spans and the
    auto-resolved ones, mark the campaign sampled, and return the items that hold a span for experts."""
    spec.check()
    labels = campaign_run_labels(campaign.pk)
    confidence_store(run_ids=list(labels))
    by_item = judged_spans_by_item(campaign, sorted(set(item_ids)), labels)
    item_of = {span.pk: item_id for item_id, pairs in by_item.items() for span, _ in pairs}
    k_of = dict(SpanConfidence.objects.filter(span_id__in=sorted(item_of)).values_list("span_id", "k"))
    units: dict[int, list[tuple[int, int]]] = {}
    for pairs in by_item.values():
        for span, _ in pairs:
            units.setdefault(span.annotation.source_id, []).append((span.pk, k_of.get(span.pk, 0)))
    if spec.design == ACTIVE:
        return _active_first_batch(campaign, spec, {run_id: [pk for pk, _ in run_units]
                                                    for run_id, run_units in units.items()}, item_of)
    routes = {run_id: route(run_units, min_k=spec.min_k, audit_rate=spec.audit_rate, seed=spec.seed + run_id)
              for run_id, run_units in sorted(units.items())}
    design = SampleDesign.objects.create(
        campaign=campaign, strata=SampleDesign.Strata.ROUTING, seed=spec.seed, min_k=spec.min_k,
        audit_rate=spec.audit_rate, population={str(run_id): r.population for run_id, r in routes.items()},
    )
    judged, auto = [], []
    for run_id, r in routes.items():
        judged += [SampledSpan(design=design, span_id=pk, run_id=run_id, stratum=UNCERTAIN) for pk in r.expert]
        judged += [SampledSpan(design=design, span_id=pk, run_id=run_id, stratum=CONFIDENT) for pk in r.audit]
        auto += [AutoResolved(design=design, span_id=pk, run_id=run_id) for pk in r.auto]
    SampledSpan.objects.bulk_create(judged)
    AutoResolved.objects.bulk_create(auto)
    Campaign.objects.filter(pk=campaign.pk).update(is_sampled=True)
    campaign.is_sampled = True
    return sorted({item_of[row.span_id] for row in judged})


def batch_rng(seed: int, batch: int, run_id: int) -> np.random.Generator:
    """The draw of one evaluator's batch: fixed by the campaign's seed, so the same campaign draws the same."""
    return np.random.default_rng([seed, batch, run_id])


def _active_first_batch(campaign: Campaign, spec: RoutingSpec, units: dict[int, list[int]],
                        item_of: dict[int, int]) -> list[int]:
    """The active design's first batch: uniform within each evaluator (no label exists to predict from), half
    the budget or half the width's human-only plan, none below the floor; the rest wait for top-ups."""
    design = SampleDesign.objects.create(
        campaign=campaign, strata=SampleDesign.Strata.ROUTING, seed=spec.seed, routing_design=ACTIVE,
        min_probability=spec.floor, target_ci_width=spec.target_ci_width, budget_spans=spec.budget_spans,
        population={str(run_id): {ACTIVE_STRATUM: len(pks)} for run_id, pks in sorted(units.items()) if pks},
    )
    draws = []
    for run_id, pks in sorted(units.items()):
        pks = sorted(pks)
        budget = first_batch_budget(len(pks), budget_spans=spec.budget_spans, target_ci_width=spec.target_ci_width)
        probability = inclusion_probabilities(None, size=len(pks), budget=budget, floor=spec.floor)
        drawn = poisson_draw(probability, batch_rng(spec.seed, 0, run_id))
        draws += [SpanDraw(design=design, span_id=pk, run_id=run_id, batch=0, probability=float(p), drawn=bool(d))
                  for pk, p, d in zip(pks, probability, drawn, strict=True)]
    batch_store(design=design, draws=draws, decisions=None)
    Campaign.objects.filter(pk=campaign.pk).update(is_sampled=True)
    campaign.is_sampled = True
    return sorted({item_of[d.span_id] for d in draws if d.drawn})


def batch_store(*, design: SampleDesign, draws: list[SpanDraw], decisions: dict[int, bool] | None) -> list[int]:
    """Store one batch of an active design: its SpanDraw rows (`drawn`: by the end of the batch, so a span drawn
    before is drawn with probability 1); the spans it newly draws become SampledSpan rows (experts see them) and
    leave the AutoResolved ones; every span not drawn yet is AutoResolved with the model's label (`decisions`:
    span id -> Error?; None before any predictor: the ensemble's claim, Error). Return the newly drawn span ids."""
    SpanDraw.objects.bulk_create(draws)
    before = set(SampledSpan.objects.filter(design=design).values_list("span_id", flat=True))
    new = [d for d in draws if d.drawn and d.span_id not in before]
    drawn_ids = sorted({d.span_id for d in new})
    SampledSpan.objects.bulk_create([SampledSpan(design=design, span_id=d.span_id, run_id=d.run_id,
                                                 stratum=ACTIVE_STRATUM) for d in new], ignore_conflicts=True)
    AutoResolved.objects.filter(design=design, span_id__in=drawn_ids).delete()
    waiting = [d for d in draws if not d.drawn]
    verdict = {d.span_id: SPAN_OK if decisions is None or decisions.get(d.span_id, True) else SPAN_NOT_ERROR
               for d in waiting}
    existing = set(AutoResolved.objects.filter(design=design).values_list("span_id", flat=True))
    AutoResolved.objects.bulk_create([AutoResolved(design=design, span_id=d.span_id, run_id=d.run_id,
                                                   span_verdict=verdict[d.span_id])
                                      for d in waiting if d.span_id not in existing])
    for value in (SPAN_OK, SPAN_NOT_ERROR):
        AutoResolved.objects.filter(design=design, span_id__in=sorted(existing & {
            pk for pk, v in verdict.items() if v == value})).update(span_verdict=value)
    return drawn_ids


class TopUpWaits(Conflict):
    """The next batch waits for labels: the predictor and the estimate need every drawn span judged (409)."""


@dataclass
class TopUp:
    """What a top-up did: the batch it drew (None when nothing was needed), per run the expected and drawn
    judgments, and why a run drew nothing."""

    batch: int | None
    planned: dict[int, float] = field(default_factory=dict)
    drawn: dict[int, int] = field(default_factory=dict)
    reached: dict[int, str] = field(default_factory=dict)
    items: list[int] = field(default_factory=list)  # outputs that got work


def _needs(run: ActiveRun, design: SampleDesign, prediction: np.ndarray, floor: float) -> tuple[float, str]:
    """The expected judgments `run` still needs (and, when none, why), as stats.ppi plans them."""
    estimates = [] if design.budget_spans is not None else batch_shares(run.batches, labeled=run.labeled,
                                                                        outcome=run.outcome)
    return next_batch_budget(prediction[~run.drawn], population=len(run.span_ids), drawn=int(run.drawn.sum()),
                             estimates=estimates, floor=floor, budget_spans=design.budget_spans,
                             target_ci_width=design.target_ci_width)


@transaction.atomic
def campaign_route_top_up(*, campaign: Campaign) -> TopUp:
    """Draw the next batch of an active routed campaign (see the module docstring); RoutingError for a campaign
    without an active design, TopUpWaits while a drawn span has no label. Idempotent under concurrency: the
    design row is locked, and a batch already drawn on the same labels draws nothing more than the plan says."""
    design = SampleDesign.objects.select_for_update().filter(campaign=campaign).first()
    if design is None or not design.is_active:
        raise RoutingError(f"routing.design: campaign {campaign.name!r} has no active routing design; only an active "
                           "design tops up", field="routing.design")
    if campaign.status == Campaign.Status.CLOSED:
        raise Conflict(f"campaign {campaign.name!r} is closed: it draws no more batches")
    data = active_design_data(campaign)
    if data is None:  # the design row was just read as active: only a deleted campaign gets here
        return TopUp(batch=None)
    unlabeled = sum(int((r.drawn & ~r.labeled).sum()) for r in data.runs)
    if unlabeled:
        raise TopUpWaits(f"{unlabeled} span(s) drawn so far have no expert verdict yet; the next batch is drawn "
                         "once they have one")
    index = {pk: i for i, pk in enumerate(data.span_ids)}
    labels = {index[pk]: bool(y) for r in data.runs for pk, d, y in zip(r.span_ids, r.drawn, r.outcome, strict=True)
              if d}
    batch = data.batches
    fitted = cross_fit(design_matrix(data.signals), labels, seed=design.seed + batch)
    prediction = fitted if fitted is not None else np.full(len(data.span_ids), 0.5)
    floor = design.min_probability or 0.0
    plan = TopUp(batch=None)
    draws: list[SpanDraw] = []
    for run in data.runs:
        mine = np.array([index[pk] for pk in run.span_ids], dtype=int)
        budget, why = _needs(run, design, prediction[mine], floor)
        plan.planned[run.run_id] = budget
        if budget <= 0:
            plan.reached[run.run_id] = why
            continue
        rest = ~run.drawn
        probability = np.ones(len(mine))
        probability[rest] = inclusion_probabilities(prediction[mine][rest], size=int(rest.sum()), budget=budget,
                                                    floor=floor)
        drawn = run.drawn | (poisson_draw(probability, batch_rng(design.seed, batch, run.run_id)) & rest)
        plan.drawn[run.run_id] = int((drawn & rest).sum())
        draws += [SpanDraw(design=design, span_id=pk, run_id=run.run_id, batch=batch, probability=float(p),
                           prediction=float(f), drawn=bool(d))
                  for pk, p, f, d in zip(run.span_ids, probability, prediction[mine], drawn, strict=True)]
    if not draws:
        return plan
    plan.batch = batch
    decisions = dict(zip(data.span_ids, model_decision(prediction).tolist(), strict=True))
    new = batch_store(design=design, draws=draws, decisions=decisions)
    plan.items = _give_work(campaign, new)
    return plan


def _give_work(campaign: Campaign, span_ids: list[int]) -> list[int]:
    """Put the outputs holding newly drawn spans in front of experts: reopen a finished one, deal one nobody has
    to `annotators_per_item` of the registered annotators round-robin (the least loaded first), at the end of
    their queues. Return those outputs."""
    items = sorted(set(ErrorSpan.objects.filter(pk__in=span_ids).values_list("annotation__item_id", flat=True)))
    if not items:
        return []
    work = Assignment.objects.filter(campaign=campaign, item_id__in=items, is_training=False)
    assignments_move(work, Phase.DONE, Phase.JUDGING)
    dealt = set(work.values_list("item_id", flat=True))
    judges = list(campaign.annotators.order_by("pk").values_list("pk", flat=True))
    if not judges:
        return items
    load = {pk: 0 for pk in judges}
    last = {pk: 0 for pk in judges}
    for annotator_id, order in Assignment.objects.filter(campaign=campaign).values_list("annotator_id", "order"):
        if annotator_id in load:
            load[annotator_id] += 1
            last[annotator_id] = max(last[annotator_id], order)
    rows = []
    for item_id in (i for i in items if i not in dealt):
        for annotator_id in sorted(judges, key=lambda pk: (load[pk], pk))[:campaign.annotators_per_item]:
            load[annotator_id] += 1
            last[annotator_id] += 1
            rows.append(Assignment(campaign=campaign, item_id=item_id, annotator_id=annotator_id,
                                   order=last[annotator_id], phase=initial_phase()))
    Assignment.objects.bulk_create(rows)
    return items


def top_up_when_ready(*, campaign_id: int) -> TopUp | None:
    """Top up an active campaign if its drawn spans are all labelled (an item was just finished); None when it
    waits for labels, routes otherwise, is closed or is gone."""
    campaign = Campaign.objects.filter(pk=campaign_id).first()
    active = SampleDesign.objects.filter(campaign_id=campaign_id, strata=SampleDesign.Strata.ROUTING,
                                         routing_design=ACTIVE).exists()
    if campaign is None or campaign.status == Campaign.Status.CLOSED or not active:
        return None
    try:
        return campaign_route_top_up(campaign=campaign)
    except TopUpWaits:
        return None
