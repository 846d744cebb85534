"""DA's figures and Appraise's scores CSV: raw and per-annotator z-scored system scores with intervals and rank
ranges (stats.systems), agreement between annotators, the BAD items, the report section, the JSON and the data
card's tables, and the campaign written to and read from Appraise's CSV (corpus.protocols.da).

A rating is a finished, scored real assignment (analytics.selectors.exclusion.rated_assignments: no training,
control or planted item, the flagged annotators left out or counted as the exclusion says); its unit the item's
id, which every system's output of one segment shares. Z-scores standardise each annotator's real ratings (WMT's
DA); the clusters are the z-scores' (WMT ranks by them), the raw scores keep their own rank ranges.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime
from typing import IO, TYPE_CHECKING, Any

from django.db import transaction
from django.db.models import Max

from accounts.models import User
from analytics.protocols import CampaignFormat, FigureSet, register_figures, register_format
from analytics.report.sections import ReportFigure, Section
from analytics.selectors.exclusion import Exclusion, exclusion_for, rated_assignments
from analytics.selectors.systems import system_rows
from analytics.tables import Column, Table
from annotator.engine.phases import Phase
from annotator.models import Assignment, Campaign, ItemScore
from corpus.interop import appraise
from corpus.models import Item
from corpus.protocols import ProtocolError
from quality.models import PlantedOutput
from quality.selectors.vigilance import campaign_checks
from stats.ranking import rank_range_text
from stats.systems import Observation, Rated, rater_agreement, standardised, system_results

if TYPE_CHECKING:
    from matplotlib.figure import Figure

KEY = "da_scores"
FORMAT = "appraise-csv"
NO_SYSTEM = "(no system)"


def _rated(exclusion: Exclusion) -> list[Rated]:
    assignments = rated_assignments(exclusion).select_related("item")
    scores = dict(ItemScore.objects.filter(assignment__in=assignments, score__isnull=False)
                  .values_list("assignment_id", "score"))
    rows = [a for a in assignments.order_by("pk") if a.pk in scores]
    names = dict(User.objects.filter(pk__in={a.annotator_id for a in rows}).values_list("pk", "username"))
    return [Rated(system=a.item.system or NO_SYSTEM, unit=a.item.external_id, rater=names[a.annotator_id],
                  value=float(scores[a.pk])) for a in rows]


def _bad(campaign: Campaign, excluded: set[int]) -> list[dict[str, Any]]:
    """Per annotator with BAD items: how many were scored and caught (quality.selectors.vigilance's rule: below the
    original's score) and the mean points the copy lost against its original."""
    scores = {(a, i): v for a, i, v in ItemScore.objects.filter(
        assignment__campaign=campaign, assignment__status=Assignment.Status.DONE, score__isnull=False)
        .values_list("assignment__annotator_id", "assignment__item_id", "score")}
    drops: dict[int, list[float]] = defaultdict(list)
    for planted in PlantedOutput.objects.filter(campaign=campaign, annotator__isnull=False):
        copy = scores.get((planted.annotator_id, planted.item_id))
        original = scores.get((planted.annotator_id, planted.original_id))
        if original is None:
            others = [v for (a, i), v in scores.items() if i == planted.original_id]
            original = sum(others) / len(others) if others else None
        if copy is not None and original is not None:
            drops[planted.annotator_id].append(original - copy)
    rows = []
    for checks in campaign_checks(campaign):
        planted = checks.figures.planted
        if not planted.n:
            continue
        mine = drops.get(checks.user_id, [])
        rows.append({"annotator": checks.annotator, "bad_items": planted.n, "caught": planted.k,
                     "share": planted.rate, "mean_drop": sum(mine) / len(mine) if mine else None,
                     "excluded": checks.user_id in excluded})
    return rows


def campaign_da(campaign: Campaign, *, n_resamples: int = 1000, seed: int = 0,
                exclude_flagged: bool | None = None) -> dict[str, Any]:
    """Every DA figure of a campaign as JSON (GET /api/analytics/campaigns/ID/figures/da_scores)."""
    exclusion = exclusion_for(campaign, exclude_flagged)
    rated = _rated(exclusion)
    raw = system_results((Observation(r.system, r.unit, r.value) for r in rated), better="higher",
                         n_resamples=n_resamples, seed=seed)
    z_rated = standardised(rated)
    z = system_results((Observation(r.system, r.unit, r.value) for r in z_rated), better="higher",
                       n_resamples=n_resamples, seed=seed)
    agreement = rater_agreement(rated)

    def corr(c) -> dict[str, Any]:
        return {"n": c.n, "pearson": c.pearson, "pearson_p": c.pearson_p, "kendall": c.kendall,
                "kendall_p": c.kendall_p}

    return {
        "campaign": campaign.pk, "ratings": len(rated), "annotators": len({r.rater for r in rated}),
        "resamples": n_resamples, "seed": seed, "exclude_flagged": exclusion.exclude,
        "excluded": list(exclusion.excluded),
        "systems": system_rows(raw.systems), "z_systems": system_rows(z.systems),
        "pairs": [{"a": p.a, "b": p.b, "difference": p.difference, "p": p.p, "p_holm": p.p_holm,
                   "segments": p.segments} for p in z.pairs],
        "agreement": {"scores": corr(agreement.scores),
                      "pairs": [{"a": p.a, "b": p.b, "outputs": p.outputs, **corr(p.scores)}
                                for p in agreement.pairs]},
        "bad": _bad(campaign, set(exclusion.excluded_ids)),
    }


def scores_figure(result: dict[str, Any]) -> Figure | None:
    """Mean z-score per system with its 95% interval, best first, the rank range in brackets."""
    from matplotlib.figure import Figure

    rows = result["z_systems"]
    if not rows:
        return None
    fig = Figure(figsize=(max(4.0, 0.9 * len(rows) + 2), 3.0))
    ax = fig.add_subplot()
    x = list(range(len(rows)))
    low = [r["score"] - r["ci_low"] if r["ci_low"] is not None else 0 for r in rows]
    high = [r["ci_high"] - r["score"] if r["ci_high"] is not None else 0 for r in rows]
    ax.errorbar(x, [r["score"] for r in rows], yerr=[low, high], fmt="o", capsize=4)
    ax.axhline(0, linewidth=0.5, color="grey")
    ax.set_xticks(x, [f"{r['system']} ({rank_range_text(r['rank_range'])})".replace("$", r"\$") for r in rows],
                  rotation=20, ha="right")
    ax.set_ylabel("mean DA z-score")
    return fig


def _system_table(key: str, title: str, rows: list[dict[str, Any]], note: str) -> Table:
    table = Table(key, title, [
        Column("system", "System"), Column("score", "Mean", "num", count="segments"),
        Column("ci_low", "95% CI low", "num"), Column("ci_high", "95% CI high", "num"),
        Column("rank_range", "Ranks"), Column("ratings", "Ratings", "int"), Column("segments", "Segments", "int"),
    ], note=note)
    table.rows = [{**row, "rank_range": rank_range_text(row["rank_range"])} for row in rows]
    return table


def da_section(campaign: Campaign, exclusion: Exclusion) -> Section | None:
    """The DA section of the report, the analytics page and the data card."""
    result = campaign_da(campaign, exclude_flagged=exclusion.exclude)
    method = (f"Intervals: percentile bootstrap over segments ({result['resamples']:,} resamples, seed "
              f"{result['seed']}); ranks: clusters from paired approximate randomization tests, Holm-corrected.")
    tables = [
        _system_table("da_scores", "DA scores by system (raw 0-100, higher is better)", result["systems"],
                      "Mean of the raw 0-100 scores over a system's ratings. " + method),
        _system_table("da_z_scores", "DA z-scores by system (per annotator)", result["z_systems"],
                      "Each annotator's scores standardised by their own mean and standard deviation, then "
                      "averaged per system. " + method),
    ]
    pairs = Table("da_pairs", "Pairwise tests of the z-scores", [
        Column("a", "A"), Column("b", "B"), Column("difference", "A - B", "num", count="segments"),
        Column("p", "p", "p"), Column("p_holm", "p (Holm)", "p"), Column("segments", "Shared segments", "int"),
    ], note="Two-sided approximate randomization over the segments both systems have; alpha 0.05.")
    pairs.rows = list(result["pairs"])
    agreement = result["agreement"]
    raters = Table("da_agreement", "Agreement between annotators on the same outputs", [
        Column("pair", "Annotators"), Column("outputs", "Shared outputs", "int"),
        Column("pearson", "Pearson r", "num", count="outputs"), Column("kendall", "Kendall tau", "num"),
    ], note="Raw scores, over the outputs both rated (undefined below 3 or for a constant side).")
    raters.rows = [{**p, "pair": f"{p['a']} / {p['b']}"} for p in agreement["pairs"]]
    raters.rows.append({"pair": "all pairs", "outputs": agreement["scores"]["n"],
                        "pearson": agreement["scores"]["pearson"], "kendall": agreement["scores"]["kendall"]})
    bad = Table("da_bad", "BAD items: degraded copies scored below their originals", [
        Column("annotator", "Annotator"), Column("bad_items", "BAD items", "int"), Column("caught", "Caught", "int"),
        Column("share", "Share caught", "pct"), Column("mean_drop", "Mean drop (points)", "num"),
    ], note="A BAD item is caught when its score is below the original's (the annotator's own score of it, else "
            "the others' mean). The checks flag an annotator whose share is below the campaign's threshold.")
    bad.rows = [{**row, "share": None if row["share"] is None else 100 * row["share"]} for row in result["bad"]]
    tables += [pairs, raters, bad]
    left_out = f" (the ratings of {', '.join(result['excluded'])}, flagged, left out)" if result["excluded"] else ""
    text = (f"{result['ratings']} scored ratings by {result['annotators']} annotators{left_out}. Systems are ranked "
            "by their mean per-annotator z-score (higher is better); systems that no test separates share a rank "
            "range.")
    figure = scores_figure(result)
    figures = [ReportFigure("da_scores", "Mean DA z-score per system with 95% bootstrap intervals (rank range in "
                                         "brackets).", figure)] if figure is not None else []
    return Section("da", "DA", text=text, tables=tables, figures=figures)


register_figures(FigureSet(KEY, da_section, data=campaign_da))


# ---- Appraise's scores CSV ----------------------------------------------------------------------------------

def _languages(campaign: Campaign, item: Item) -> tuple[str, str]:
    options = campaign.protocol_options or {}
    return (str(item.extra.get("source_language") or options.get("source_language") or ""),
            str(item.extra.get("target_language") or options.get("target_language") or ""))


def write_appraise(campaign: Campaign, handle: IO[str]) -> int:
    """Every scored real and BAD rating of the campaign (training and control items aside), by assignment."""
    planted = {p.item_id: p for p in PlantedOutput.objects.filter(campaign=campaign).select_related("original")}
    rows = []
    for a in (Assignment.objects.filter(campaign=campaign, is_training=False, is_control=False,
                                        item_score__score__isnull=False)
              .select_related("item", "annotator", "item_score").order_by("pk")):
        copy = planted.get(a.item_id)
        if a.item.derived_from_id is not None and copy is None:
            continue  # a derived item that is no BAD copy of this campaign
        shown = copy.original if copy is not None else a.item
        source, target = _languages(campaign, shown)
        rows.append(appraise.AppraiseRow(
            annotator=a.annotator.username, system=shown.system, item=shown.external_id,
            type=appraise.BAD if copy is not None else appraise.TGT, source_language=source, target_language=target,
            score=a.item_score.score, document=str(shown.extra.get("document") or ""),
            complete=a.status == Assignment.Status.DONE,
            start=a.opened_at.timestamp() if a.opened_at else None,
            end=a.finished_at.timestamp() if a.finished_at else None))
    return appraise.write_appraise(rows, handle)


def _moment(seconds: float | None) -> datetime | None:
    return None if seconds is None else datetime.fromtimestamp(seconds, tz=UTC)


@transaction.atomic
def read_appraise(campaign: Campaign, lines, *, create_annotators: bool = False) -> dict[str, int]:
    """Store each complete TGT line as a finished rating of the campaign: the item by (system, item id) in the
    campaign's dataset, the annotator by username. BAD, REF and CHK lines and incomplete ones are counted, not
    stored (their items are Appraise's own). A line for a rating the campaign already has is refused. The
    rating's opening and finish are the line's start and end."""
    rows = list(appraise.read_appraise(lines))
    wanted = [r for r in rows if r.type == appraise.TGT and r.complete]
    items = {(i.system, i.external_id): i for i in Item.objects.filter(
        dataset_id=campaign.dataset_id, derived_from__isnull=True, external_id__in={r.item for r in wanted})}
    missing = sorted({f"{r.system}/{r.item}" for r in wanted if (r.system, r.item) not in items})
    if missing:
        raise ProtocolError(f"items not in the campaign's dataset: {', '.join(missing[:5])}"
                            + (f" and {len(missing) - 5} more" if len(missing) > 5 else ""), field="item")
    users = {u.username: u for u in User.objects.filter(username__in={r.annotator for r in wanted})}
    unknown = sorted({r.annotator for r in wanted} - set(users))
    if unknown and not create_annotators:
        raise ProtocolError(f"unknown annotators {', '.join(unknown[:5])} (--create-annotators makes them)",
                            field="annotator")
    for name in unknown:
        user = User(username=name)
        user.set_unusable_password()
        user.save()
        users[name] = user
    taken = set(Assignment.objects.filter(campaign=campaign).values_list("item_id", "annotator_id"))
    order = Assignment.objects.filter(campaign=campaign).aggregate(m=Max("order"))["m"] or 0
    made = 0
    for row in wanted:
        item, user = items[(row.system, row.item)], users[row.annotator]
        if (item.pk, user.pk) in taken:
            raise ProtocolError(f"{row.annotator} already rated {row.system}/{row.item} in this campaign",
                                field="file")
        taken.add((item.pk, user.pk))
        order += 1
        # Created finished: an imported rating was given elsewhere, so it never moves through this site's phases.
        assignment = Assignment.objects.create(campaign=campaign, item=item, annotator=user, order=order,
                                               status=Assignment.Status.DONE, phase=Phase.DONE,
                                               opened_at=_moment(row.start), finished_at=_moment(row.end))
        ItemScore.objects.create(assignment=assignment, score=row.score, score_changes=1)
        made += 1
    return {"ratings": made, "skipped": len(rows) - made, "annotators created": len(unknown)}


register_format(CampaignFormat(FORMAT, ".csv", write_appraise, read_appraise))
