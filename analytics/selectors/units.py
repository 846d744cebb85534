"""A comparing campaign's screens as rows: the export of units (one row per output shown, with the unit's choice,
positions and timings) and the side-by-side figures' input read from the same rows, so `pairwise_scores
--campaign` is a recomputation of the export by construction and a test can check it from the file.

Only finished screens count in the figures; the export lists every screen, finished or not. A preference screen
(pairwise) is finished with its choice; a screen whose outputs' marks compare them (side-by-side MQM) when both
outputs are, and each output's `score` is then its MQM score under the campaign's weights (contrastive ESA: its
0-100 score, higher better).
"""

from __future__ import annotations

import io
import json
from collections import defaultdict
from typing import TypedDict

from annotator.models import Assignment, Campaign, EsaScore, UnitOutput
from corpus import protocols
from corpus.models import ErrorSpan
from corpus.protocols import pairwise
from corpus.protocols.mqm import severity_of_code
from corpus.spreadsheet import sheet_writer
from stats.mqm import Error, segment_score
from stats.pairwise import Judged


class UnitRow(TypedDict):
    unit: int
    annotator: str
    segment: str
    number: int
    position: int
    system: str
    item_id: int
    outputs: int
    choice: str  # the better output's position, "tie", or "" while none is given
    preferred_system: str
    reason: str
    first_ms: int | None
    choice_ms: int | None
    changes: int
    score: float | None  # the output's MQM score (side-by-side MQM) or ESA score (contrastive); None for a choice
    opened_at: str | None
    chosen_at: str | None
    finished_at: str | None
    spans: str  # under pairwise the judge's spans on this output, JSON [[start, end], ...] in code points; else ""


UNIT_COLUMNS = tuple(UnitRow.__annotations__)


def _when(moment) -> str | None:
    return moment.isoformat() if moment else None


def real_screens(rows):
    """Unit outputs of real screens only: practice screens (training items) and planted screens (a planted copy
    and its companions, all copies) are no real work, so they stay out of the exports and the figures."""
    return (rows.exclude(unit__outputs__assignment__is_training=True)
            .exclude(unit__outputs__assignment__item__derived_from__isnull=False))


def unit_rows(campaign: Campaign) -> list[UnitRow]:
    """Every real screen's outputs in (annotator, screen number, position) order (`real_screens`)."""
    declared = protocols.get(campaign.protocol)
    rows = list(real_screens(UnitOutput.objects.filter(unit__campaign=campaign))
                .select_related("unit__annotator", "assignment__item")
                .order_by("unit__annotator__username", "unit__number", "position"))
    members: dict[int, list[UnitOutput]] = {}
    for row in rows:
        members.setdefault(row.unit_id, []).append(row)
    scores = {} if declared.prefers else _esa_scores(campaign) if _scored(declared) else _mqm_scores(campaign)
    marked = _marked(campaign) if declared.prefers else {}
    answer = []
    for row in rows:
        unit, mates = row.unit, members[row.unit_id]
        systems = {m.position: m.assignment.item.system for m in mates}
        choice = "" if unit.choice is None else "tie" if unit.choice == pairwise.TIE else str(unit.choice)
        finished = unit.finished_at if declared.prefers else _all_finished(mates)
        answer.append(UnitRow(
            unit=unit.pk, annotator=unit.annotator.username, segment=unit.segment, number=unit.number,
            position=row.position, system=row.assignment.item.system, item_id=row.assignment.item_id,
            outputs=len(mates), choice=choice, preferred_system=systems.get(unit.choice, "") if unit.choice else "",
            reason=unit.reason, first_ms=unit.first_ms, choice_ms=unit.choice_ms, changes=unit.changes,
            score=scores.get((row.assignment.item_id, unit.annotator_id), 0.0) if finished and not declared.prefers
            else None,
            opened_at=_when(unit.opened_at or row.assignment.opened_at), chosen_at=_when(unit.chosen_at),
            finished_at=_when(finished),
            spans=json.dumps(marked.get((row.assignment.item_id, unit.annotator_id), [])) if declared.prefers
            else ""))
    return answer


def _marked(campaign: Campaign) -> dict[tuple[int, int], list[list[int]]]:
    """(item, annotator) -> the annotator's spans on the item in this campaign, [start, end] in text order."""
    found: dict[tuple[int, int], list[list[int]]] = defaultdict(list)
    for item_id, annotator_id, start, end in ErrorSpan.objects.filter(
            annotation__source__added__campaign=campaign, start__isnull=False).order_by("start", "end", "pk") \
            .values_list("annotation__item_id", "annotation__source__added__annotator_id", "start", "end"):
        found[(item_id, annotator_id)].append([start, end])
    return found


def _all_finished(mates: list[UnitOutput]):
    """When the last of a screen's outputs finished, if all have (a screen whose outputs finish on their own)."""
    if any(m.assignment.status != Assignment.Status.DONE or m.assignment.finished_at is None for m in mates):
        return None
    return max(m.assignment.finished_at for m in mates)


def _scored(declared: protocols.Protocol) -> bool:
    """Its outputs get a 0-100 score (contrastive ESA: higher is better); otherwise MQM's weighted errors."""
    return "score" in declared.per_item


def _esa_scores(campaign: Campaign) -> dict[tuple[int, int], float]:
    """(item, annotator) -> the annotator's ESA score of the item in this campaign."""
    return {(item_id, annotator_id): float(score) for item_id, annotator_id, score in EsaScore.objects.filter(
        assignment__campaign=campaign, score__isnull=False).values_list(
        "assignment__item_id", "assignment__annotator_id", "score")}


def _mqm_scores(campaign: Campaign) -> dict[tuple[int, int], float]:
    """(item, annotator) -> the MQM score of the annotator's errors on the item in this campaign."""
    weights = protocols.mqm_weights(campaign.protocol_options)
    errors: dict[tuple[int, int], list[Error]] = defaultdict(list)
    for item_id, annotator_id, category, severity in ErrorSpan.objects.filter(
            annotation__source__added__campaign=campaign).values_list(
            "annotation__item_id", "annotation__source__added__annotator_id", "category", "severity"):
        errors[(item_id, annotator_id)].append(Error(category, severity_of_code(severity)))
    return {key: segment_score(found, weights.weight) for key, found in errors.items()}


def judged_from_rows(rows: list[UnitRow], *, higher_is_better: bool = False) -> list[Judged]:
    """The finished screens' outputs as stats.pairwise reads them, on the screen they shared, at the position they
    had: each output's MQM score where it has one, else from the choice (the better output 0 and the other 1, a tie
    0 for both: pairwise.scores)."""
    judged = []
    for row in rows:
        if not row["finished_at"]:
            continue
        if row["score"] is not None:  # the outputs' own scores compare them (lower is better for the statistics)
            score = -row["score"] if higher_is_better else row["score"]
        elif row["choice"] == "":
            continue
        else:
            choice = pairwise.TIE if row["choice"] == "tie" else int(row["choice"])
            score = pairwise.scores(choice, row["outputs"])[row["position"] - 1]
        judged.append(Judged(system=row["system"], segment=row["segment"], rater=row["annotator"], score=score,
                             unit=row["unit"], position=row["position"]))
    return judged


def units_csv(rows: list[UnitRow]) -> str:
    out = io.StringIO()
    writer = sheet_writer(out, lineterminator="\n")
    writer.writerow(UNIT_COLUMNS)
    for row in rows:
        writer.writerow(["" if row[c] is None else row[c] for c in UNIT_COLUMNS])  # type: ignore[literal-required]
    return out.getvalue()


def units_jsonl(rows: list[UnitRow]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
