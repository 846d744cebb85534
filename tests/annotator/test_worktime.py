"""One working time: active time from the annotator's signals (gaps capped at 60 s), wall time from the first
signal to the last, named on every screen and export; the payment list pays by active time."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from ninja.testing import TestClient

from annotator.models import Assignment
from annotator.selectors.spans import item_errors
from annotator.selectors.worktime import times_by_annotator
from annotator.services.assignments import assignment_add_time, assignment_finish
from annotator.services.judgments import judgment_set
from config.api import api
from quality.selectors.vigilance import campaign_checks
from studies.participants import participant_join
from studies.selectors import participant_rows
from tests.annotator.study_links import link_study
from tests.control_arm_study import script_clock
from tests.factories import build_campaign

pytestmark = pytest.mark.django_db
DAY = 24 * 3600


def _verdict(assignment: Assignment, row, verdict: str) -> None:
    assignment.refresh_from_db()  # as each request loads it
    judgment_set(assignment=assignment, span=row.span, user=assignment.annotator,
                 changes={"span_verdict": verdict, "explanation_verdict": "correct"})


def test_active_time_counts_signals_capped_and_never_exceeds_wall_time(client, make_user):
    """Opening an item starts a new clock: coming back a day later adds nothing (it used to add a capped gap,
    which is how active time outgrew the 'wall' figure on the campaign page)."""
    expert = make_user("timed")
    built = build_campaign([expert], name="timed campaign")
    work = Assignment.objects.filter(annotator=expert).order_by("order").first()
    rows, _ = item_errors(work)
    client.force_login(expert)
    with script_clock() as clock:
        def at(seconds: float) -> None:
            clock.now = start + timedelta(seconds=seconds)

        start = clock.now
        assert client.get(reverse("item_screen", args=[work.pk])).status_code == 200  # opens: +0
        at(20)
        _verdict(work, rows[0], "error")  # +20
        for t in (50, 80):  # the screen's heartbeat while the page is in use: +30, +30
            at(t)
            assignment_add_time(assignment=work, user=expert, seconds=30)
        at(400)
        _verdict(work, rows[0], "not_error")  # 320 s later: capped at 60
        at(DAY)
        assert client.get(reverse("item_screen", args=[work.pk])).status_code == 200  # back a day later: +0
        at(DAY + 10)
        for row in rows:
            _verdict(work, row, "error")  # +10, then +0
        at(DAY + 15)
        assignment_finish(assignment=work, user=expert)  # +5
    work.refresh_from_db()
    assert work.active_seconds == pytest.approx(20 + 30 + 30 + 60 + 10 + 5)
    assert work.wall_seconds == pytest.approx(DAY + 15)
    times = times_by_annotator(Assignment.objects.filter(pk=work.pk))[expert.pk]
    assert (times.active, times.wall) == (pytest.approx(155), pytest.approx(DAY + 15))
    (checks,) = [row for row in campaign_checks(built.campaign) if row.user_id == expert.pk]
    assert checks.as_dict()["active_seconds"] == 155 and checks.as_dict()["wall_seconds"] == DAY + 15

    client.force_login(make_user("time-researcher", role="researcher"))
    page = client.get(reverse("campaign_entry", args=[built.campaign.pk])).content.decode()
    quality = page[page.index('id="quality-checks"'):]
    assert ">Active time</th><th" in quality and ">Wall time</th>" in quality
    assert f"<td>155 s</td><td>{DAY + 15} s</td>" in quality  # active first, never above wall
    progress = page[page.index('id="annotator-progress"'):]
    assert "<th>Active time</th><th>Wall time</th>" in progress and f"<td>155 s</td><td>{DAY + 15} s</td>" in progress
    answer = TestClient(api).get("/assignments", user=expert).json()
    mine = next(a for a in answer["items"] if a["id"] == work.pk)
    assert (mine["active_seconds"], mine["wall_seconds"]) == (155.0, float(DAY + 15))


def test_the_queue_names_both_times(client, make_user):
    expert = make_user("queued")
    built = build_campaign([expert], name="queue times")
    work = Assignment.objects.filter(annotator=expert).order_by("order").first()
    with script_clock() as clock:
        assignment_add_time(assignment=work, user=expert, seconds=1)
        clock.now += timedelta(seconds=45)
        assignment_add_time(assignment=work, user=expert, seconds=45)
    client.force_login(expert)
    page = client.get(reverse("campaign_entry", args=[built.campaign.pk])).content.decode()
    assert "active time 45 s" in page and "wall time 45 s" in page
    assert "<th>Active time</th><th>Wall time</th>" in page


def test_the_participants_page_pays_by_active_time_and_shows_wall_time(client, researcher):
    study = link_study(n_items=2, per_item=1, items_per_participant=2)
    participant, _ = participant_join(link=study.campaign.study_link, ids={"prolific_pid": "PAYME"})
    work = Assignment.objects.filter(annotator=participant.user).first()
    with script_clock() as clock:
        assignment_add_time(assignment=work, user=participant.user, seconds=1)
        for _ in range(4):  # two minutes of reading with the page in use
            clock.now += timedelta(seconds=30)
            assignment_add_time(assignment=work, user=participant.user, seconds=30)
        clock.now += timedelta(seconds=1800)  # then away for half an hour, and one more action
        assignment_add_time(assignment=work, user=participant.user, seconds=30)
    (row,) = participant_rows(study.campaign.study_link)
    assert (row["active_seconds"], row["wall_seconds"]) == (120 + 60, 120 + 1800)
    client.force_login(researcher)
    page = client.get(reverse("campaign_participants", args=[study.campaign.pk])).content.decode()
    assert "Active time (pay)" in page and ">Wall time</th>" in page and 'id="pay-by"' in page
    assert "<td>180 s</td><td>1920 s</td>" in page
