"""Locks under a launch burst, on PostgreSQL with one connection per thread: joins, top-ups, releases and
codes of one link at once keep the cap and the overlap exact and never deadlock; verdict saves and item
finishes never wait on the campaign row."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.db.models import Count, Q
from django.utils import timezone

from accounts.models import Role, User
from annotator.models import Assignment, Campaign
from annotator.selectors.spans import item_errors
from annotator.services.campaigns import campaign_open
from annotator.services.judgments import judgment_set
from quality.models import PlantedOutput
from quality.services import CheckSettings, planted_hand_out
from studies.models import Participant
from studies.participants import LinkClosed, LinkSettings, participant_finish, participant_join
from studies.pool import participant_top_up
from studies.setup import CampaignSpec, campaign_create
from tests.annotator.study_links import finish_item, link_study
from tests.studies.box_study import box_scores

pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.skipif("connection.vendor != 'postgresql'", reason="row locks are PostgreSQL's")]


def _together(jobs: list[Callable[[], object]]) -> list[str]:
    """Run the jobs in threads released at once; each result is 'ok', a LinkClosed reason or the error's repr."""
    barrier = threading.Barrier(len(jobs))
    outcomes: list[str] = [""] * len(jobs)

    def run(n: int) -> None:
        try:
            barrier.wait()
            jobs[n]()
            outcomes[n] = "ok"
        except LinkClosed as exc:
            outcomes[n] = exc.reason
        except Exception as exc:  # noqa: BLE001 - the test reports any error, a deadlock above all
            outcomes[n] = repr(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(n,)) for n in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return outcomes


def _ids(pid: str) -> dict[str, str]:
    return {"prolific_pid": pid, "session_id": f"s-{pid}"}


def test_joins_top_ups_releases_and_codes_at_once_hold_cap_and_overlap_without_deadlock():
    study = link_study(n_items=12, per_item=2, items_per_participant=3, cap=9, release_after_minutes=5,
                       time_limit_minutes=30)
    link = study.campaign.study_link
    then = timezone.now() - timedelta(hours=1)
    # Four early participants: two went idle with untouched work, two ran out of time with one item finished.
    early = [participant_join(link=link, ids=_ids(f"E{n}"), now=then)[0] for n in range(4)]
    for p in early[2:]:
        finish_item(Assignment.objects.filter(annotator=p.user).order_by("order").first())
    Participant.objects.filter(pk__in=[p.pk for p in early]).update(last_seen_at=then)
    jobs: list[Callable[[], object]] = [lambda n=n: participant_join(link=link, ids=_ids(f"N{n}")) for n in range(12)]
    jobs += [lambda p=p: participant_top_up(participant=Participant.objects.get(pk=p.pk)) for p in early[:2]]
    jobs += [lambda p=p: participant_finish(participant=Participant.objects.get(pk=p.pk)) for p in early[2:]]
    jobs += [lambda: participant_join(link=link, ids=_ids("N0")) for _ in range(3)]  # double clicks
    outcomes = _together(jobs)
    assert all(o in ("ok", "full") for o in outcomes), outcomes
    # The cap holds, and N0's four clicks make one participant when one of them got a place (the threads start
    # together, so whether N0 beat the others to the last places is chance; a second N0 never is).
    n0_in = any(outcomes[n] == "ok" for n in (0, len(jobs) - 3, len(jobs) - 2, len(jobs) - 1))
    assert Participant.objects.count() <= 9
    assert Participant.objects.filter(prolific_pid="N0").count() == (1 if n0_in else 0)
    counted = (Assignment.objects.filter(campaign=study.campaign, is_training=False)
               .filter(Q(status=Assignment.Status.DONE) | Q(handout__released_at__isnull=True))
               .values("item_id").annotate(n=Count("pk")))
    assert max(row["n"] for row in counted) <= 2
    held = (Assignment.objects.filter(campaign=study.campaign, is_training=False, handout__released_at__isnull=True)
            .values("annotator_id").annotate(n=Count("pk")))
    assert max(row["n"] for row in held) <= 3


def test_verdict_saves_and_item_finishes_do_not_wait_on_the_campaign_row():
    study = link_study(n_items=2, per_item=1, items_per_participant=2)
    participant, _ = participant_join(link=study.campaign.study_link, ids=_ids("P1"))
    first, second = Assignment.objects.filter(annotator=participant.user).order_by("order")
    holding, release = threading.Event(), threading.Event()

    def hold_campaign_row() -> None:
        try:
            with transaction.atomic():
                # as an update of the campaign takes it (new rows may still reference the campaign)
                Campaign.objects.select_for_update(no_key=True).get(pk=study.campaign.pk)
                holding.set()
                release.wait(30)
        finally:
            connection.close()

    holder = threading.Thread(target=hold_campaign_row)
    holder.start()
    holding.wait(10)
    try:
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '2s'")
        row = item_errors(first)[0][0]
        judgment_set(assignment=first, span=row.span, user=participant.user,
                     changes={"span_verdict": "error", "explanation_verdict": "correct"})
        finish_item(first)
        finish_item(second)
        assert participant_finish(participant=participant).outcome == "pass"
    finally:
        release.set()
        holder.join()
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = 0")


def test_joins_at_once_hand_each_planted_copy_to_one_participant_and_keep_queues_whole():
    """Planted copies and control items are furnished after the claim, outside the link's lock: joins at once
    still give every waiting copy to one participant only, and every queue is numbered 1..n without gaps."""
    boxes = box_scores(13, "burst-planted")
    campaign = campaign_create(CampaignSpec(
        name="burst planted", dataset=boxes.data, runs=boxes.runs, aspects=["accuracy"], annotators_per_item=3,
        seed=9, checks=CheckSettings(decoys=0.3, planted=0.3),
        link=LinkSettings(items_per_participant=4, pass_code="PASS-1", fail_code="FAIL-1")))
    campaign_open(campaign=campaign, user=User.objects.create(username="burst-opener", role=Role.RESEARCHER))
    waiting = set(PlantedOutput.objects.filter(campaign=campaign, annotator__isnull=True)
                  .values_list("item_id", flat=True))
    assert waiting, "the pool should hold planted copies that wait for participants"
    outcomes = _together([lambda n=n: participant_join(link=campaign.study_link, ids=_ids(f"Q{n}"))
                          for n in range(8)])
    assert all(o in ("ok", "full") for o in outcomes), outcomes
    copies = Assignment.objects.filter(campaign=campaign, item__derived_from__isnull=False)
    holders = copies.values("item_id").annotate(n=Count("annotator_id", distinct=True))
    assert holders and max(row["n"] for row in holders) == 1
    assert set(copies.values_list("item_id", flat=True)) & waiting  # the waiting copies were handed out
    for participant in Participant.objects.filter(link=campaign.study_link):
        orders = sorted(Assignment.objects.filter(campaign=campaign, annotator=participant.user)
                        .values_list("order", flat=True))
        assert orders == list(range(1, len(orders) + 1))
        planted = PlantedOutput.objects.filter(campaign=campaign, annotator=participant.user)
        assert set(planted.values_list("item_id", flat=True)) == set(
            copies.filter(annotator=participant.user).values_list("item_id", flat=True))


def test_two_hand_outs_at_once_never_give_one_waiting_copy_twice():
    """The second hand-out reads the copies as waiting while the first has claimed them but not committed: its
    claim waits for the first and then finds them taken, so it makes or takes others."""
    boxes = box_scores(13, "copy-race")
    campaign = campaign_create(CampaignSpec(
        name="copy race", dataset=boxes.data, runs=boxes.runs, aspects=["accuracy"], annotators_per_item=3,
        seed=9, checks=CheckSettings(planted=0.3), accept_weak_checks=True,
        link=LinkSettings(items_per_participant=4, pass_code="PASS-1", fail_code="FAIL-1")))
    waiting = PlantedOutput.objects.filter(campaign=campaign, annotator__isnull=True).count()
    assert waiting >= 1
    first, second = (User.objects.create(username=name, role=Role.ANNOTATOR) for name in ("race-a", "race-b"))
    claimed, reading = threading.Event(), threading.Event()
    given: dict[str, list[int]] = {}

    def hand_out(user: User, *, hold: bool) -> None:
        try:
            with transaction.atomic():
                if not hold:
                    claimed.wait(10)
                given[user.username] = planted_hand_out(
                    campaign=campaign, annotator_pk=user.pk, n=1, avoid=set(), pool=campaign.study_link.items,
                    rng=random.Random(1))
                if hold:
                    claimed.set()
                    reading.wait(2)  # the other hand-out reads and blocks on the claimed row meanwhile
        finally:
            connection.close()

    threads = [threading.Thread(target=hand_out, args=(first,), kwargs={"hold": True}),
               threading.Thread(target=hand_out, args=(second,), kwargs={"hold": False})]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len(given["race-a"]) == len(given["race-b"]) == 1
    assert not set(given["race-a"]) & set(given["race-b"])
    for username, items in given.items():
        assert PlantedOutput.objects.get(item_id=items[0]).annotator.username == username
