"""Evaluators of one campaign and aspect ranked by Span OK % or Exp. correct %, with significance.

The figures, intervals and n are Table 4's for the campaign restricted to the aspect (the same bootstrap,
resamples and seed as the dashboard's default), so the ranking never shows a number the table does not.
The pairwise tests and rank ranges come from stats.ranking.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from django.db.models import Count, Q

from analytics.selectors.base import (
    DEFAULT_RESAMPLES,
    ITEM,
    RUN,
    RunInfo,
    Scope,
    _raw_rows,
    judgments_in_scope,
    runs_in_scope,
)
from analytics.selectors.cache import cached, data_version
from annotator.models import Campaign
from corpus.protocols.opennlgauge import EXPLANATION_OK, SPAN_OK
from errors import UserError
from quality.selectors.vigilance import excluded_annotator_ids
from stats import ranking as engine
from stats.bootstrap import Interval, bootstrap_ratio_cis_grouped
from stats.shares import ratio

By = Literal["span", "explanation"]
BY_CHOICES: tuple[str, ...] = ("span", "explanation")
METHOD = "approximate randomization (paired over shared outputs, two-sided), Holm-corrected"
_FIELDS = {"span": Q(span_verdict=SPAN_OK), "explanation": Q(explanation_verdict=EXPLANATION_OK)}


class RankingProblem(UserError):
    """A ranking question that names no aspect or criterion of the campaign; the message says which exist."""


@dataclass(frozen=True)
class RankedEvaluator:
    label: str
    run_id: int
    value: float | None  # percent, 0-100
    ci_low: float | None
    ci_high: float | None
    n: int  # judged spans
    rank: str | None
    simulated: bool = False  # answered by the simulated server: no result


@dataclass(frozen=True)
class RankedPairOut:
    a: str
    b: str
    difference: float | None  # percentage points, a - b over the outputs both were judged on
    p: float | None
    p_holm: float | None
    n_outputs: int
    simulated: bool = False  # a or b was answered by the simulated server


@dataclass
class Ranking:
    aspect: str
    by: str
    evaluators: list[RankedEvaluator] = field(default_factory=list)
    pairs: list[RankedPairOut] = field(default_factory=list)
    method: str = METHOD
    resamples: int = engine.RESAMPLES
    alpha: float = engine.ALPHA
    seed: int = engine.SEED

    def as_dict(self) -> dict:
        """The API's answer (GET /api/analytics/campaigns/ID/ranking), field for field."""
        return {
            "method": self.method, "resamples": self.resamples, "alpha": self.alpha,
            "evaluators": [{"label": e.label, "run_id": e.run_id, "value": e.value, "ci_low": e.ci_low,
                            "ci_high": e.ci_high, "n": e.n, "rank": e.rank, "simulated": e.simulated}
                           for e in self.evaluators],
            "pairs": [{"a": p.a, "b": p.b, "difference": p.difference, "p": p.p, "p_holm": p.p_holm,
                       "n_outputs": p.n_outputs, "simulated": p.simulated} for p in self.pairs],
        }


def campaign_aspects(campaign: Campaign) -> list[str]:
    return sorted({r.aspect for r in runs_in_scope(Scope(campaign_id=campaign.pk))})


def ranking_aspect(campaign: Campaign, aspect: str) -> str:
    """Return the aspect to rank: the one named, or the campaign's only one; else RankingProblem."""
    aspects = campaign_aspects(campaign)
    if aspect:
        if aspect not in aspects:
            raise RankingProblem(f"aspect: {aspect!r} is not an aspect of this campaign's runs; aspects: "
                                 f"{', '.join(aspects) or 'none (the campaign has no runs)'}", field="aspect")
        return aspect
    if len(aspects) == 1:
        return aspects[0]
    raise RankingProblem(f"aspect: name one of {', '.join(aspects) or 'none (the campaign has no runs)'}",
                         field="aspect")


def _pct(value: float | None) -> float | None:
    return None if value is None else 100 * value


def campaign_ranking(campaign: Campaign, *, aspect: str, by: str, exclude_flagged: bool | None = None) -> Ranking:
    """Rank the campaign's evaluators of `aspect` by `by` ("span" or "explanation"), cached while the data stands;
    `exclude_flagged` as in Scope (None: the campaign's setting)."""
    if by not in BY_CHOICES:
        raise RankingProblem(f"by: {by!r} is not a criterion; give span or explanation", field="by")
    aspect = ranking_aspect(campaign, aspect)
    excluded = sorted(excluded_annotator_ids(campaign.pk, exclude_flagged=exclude_flagged))
    raw = f"{campaign.pk}|{aspect}|{excluded}|{data_version(campaign.dataset_id)}"
    key = "ranking:v2:" + hashlib.sha256(raw.encode()).hexdigest()
    return cached(key, lambda: rankings_compute(campaign, aspect, exclude_flagged=exclude_flagged))[by]


def rankings_compute(campaign: Campaign, aspect: str, *, exclude_flagged: bool | None = None) -> dict[str, Ranking]:
    """Both rankings of one aspect from one count of every run's verdicts per output.

    The intervals are Table 4's: the same items (those with a complete judgment in scope, in id order), the
    same resamples and seed, and the bootstrap's draws depend on nothing else, so resampling only the runs'
    counts gives the accuracy table's intervals without computing its other groups.
    """
    runs = runs_in_scope(Scope(campaign_id=campaign.pk, aspect=aspect))
    hits = {by: Count("id", filter=condition) for by, condition in _FIELDS.items()}
    # The aspect's runs stand for the aspect: naming their ids, not the aspect's name two joins away, lets
    # PostgreSQL estimate the rows and hash-join them (half the time of the nested loops it picks otherwise).
    in_campaign = judgments_in_scope(Scope(campaign_id=campaign.pk, exclude_flagged=exclude_flagged))
    in_runs = in_campaign.filter(**{f"{RUN}__in": [r.run_id for r in runs]})
    rows = _raw_rows(in_runs.values(RUN, ITEM).annotate(**hits, judged=Count("id")).order_by()) if runs else []
    items = sorted({item_id for _, item_id, *_ in rows})
    position = {item_id: k for k, item_id in enumerate(items)}
    column = {r.run_id: k for k, r in enumerate(runs)}
    table = np.zeros((len(items), len(runs), 3))  # judged, span OK, explanation correct
    for run_id, item_id, span_hits, explanation_hits, judged in rows:
        table[position[item_id], column[run_id]] = (judged, span_hits, explanation_hits)
    cis = bootstrap_ratio_cis_grouped(table, {"span": (1, 0), "explanation": (2, 0)},
                                            n_resamples=DEFAULT_RESAMPLES, seed=0)
    totals = table.sum(axis=0)
    out = {}
    for c, by in enumerate(BY_CHOICES, start=1):
        counts = table[:, :, [c, 0]]  # (OK, judged) per output and run
        values = [ratio(totals[k, c], totals[k, 0]) for k in range(len(runs))]
        out[by] = _ranking(runs, values, [cis[k][by] if totals[k, 0] else None for k in range(len(runs))],
                           [int(totals[k, 0]) for k in range(len(runs))], counts, aspect, by)
    return out


def _ranking(runs: list[RunInfo], values: list[float | None], cis: list[Interval | None], ns: list[int],
             counts: np.ndarray, aspect: str, by: str) -> Ranking:
    result = engine.rank(values, counts)
    ranking = Ranking(aspect=aspect, by=by)
    for k in result.order:
        ci = cis[k]
        ranking.evaluators.append(RankedEvaluator(
            label=runs[k].label, run_id=runs[k].run_id, value=_pct(values[k]), ci_low=_pct(ci.low) if ci else None,
            ci_high=_pct(ci.high) if ci else None, n=ns[k], rank=result.ranks[k], simulated=runs[k].simulated,
        ))
    for pair in result.pairs:
        ranking.pairs.append(RankedPairOut(
            a=runs[pair.a].label, b=runs[pair.b].label, difference=_pct(pair.test.difference), p=pair.test.p,
            p_holm=pair.p_holm, n_outputs=pair.test.n_outputs,
            simulated=runs[pair.a].simulated or runs[pair.b].simulated,
        ))
    return ranking
