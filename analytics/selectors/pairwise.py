"""Side-by-side MQM figures of a dataset's imported raters (or a campaign's, once it has screens): what `manage.py
pairwise_scores` prints and GET /api/analytics/{datasets,campaigns}/ID/pairwise return.

The ratings are read with their screens (corpus.selectors.mqm.sxs_file), scored with the MQM weights, and handed to
stats.pairwise as plain data; `X_with_Y` counts as system X (corpus.interop.mqm_sxs.system_of).
"""

from __future__ import annotations

import io
from typing import Any, TypedDict

from analytics.selectors.mqm import RESAMPLES, SEED, check_mqm_request, stats_ratings
from analytics.selectors.units import judged_from_rows, unit_rows
from annotator.models import Campaign
from corpus import protocols
from corpus.interop.mqm_sxs import SxsFile, system_of
from corpus.models import Annotation, Dataset, Source
from corpus.protocols.mqm import DEFAULT, Weights
from corpus.selectors.mqm import has_units, mqm_sources, sxs_file
from corpus.spreadsheet import sheet_writer
from errors import UserError
from stats.mqm import segment_score
from stats.pairwise import Judged, Share, check_counts, pairwise_results

MAX_RESAMPLES = 10_000  # each resample refits the model


class NoUnits(UserError):
    """Pairwise figures asked of ratings that were not made side by side (422)."""


class PairRow(TypedDict):
    a: str
    b: str
    units: int
    a_better: int
    b_better: int
    ties: int
    a_win_rate: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    p_holm: float | None
    shown_together: bool


PAIR_COLUMNS = tuple(PairRow.__annotations__)


def _check(resamples: int, seed: int) -> None:
    if not 1 <= resamples <= MAX_RESAMPLES:
        raise UserError(f"resamples: from 1 to {MAX_RESAMPLES}, not {resamples}", field="resamples")
    if not 0 <= seed <= 2**32 - 1:
        raise UserError(f"seed: from 0 to {2**32 - 1}, not {seed}", field="seed")


def dataset_judged(dataset: Dataset, *, prefix: str = "mqm",
                   weights: Weights = DEFAULT) -> tuple[list[Judged], SxsFile]:
    """The dataset's side-by-side ratings by the sources `PREFIX:*` as stats.pairwise takes them, and as read;
    NoUnits when they rated outputs one at a time."""
    raters = mqm_sources(dataset, prefix)
    if not has_units(dataset, raters):
        raise NoUnits(f"dataset {dataset.name!r}: the ratings of {prefix}:* were made one output at a time (no "
                      "side-by-side screens), so no two outputs were judged together; import a side-by-side TSV "
                      "(docs: guides/mqm)", field="dataset")
    read = sxs_file(dataset, raters)
    labels = {r.rating.system for r in read.ratings}
    scored = stats_ratings([r.rating for r in read.ratings])
    judged = []
    for rated, rating in zip(read.ratings, scored, strict=True):
        r = rated.rating
        judged.append(Judged(
            system=system_of(r.system, labels)[0], segment=r.segment, rater=r.rater,
            score=segment_score(rating.errors, weights.weight),
            unit=(r.rater, r.segment, rated.screen) if rated.screen else None, position=rated.position,
            text=r.target, spans=tuple((e.start, e.end) for e in rating.errors
                                       if e.start is not None and e.end is not None)))
    return judged, read


SCORED_TOOLS = ("pearmut",)  # imports whose side-by-side screens are compared by the raters' own 0-100 scores


def dataset_scored_judged(dataset: Dataset, raters: dict[int, str]) -> list[Judged]:
    """Contrastive ratings with a 0-100 score each (Pearmut's cESA log): the outputs of a screen compared by those
    scores (higher is better); NoUnits when none was made side by side."""
    rows = list(Annotation.objects.filter(item__dataset=dataset, source_id__in=list(raters), unit__isnull=False,
                                          score__isnull=False)
                .values_list("source_id", "item__system", "item__external_id", "score", "unit__number",
                             "unit_position", "item__output"))
    if not rows:
        raise NoUnits(f"dataset {dataset.name!r}: the ratings of its Pearmut sources were made one output at a time "
                      "(no line shows several systems of a segment), so no two outputs were judged together",
                      field="dataset")
    return [Judged(system=system, segment=segment, rater=raters[source], score=-float(score),
                   unit=(raters[source], segment, number), position=position, text=output)
            for source, system, segment, score, number, position, output in rows]


def dataset_pairwise(dataset: Dataset, *, prefix: str = "mqm", weights: Weights = DEFAULT,
                     n_resamples: int = RESAMPLES, seed: int = SEED) -> dict[str, Any]:
    """The side-by-side figures of the dataset's sources `PREFIX:*`; NoUnits when they rated outputs one at a time.
    MQM raters are compared by their errors' MQM scores, Pearmut's contrastive raters by their own scores."""
    _check(n_resamples, seed)
    raters = mqm_sources(dataset, prefix)
    tools = set(Source.objects.filter(pk__in=list(raters)).values_list("tool", flat=True))
    if tools and tools <= set(SCORED_TOOLS):
        return _figures(dataset_scored_judged(dataset, raters), [], n_resamples=n_resamples, seed=seed)
    judged, read = dataset_judged(dataset, prefix=prefix, weights=weights)
    checks = check_counts((rated.rating.rater, bool(row.found)) for rated in read.ratings for row in rated.checks)
    return _figures(judged, checks, n_resamples=n_resamples, seed=seed)


def _figures(judged: list[Judged], checks: list, *, n_resamples: int, seed: int, apart: bool = True) -> dict[str, Any]:
    result = pairwise_results(judged, n_resamples=n_resamples, seed=seed, apart=apart)
    return {
        "systems": [{"system": s.system, "strength": s.strength, "ci_low": s.ci_low, "ci_high": s.ci_high,
                     "rank_range": list(s.rank_range) if s.rank_range else None} for s in result.systems],
        "pairs": [PairRow(a=p.a, b=p.b, units=p.units, a_better=p.a_better, b_better=p.b_better, ties=p.ties,
                          a_win_rate=p.a_win_rate, ci_low=p.ci_low, ci_high=p.ci_high, p_value=p.p_value,
                          p_holm=p.p_holm, shown_together=p.shown_together) for p in result.pairs],
        "position_bias": {"first_wins": result.position_bias.hits, "decided_units": result.position_bias.n,
                          "share": result.position_bias.share, "ci_low": result.position_bias.ci_low,
                          "ci_high": result.position_bias.ci_high},
        "consistency": {"shown_together": _share(result.consistency_together),
                        "others": _share(result.consistency_others)},
        "checks": [{"rater": c.rater, "found": c.found, "missed": c.missed} for c in checks],
    }


def _share(share: Share) -> float | None:
    return share.share


def campaign_pairwise(campaign: Campaign, *, n_resamples: int = RESAMPLES, seed: int = SEED) -> dict[str, Any]:
    """A campaign's side-by-side figures: from its comparison screens under a comparing protocol (the export of
    units, analytics.selectors.units, read back); an MQM campaign's one-output screens have none, so the answer is
    a 422 that says so (a campaign of another protocol is NotMqm's 422)."""
    _check(n_resamples, seed)
    declared = protocols.get(campaign.protocol)
    if declared.comparing:
        rows = unit_rows(campaign)
        if not any(row["finished_at"] for row in rows):
            raise NoUnits(f"campaign {campaign.pk}: none of its side-by-side screens is finished yet, so there is "
                          "nothing to compare", field="campaign")
        judged = judged_from_rows(rows, higher_is_better="score" in declared.per_item)
        # a preference compares the two outputs on its screen and nothing else: no pair is inferred from screens
        # that showed the systems apart (scores, MQM's or ESA's, do compare across screens)
        return _figures(judged, [], n_resamples=n_resamples, seed=seed, apart=not declared.prefers)
    check_mqm_request(campaign)
    raise NoUnits(f"campaign {campaign.pk}: its MQM screens show one output at a time, so no two outputs were "
                  "judged together and there are no side-by-side units to compare; pairwise figures need "
                  "side-by-side ratings (a campaign of the pairwise protocol, or an imported side-by-side TSV: "
                  "use --dataset, or /api/analytics/datasets/ID/pairwise)", field="campaign")


def pairs_csv(rows: list[PairRow]) -> str:
    """The pairs as CSV, one line per pair of systems (empty cells for missing values)."""
    out = io.StringIO()
    writer = sheet_writer(out, lineterminator="\n")
    writer.writerow(PAIR_COLUMNS)
    for row in rows:
        cells = [row[c] for c in PAIR_COLUMNS]  # type: ignore[literal-required]
        writer.writerow(["" if v is None else str(v).lower() if isinstance(v, bool) else v for v in cells])
    return out.getvalue()
