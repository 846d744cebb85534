"""The report's MQM section: system scores with intervals and rank ranges, errors by category, rater agreement.

Only an MQM campaign has it; the OpeNLGauge sections (Table 4, explanations, agreement on verdicts, evaluator
ranking) do not apply to MQM and stay out of its report, since nobody judged machine spans there.
"""

from __future__ import annotations

from analytics.selectors.mqm import agreement, campaign_ratings, categories, score_rows
from analytics.tables import Column, Table
from annotator.models import Campaign
from corpus import protocols
from stats.ranking import rank_range_text


def _pct(value: float | None) -> float | None:
    return None if value is None else 100 * value


def mqm_report(campaign: Campaign, *, exclude_flagged: bool | None = None) -> tuple[str, list[Table]] | None:
    """The MQM section's text and tables, the flagged annotators left out or counted as the report decided (None:
    the campaign's setting); None for a campaign of another protocol."""
    if "mqm_scores" not in protocols.get(campaign.protocol).figures:
        return None
    options = campaign.protocol_options
    weights = protocols.mqm_weights(options)
    tree = protocols.mqm_tree(options)
    ratings = campaign_ratings(campaign, exclude_flagged=exclude_flagged)
    scores = Table("mqm_scores", "MQM scores by system (lower is better)", [
        Column("system", "System"), Column("score", "MQM score", "num", count="segments"),
        Column("ci_low", "95% CI low", "num"), Column("ci_high", "95% CI high", "num"),
        Column("rank_range", "Ranks"), Column("ratings", "Ratings", "int"), Column("segments", "Segments", "int"),
    ], note="A segment's score is the sum of its errors' weights; a system's score the mean over its ratings "
            "(rated segment and rater pairs). Intervals: percentile bootstrap over segments (1,000 resamples, seed 0); "
            "ranks: paired approximate randomization tests, Holm-corrected.")
    scores.rows = [{**row, "rank_range": rank_range_text(row["rank_range"])}
                   for row in score_rows(ratings, weights=weights)]
    by_category = Table("mqm_categories", "MQM errors by top-level category", [
        Column("system", "System"), Column("category", "Category"), Column("errors", "Errors", "int"),
        Column("score", "Score share", "num"),
    ], note="The score share is the category's weight per rated segment; a system's shares add up to its score.")
    for system, figures in categories(ratings, weights=weights, tree=tree).items():
        by_category.rows += [{"system": system, "category": f.category, "errors": f.errors, "score": f.score}
                             for f in figures]
    agreed = agreement(ratings, weights=weights, tree=tree)
    raters = Table("mqm_agreement", "Agreement between raters on the same translations", [
        Column("pair", "Raters"), Column("segments", "Shared", "int"),
        Column("char_f1", "Character F1 %", "pct"), Column("char_f1_category", "F1 with category %", "pct"),
        Column("pearson", "Score Pearson r", "num"),
    ], note="Character F1 as factgenie computes it (overlapping characters over summed span lengths, on "
            "translations where both marked a located span); segment scores compared with Pearson's r.")
    raters.rows = [{"pair": f"{p.a} / {p.b}", "segments": p.outputs, "char_f1": _pct(p.char.f1),
                    "char_f1_category": _pct(p.char_labelled.f1), "pearson": p.scores.pearson}
                   for p in agreed.pairs]
    scheme = ", ".join(f"{c} {s}: {w:g}" for c, table in weights.as_mapping().items() for s, w in table.items())
    text = (f"Weights (category, severity: weight; * any): {scheme}. {len(ratings)} rated translations by "
            f"{len({r.rater for r in ratings})} rater(s).")
    return text, [scores, by_category] + ([raters] if raters.rows else [])
