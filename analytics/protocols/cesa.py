"""Contrastive ESA's campaign format: Pearmut's contrastive log (its cESA protocol), one line per finished screen
of a judge, the screen's outputs as the systems of one segment, each with its score and spans and ESA^AI's
pre-filled spans where the screen was pre-filled. Read back by corpus.interop.pearmut like any Pearmut log. The
line's systems are in key order (the log module writes sorted keys); the positions shown are in `export_units`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import IO

from analytics.protocols import CampaignFormat, register_format
from analytics.selectors.esa import campaign_pearmut_ratings
from annotator.models import Assignment, Campaign, UnitOutput
from corpus.interop.pearmut import pearmut_lines

FORMAT = "pearmut-contrastive"


def contrastive_ratings(campaign: Campaign):
    """The finished outputs' Pearmut ratings regrouped by screen: `item_i` the judge's screen (0-based), the
    system's place its position there; outputs of screens not yet finished are left out."""
    rows = list(UnitOutput.objects.filter(unit__campaign=campaign).select_related("unit__annotator", "assignment__item")
                .order_by("unit__number", "position"))
    members: dict[int, list[UnitOutput]] = {}
    for row in rows:
        members.setdefault(row.unit_id, []).append(row)
    place: dict[tuple[str, str, str], tuple[int, int]] = {}
    for mates in members.values():
        if any(m.assignment.status != Assignment.Status.DONE for m in mates):
            continue
        for m in mates:
            key = (m.unit.annotator.username, m.assignment.item.external_id, m.assignment.item.system)
            place.setdefault(key, (m.unit.number - 1, m.position - 1))
    out = []
    for rating in campaign_pearmut_ratings(campaign):
        found = place.get((rating.user_id, rating.item_id or "", rating.system))
        if found is not None:
            out.append(replace(rating, item_i=found[0], k=0, m=found[1]))
    return out


def write_contrastive(campaign: Campaign, handle: IO[str]) -> int:
    ratings = contrastive_ratings(campaign)
    handle.writelines(pearmut_lines(ratings))
    return len(ratings)


register_format(CampaignFormat(FORMAT, ".jsonl", write_contrastive))
