"""Pairwise preference's analytics: the side-by-side figures of a campaign's finished screens (Bradley-Terry
strengths, every pair's wins with a sign test, position bias) as a report, analytics-page and data-card section,
and the export of units as a campaign format. The numbers are analytics.selectors.pairwise's, at
/api/analytics/campaigns/ID/pairwise."""

from __future__ import annotations

from typing import IO, Any

from analytics.protocols import CampaignFormat, FigureSet, register_figures, register_format
from analytics.report.sections import Section
from analytics.selectors.exclusion import Exclusion
from analytics.selectors.pairwise import NoUnits, campaign_pairwise
from analytics.selectors.units import unit_rows, units_csv
from analytics.tables import Column, Table
from annotator.models import Campaign
from stats.ranking import rank_range_text

KEY = "pairwise"
RESAMPLES = 1000


def pairwise_section(campaign: Campaign, exclusion: Exclusion) -> Section | None:
    """The side-by-side section; a sentence instead of tables while no screen is finished."""
    try:
        result = campaign_pairwise(campaign, n_resamples=RESAMPLES)
    except NoUnits as exc:
        return Section(KEY, "Side by side", text=f"No figures yet: {exc}.")
    systems = Table("pairwise_systems", "Systems by Bradley-Terry strength", [
        Column("system", "System"), Column("strength", "Log-strength", "num"), Column("ci_low", "95% CI low", "num"),
        Column("ci_high", "95% CI high", "num"), Column("rank_range", "Ranks"),
    ], note="Strengths fitted to the screens' wins (ties left out), summing to zero; intervals from a bootstrap over "
            f"inputs ({RESAMPLES:,} resamples, seed 0); systems that no Holm-adjusted pair test separates share ranks.")
    systems.rows = [{**row, "rank_range": rank_range_text(tuple(row["rank_range"]) if row["rank_range"] else None)}
                    for row in result["systems"]]
    pairs = Table("pairwise_pairs", "Every pair of systems shown together", [
        Column("a", "A"), Column("b", "B"), Column("units", "Screens", "int"), Column("a_better", "A better", "int"),
        Column("b_better", "B better", "int"), Column("ties", "Ties", "int"),
        Column("a_win_rate", "A's win rate", "num", count="units"), Column("p_value", "p (sign test)", "p"),
        Column("p_holm", "p (Holm)", "p"),
    ], note="A's win rate leaves ties out; the exact two-sided sign test, Holm-adjusted over the pairs.")
    pairs.rows = list(result["pairs"])
    bias = result["position_bias"]
    share = "undefined" if bias["share"] is None else (
        f"{100 * bias['share']:.1f}% (95% CI {100 * bias['ci_low']:.1f}-{100 * bias['ci_high']:.1f}%)")
    text = (f"The first output won {bias['first_wins']} of the {bias['decided_units']} screens that were not ties: "
            f"{share}. Positions were counterbalanced when the campaign was made, so a share far from 50% is a "
            "position bias of the judges, not of the design.")
    return Section(KEY, "Side by side", text=text, tables=[systems, pairs])


def _data(campaign: Campaign, *, n_resamples: int, seed: int, exclude_flagged: bool | None = None) -> dict[str, Any]:
    return campaign_pairwise(campaign, n_resamples=n_resamples, seed=seed)


def write_units(campaign: Campaign, handle: IO[str]) -> int:
    rows = unit_rows(campaign)
    handle.write(units_csv(rows))
    return len(rows)


register_figures(FigureSet(KEY, pairwise_section, data=_data, api_path="pairwise"))
register_format(CampaignFormat("units", ".csv", write_units))
