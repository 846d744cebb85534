"""A comparing campaign's screens as rows: the export of units (one row per output shown, with the unit's choice,
positions and timings) and the side-by-side figures' input read from the same rows, so `pairwise_scores
--campaign` is a recomputation of the export by construction and a test can check it from the file.

Only finished screens count in the figures; the export lists every screen, finished or not.
"""

from __future__ import annotations

import io
import json
from typing import TypedDict

from annotator.models import Campaign, UnitOutput
from corpus.protocols import pairwise
from corpus.spreadsheet import sheet_writer
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
    opened_at: str | None
    chosen_at: str | None
    finished_at: str | None


UNIT_COLUMNS = tuple(UnitRow.__annotations__)


def _when(moment) -> str | None:
    return moment.isoformat() if moment else None


def unit_rows(campaign: Campaign) -> list[UnitRow]:
    """Every screen's outputs in (annotator, screen number, position) order."""
    rows = list(UnitOutput.objects.filter(unit__campaign=campaign)
                .select_related("unit__annotator", "assignment__item")
                .order_by("unit__annotator__username", "unit__number", "position"))
    sizes: dict[int, dict[int, str]] = {}
    for row in rows:
        sizes.setdefault(row.unit_id, {})[row.position] = row.assignment.item.system
    answer = []
    for row in rows:
        unit = row.unit
        choice = "" if unit.choice is None else "tie" if unit.choice == pairwise.TIE else str(unit.choice)
        answer.append(UnitRow(
            unit=unit.pk, annotator=unit.annotator.username, segment=unit.segment, number=unit.number,
            position=row.position, system=row.assignment.item.system, item_id=row.assignment.item_id,
            outputs=len(sizes[unit.pk]), choice=choice,
            preferred_system=sizes[unit.pk].get(unit.choice, "") if unit.choice else "",
            reason=unit.reason, first_ms=unit.first_ms, choice_ms=unit.choice_ms, changes=unit.changes,
            opened_at=_when(unit.opened_at), chosen_at=_when(unit.chosen_at), finished_at=_when(unit.finished_at)))
    return answer


def judged_from_rows(rows: list[UnitRow]) -> list[Judged]:
    """The finished screens' outputs as stats.pairwise reads them: the better output scores 0 and the other 1, a
    tie 0 for both (pairwise.scores), on the screen they shared, at the position they had."""
    judged = []
    for row in rows:
        if not row["finished_at"] or row["choice"] == "":
            continue
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
