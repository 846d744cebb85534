"""Working time, defined once: each assignment's active time and wall time, and their sums per annotator.

Active time (`annotator.engine.telemetry.active_increment`, Pearmut's rule) is measured by the server's clock
from the annotator's signals on an item: opening it (which starts a new clock and adds nothing), every action
(a verdict, a mark, an added error, an edit, undo, redo), the reveal of a control-arm output, finishing it,
and the item screen's heartbeat (sent every 30 s while the tab is visible and was used in the last two
minutes). It is the sum of the gaps between consecutive signals, each gap capped at 60 s. Wall time is the
clock time from the first signal on the item to the last. Active time never exceeds wall time; a wall time far
above the active time means the annotator was away (a tab left open, a break, a return another day).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.db.models import DurationField, ExpressionWrapper, F, QuerySet, Sum

from annotator.models import Assignment

WALL = ExpressionWrapper(F("last_active_at") - F("started_at"), output_field=DurationField())


@dataclass(frozen=True)
class WorkTime:
    active: float  # seconds
    wall: float  # seconds

    def __add__(self, other: WorkTime) -> WorkTime:
        return WorkTime(self.active + other.active, self.wall + other.wall)


def _seconds(wall: timedelta | None) -> float:
    return max(0.0, wall.total_seconds()) if wall is not None else 0.0


def assignment_time(assignment: Assignment) -> WorkTime:
    """One item's active and wall time (Assignment.wall_seconds is WALL for one row)."""
    return WorkTime(active=assignment.active_seconds, wall=assignment.wall_seconds)


def times_by_annotator(assignments: QuerySet[Assignment]) -> dict[int, WorkTime]:
    """Active and wall time summed over each annotator's assignments in `assignments` (one query)."""
    rows = assignments.values("annotator_id").annotate(active=Sum("active_seconds"), wall=Sum(WALL)).order_by()
    return {r["annotator_id"]: WorkTime(active=r["active"] or 0.0, wall=_seconds(r["wall"])) for r in rows}
