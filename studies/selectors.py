"""The researcher's list of a campaign's participants (page, API, CSV for payment, manage.py participants)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from datetime import datetime
from typing import TypedDict

from django.db.models import Count, Q

from annotator.models import Assignment
from annotator.selectors.worktime import WorkTime, times_by_annotator
from corpus.spreadsheet import sheet_writer
from quality.selectors.vigilance import campaign_checks
from studies.models import Participant, StudyLink
from studies.screening import participant_reasons


class ParticipantRow(TypedDict):
    id: int
    handle: str
    prolific_pid: str
    study_id: str
    session_id: str
    worker_id: str
    assignment_id: str  # MTurk's assignmentId
    hit_id: str
    started: str
    finished: str | None
    ended: bool  # the researchers ended the study before this participant finished
    items: int
    items_done: int
    active_seconds: int  # active time (annotator.selectors.worktime): what a researcher pays by
    wall_seconds: int  # wall time: the clock from the first signal on each item to the last
    flagged: bool  # by a researcher
    flags: list[str]
    outcome: str
    code_given: str


COLUMNS = tuple(ParticipantRow.__annotations__)


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def participant_rows(link: StudyLink) -> list[ParticipantRow]:
    """One row per participant in joining order. Items count the pool items they hold (training items
    aside); active and wall seconds sum their working time on every item, training included (pay by the
    active time: it counts reading and short pauses and leaves out time away; docs/guides/prolific.md)."""
    participants = list(link.participants.select_related("user"))  # not the link: its pool would be decoded per row
    stats = {
        row["annotator_id"]: row
        for row in Assignment.objects.filter(campaign_id=link.campaign_id,
                                             annotator_id__in=[p.user_id for p in participants])
        .values("annotator_id")
        .annotate(
            items=Count("pk", filter=Q(is_training=False)),
            done=Count("pk", filter=Q(is_training=False, status=Assignment.Status.DONE)),
        )
    }
    times = times_by_annotator(Assignment.objects.filter(campaign_id=link.campaign_id,
                                                         annotator_id__in=[p.user_id for p in participants]))
    quality = {row.user_id: row.reasons for row in campaign_checks(link.campaign)}  # once for every row
    rows: list[ParticipantRow] = []
    for p in participants:
        s = stats.get(p.user_id, {})
        spent = times.get(p.user_id, WorkTime(0.0, 0.0))
        rows.append(ParticipantRow(
            id=p.pk, handle=p.user.username, prolific_pid=p.prolific_pid, study_id=p.study_id,
            session_id=p.session_id, worker_id=p.worker_id, assignment_id=p.mturk_assignment_id, hit_id=p.hit_id,
            started=p.joined_at.isoformat(), finished=_iso(p.finished_at), ended=p.ended_at is not None,
            items=s.get("items", 0), items_done=s.get("done", 0), active_seconds=round(spent.active),
            wall_seconds=round(spent.wall),
            flagged=p.flagged, outcome=p.outcome, code_given=p.code_given,
            flags=participant_reasons(p, quality_flags=quality.get(p.user_id, []), finished_any=bool(s.get("done"))),
        ))
    return rows


def participants_csv(rows: list[ParticipantRow]) -> Iterator[str]:
    """The rows as CSV (flags joined by '; '), cells a spreadsheet would run neutralised."""
    buffer = io.StringIO()
    writer = sheet_writer(buffer)
    writer.writerow(COLUMNS)
    for row in rows:
        values = [("; ".join(row[c]) if c == "flags" else row[c]) for c in COLUMNS]
        writer.writerow(["" if v is None else v for v in values])
    yield buffer.getvalue()


def participant_for(link: StudyLink, pk: int) -> Participant | None:
    return link.participants.select_related("user").filter(pk=pk).first()


def participant_ended(pk: int) -> bool:
    """Whether the researchers ended the study of this participant (studies.participants.link_revoke)."""
    return Participant.objects.filter(pk=pk, ended_at__isnull=False).exists()
