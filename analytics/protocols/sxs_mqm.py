"""Side-by-side MQM's campaign format: Google's side-by-side TSV (corpus.interop.mqm_sxs) written from a campaign's
finished comparison screens, so that the file read back gives the same screens, positions and errors, and
`pairwise_scores --dataset` of it equals `pairwise_scores --campaign`. Raters are pseudonymous (rater1, ...), as
in the pointwise TSV."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import IO

from analytics.protocols import CampaignFormat, register_format
from analytics.selectors.mqm import campaign_mqm_errors, rater_pseudonyms
from analytics.selectors.units import real_screens
from annotator.models import Campaign, UnitOutput
from corpus.interop.mqm_sxs import CLEAN, ERROR, HEADER, SxsRating, SxsRow, sxs_tsv_lines
from corpus.models import Item
from corpus.selectors.mqm import ITEM_FIELDS, item_rating

FORMAT = "mqm-sxs-tsv"
SOURCE_SIDE = 0  # the TSV's `side` of an error marked in the source


def sxs_ratings(campaign: Campaign) -> list[SxsRating]:
    """The finished screens' outputs as side-by-side ratings, in (rater, input, screen, position) order, each error
    a row whose metadata says its side and a timestamp that keeps a screen's rows together in time."""
    outputs = list(real_screens(UnitOutput.objects.filter(unit__campaign=campaign)).select_related("unit", "assignment")
                   .order_by("unit__annotator_id", "unit__segment", "unit__number", "position"))
    by_unit: dict[int, list[UnitOutput]] = defaultdict(list)
    for row in outputs:
        by_unit[row.unit_id].append(row)
    finished = {pk for pk, mates in by_unit.items() if all(m.assignment.is_done() for m in mates)}
    items = {row["pk"]: row for row in Item.objects.filter(
        pk__in={o.assignment.item_id for o in outputs}).values(*ITEM_FIELDS)}
    raters = rater_pseudonyms(campaign)
    errors = campaign_mqm_errors(campaign)
    ratings, line = [], 1
    screens: dict[tuple[int, str], int] = defaultdict(int)
    for row in outputs:
        if row.unit_id not in finished:
            continue
        unit = row.unit
        if row.position == 1:
            screens[(unit.annotator_id, unit.segment)] += 1
        found = errors.get((row.assignment.item_id, unit.annotator_id), [])
        when = int(max(m.assignment.finished_at for m in by_unit[row.unit_id]).timestamp() * 1000)
        rated = SxsRating(item_rating(items[row.assignment.item_id], rater=raters[unit.annotator_id], errors=found),
                          screen=screens[(unit.annotator_id, unit.segment)], position=row.position)
        for k, error in enumerate(found or [None]):
            line += 1
            side = SOURCE_SIDE if error is not None and error.side == "source" else row.position
            metadata = json.dumps({"timestamp": when + 10 * row.position + k, "side": side})
            rated.rows.append(SxsRow(line=line, kind=CLEAN if error is None else ERROR, metadata=metadata,
                                     error=None if error is None else k))
        ratings.append(rated)
    return ratings


def write_sxs_tsv(campaign: Campaign, handle: IO[str]) -> int:
    ratings = sxs_ratings(campaign)
    handle.writelines(sxs_tsv_lines(list(HEADER), ratings))
    return len(ratings)


register_format(CampaignFormat(FORMAT, ".tsv", write_sxs_tsv))
