"""Per-evaluator Span OK % and Exp. correct % for ALL its spans, estimated from a campaign's designed sample.

The unit is the sampled span, and its outcome is its consensus label (corpus.consensus): a span counts as
judged for Span OK once it has a final span verdict, and for Exp. correct once it has a final explanation
verdict; unresolved spans are treated like spans not judged yet (as missing at random within their stratum).
The estimator, its interval and the planner are stats.sampling's.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from annotator.models import Campaign, SampledSpan
from annotator.selectors.review import campaign_votes
from corpus.protocols.opennlgauge import EXPLANATION_OK, SPAN_OK
from quality.selectors.vigilance import excluded_annotator_ids
from stats.sampling import Estimate, Plan, Stratum, judgments_needed, stratified_estimate

DEFAULT_HALF_WIDTH = 0.05


@dataclass
class MetricEstimate:
    """One rate of one evaluator: the plain share over judged spans, the estimate for all spans, the plan."""

    plain: float | None  # share over the judged spans, unweighted (what Table 4 reports)
    estimate: Estimate
    plan: Plan
    strata: list[Stratum]


@dataclass
class EvaluatorEstimate:
    run_id: int
    label: str
    simulated: bool  # the simulated server answered this run: no result
    spans: int  # all the evaluator's machine spans on the campaign's candidate items
    sampled: int
    span_ok: MetricEstimate
    exp_correct: MetricEstimate


def _metric(strata: list[Stratum], half_width: float, seed: int) -> MetricEstimate:
    judged = sum(s.judged for s in strata)
    plain = sum(s.successes for s in strata) / judged if judged else None
    return MetricEstimate(plain, stratified_estimate(strata, seed=seed),
                          judgments_needed(strata, half_width=half_width), strata)


def sample_estimates(campaign: Campaign, *, half_width: float = DEFAULT_HALF_WIDTH,
                     exclude_flagged: bool | None = None) -> list[EvaluatorEstimate]:
    """One row per evaluator of a sampled campaign; [] for a campaign that judges every span. `exclude_flagged`
    as in Scope (None: the campaign's setting)."""
    design = getattr(campaign, "sample_design", None) if campaign.is_sampled else None
    if design is None or design.is_active:  # unequal probabilities in batches: its figures are the routing report's
        return []
    votes = campaign_votes(campaign, excluded=excluded_annotator_ids(campaign.pk, exclude_flagged=exclude_flagged))
    # run -> stratum -> [sampled, span judged, span OK, explanation judged, explanation OK]
    counts: dict[int, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0, 0, 0, 0]))
    for span_id, run_id, stratum in SampledSpan.objects.filter(design=design).values_list("span_id", "run_id",
                                                                                          "stratum"):
        cell = counts[run_id][stratum]
        cell[0] += 1
        label = votes.machine_consensus(span_id)
        if label.span_verdict is not None:
            cell[1] += 1
            cell[2] += label.span_verdict == SPAN_OK
        if label.explanation_verdict is not None:
            cell[3] += 1
            cell[4] += label.explanation_verdict == EXPLANATION_OK
    labels = dict(campaign.runs.values_list("pk", "label"))
    simulated = set(campaign.runs.filter(simulated=True).values_list("pk", flat=True))
    rows = []
    for run_key, population in sorted(design.population.items(), key=lambda kv: labels.get(int(kv[0]), "")):
        run_id = int(run_key)
        cells = counts[run_id]
        names = sorted(population)
        span_strata = [Stratum(h, population[h], cells[h][1], cells[h][2]) for h in names]
        exp_strata = [Stratum(h, population[h], cells[h][3], cells[h][4]) for h in names]
        rows.append(EvaluatorEstimate(
            run_id=run_id, label=labels.get(run_id, f"run {run_id}"), simulated=run_id in simulated,
            spans=sum(population.values()),
            sampled=sum(cells[h][0] for h in names),
            span_ok=_metric(span_strata, half_width, seed=design.seed),
            exp_correct=_metric(exp_strata, half_width, seed=design.seed + 1),
        ))
    return rows
