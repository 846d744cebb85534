"""The report's ESA section: mean scores by system with intervals and rank ranges, the pairwise tests, spans by
severity, agreement between raters, and for ESA^AI what became of the pre-filled spans and the two arms side by
side (the control arm's figures for this protocol).

Only an ESA campaign has it. The OpeNLGauge sections (Table 4, verdict agreement, evaluator ranking, the
verdict-based priming figures) do not apply: nobody judged machine spans there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from analytics.selectors.esa import campaign_esa, has_esa_figures
from analytics.tables import Column, Table
from annotator.models import Campaign
from stats.ranking import rank_range_text

if TYPE_CHECKING:
    from matplotlib.figure import Figure

ARM_NAMES = {"esa": "ESA (control arm)", "esa_ai": "ESA^AI"}


def _pct(value: float | None) -> float | None:
    return None if value is None else 100 * value


def scores_figure(result: dict[str, Any]) -> Figure | None:
    """Mean score per system with its 95% interval, best first."""
    from matplotlib.figure import Figure

    rows = result["systems"]
    if not rows:
        return None
    fig = Figure(figsize=(max(4.0, 0.9 * len(rows) + 2), 3.0))
    ax = fig.add_subplot()
    x = list(range(len(rows)))
    values = [r["score"] for r in rows]
    low = [r["score"] - r["ci_low"] if r["ci_low"] is not None else 0 for r in rows]
    high = [r["ci_high"] - r["score"] if r["ci_high"] is not None else 0 for r in rows]
    ax.errorbar(x, values, yerr=[low, high], fmt="o", capsize=4)
    # a "$" in a system name would start matplotlib's mathtext
    ax.set_xticks(x, [f"{r['system']} ({rank_range_text(r['rank_range'])})".replace("$", r"\$") for r in rows],
                  rotation=20, ha="right")
    ax.set_ylim(0, 100)
    ax.set_ylabel("mean ESA score (0-100)")
    return fig


def esa_report(campaign: Campaign, *, exclude_flagged: bool | None = None
               ) -> tuple[str, list[Table], Figure | None] | None:
    """The ESA section's text, tables and figure, the flagged annotators left out or counted as the report
    decided (None: the campaign's setting); None for a campaign of another protocol."""
    if not has_esa_figures(campaign):
        return None
    result = campaign_esa(campaign, exclude_flagged=exclude_flagged)
    scores = Table("esa_scores", "ESA scores by system (higher is better)", [
        Column("system", "System"), Column("score", "Mean score", "num", count="segments"),
        Column("ci_low", "95% CI low", "num"), Column("ci_high", "95% CI high", "num"),
        Column("rank_range", "Ranks"), Column("ratings", "Ratings", "int"), Column("segments", "Segments", "int"),
    ], note=f"Mean of the 0-100 scores over a system's ratings. Intervals: percentile bootstrap over segments "
            f"({result['resamples']:,} resamples, seed {result['seed']}); ranks: WMT-style clusters from the "
            "paired tests below.")
    scores.rows = [{**row, "rank_range": rank_range_text(row["rank_range"])} for row in result["systems"]]
    pairs = Table("esa_ranking_pairs", "Pairwise tests of the ESA scores", [
        Column("a", "A"), Column("b", "B"), Column("difference", "A - B (points)", "num", count="segments"),
        Column("p", "p", "p"), Column("p_holm", "p (Holm)", "p"), Column("segments", "Shared segments", "int"),
    ], note="Two-sided approximate randomization over the segments both systems have (each segment's ratings "
            "swapped between the two with probability 1/2), Holm-corrected over all pairs; alpha 0.05.")
    pairs.rows = list(result["pairs"])
    severities = Table("esa_severities", "Error spans by severity", [
        Column("system", "System"), Column("ratings", "Ratings", "int"), Column("minor", "Minor", "int"),
        Column("major", "Major", "int"), Column("missing", "of which missing content", "int"),
        Column("per_rating", "Spans per rating", "num", count="ratings"),
    ], note="Missing content is an error without characters (marked at the end of the output).")
    severities.rows = list(result["severities"])
    agreement = result["agreement"]
    raters = Table("esa_agreement", "Agreement between raters on the same outputs", [
        Column("pair", "Raters"), Column("outputs", "Shared outputs", "int"),
        Column("pearson", "Score Pearson r", "num", count="outputs"), Column("kendall", "Score Kendall tau", "num"),
        Column("char_f1", "Character F1 %", "pct"), Column("char_f1_severity", "F1 with severity %", "pct"),
    ], note="Scores: Pearson and Kendall's tau-b over the shared outputs (undefined below 3 or for a constant "
            "side). Character F1 as factgenie computes it (only outputs where both marked a located span).")
    raters.rows = [{**p, "pair": f"{p['a']} / {p['b']}", "char_f1": _pct(p["char_f1"]),
                    "char_f1_severity": _pct(p["char_f1_severity"])} for p in agreement["pairs"]]
    raters.rows.append({"pair": "all pairs", "outputs": agreement["scores"]["n"],
                        "pearson": agreement["scores"]["pearson"], "kendall": agreement["scores"]["kendall"],
                        "char_f1": _pct(agreement["char_f1"]), "char_f1_severity": _pct(agreement["char_f1_severity"])})
    tables = [scores, pairs, severities, raters]
    prefill = result["prefill"]
    if prefill["outputs"]:
        outcomes = Table("esa_prefill", "ESA^AI: what became of the pre-filled spans", [
            Column("outputs", "ESA^AI ratings", "int"), Column("prefilled", "Pre-filled", "int"),
            Column("kept", "Kept as they came", "int"), Column("deleted", "Deleted", "int"),
            Column("resized", "Resized", "int"), Column("regraded", "Re-graded", "int"),
            Column("added", "Spans added", "int"),
        ], note=f"Machine severities {prefill['major_from']}-5 arrived as Major, the rest as Minor. A span both "
                "resized and re-graded counts in both columns.")
        outcomes.rows = [prefill]
        tables.append(outcomes)
    arms = result["arms"]
    if all(a["ratings"] for a in arms["arms"]):
        table = Table("esa_arms", "ESA (control arm) against ESA^AI on the same outputs", [
            Column("arm", "Arm"), Column("ratings", "Ratings", "int"), Column("score", "Mean score", "num"),
            Column("spans", "Spans", "int"), Column("major", "Major", "int"),
            Column("seconds_per_item", "s per item", "num"), Column("seconds_per_span", "s per error span", "num"),
            Column("span_phase_seconds_per_span", "s per span (span phase)", "num"),
        ], note="Seconds: the working time the item screen counted; the span phase runs from the page's load to "
                "spans done (as the page measured it).")
        table.rows = [{**a, "arm": ARM_NAMES[a["arm"]]} for a in arms["arms"]]
        paired = Table("esa_arm_differences", "ESA^AI minus ESA on the outputs seen in both arms", [
            Column("measure", "Per output"), Column("difference", "ESA^AI - ESA", "num", count="outputs"),
            Column("ci_low", "95% CI low", "num"), Column("ci_high", "95% CI high", "num"),
            Column("outputs", "Outputs", "int"),
        ], note="Per output, the mean over its ESA^AI ratings minus the mean over its ESA ratings, averaged over "
                "the outputs; intervals: percentile bootstrap over those outputs.")
        paired.rows = [{"measure": "score", **arms["score_difference"]},
                       {"measure": "error spans", **arms["spans_difference"]}]
        tables += [table, paired]
    return _text(result), tables, scores_figure(result)


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def _text(result: dict[str, Any]) -> str:
    arms = result["arms"]
    machine = arms["machine"]
    left_out = f" (the ratings of {', '.join(result['excluded'])}, flagged, left out)" if result["excluded"] else ""
    text = (f"{result['ratings']} scored ratings{left_out}. Systems are ranked by their mean 0-100 score (higher is "
            "better); systems that no test separates share a rank range.")
    if machine["machine_spans"]:
        text += (f" On the outputs seen in both arms, the machine marked {machine['machine_spans']} spans: "
                 f"annotators working without them marked an overlapping span for "
                 f"{_fmt(_pct(machine['found_unprimed']))}% of them, annotators who saw them pre-filled kept "
                 f"{_fmt(_pct(machine['kept_primed']))}%. A kept span that nobody found unprimed is not necessarily "
                 "a false error (annotators working alone miss errors too), so the gap bounds the priming effect "
                 "from above.")
    return text
