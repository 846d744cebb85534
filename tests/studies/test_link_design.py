"""Every setting applies to whoever joins a link: decoys, planted copies, the control arm's crossing, training and
control items, for participants arriving and leaving at any time, alone or beside registered annotators."""

from __future__ import annotations

import importlib
from collections import Counter
from datetime import timedelta

import pytest
from django.apps import apps
from django.utils import timezone

from accounts.models import Role, User
from annotator.models import Assignment, Campaign
from annotator.services.campaigns import campaign_open
from quality.models import PlantedOutput
from quality.services import CheckSettings, planted_count
from studies.models import Participant, PoolSlot, SetupReport
from studies.participants import LinkSettings, participant_finish, participant_join, participant_touch
from studies.pool import participant_top_up
from studies.setup import CampaignSpec, campaign_create
from tests import factories as f
from tests.studies.box_study import box_scores, judge_item, queue_of

pytestmark = pytest.mark.django_db

DECOYS = PLANTED = 0.3
PASS, FAIL = "PASS-1", "FAIL-1"


def _study(n: int, *, annotators=(), per_item: int = 2, each: int = 4, arm: float = 0.5, checks=None,
           name: str = "design", **link) -> Campaign:
    boxes = box_scores(n, name)
    campaign = campaign_create(CampaignSpec(
        name=name, dataset=boxes.data, runs=boxes.runs, annotators=list(annotators), aspects=["accuracy"],
        annotators_per_item=per_item, seed=3, control_arm=arm,
        checks=checks or CheckSettings(decoys=DECOYS, planted=PLANTED),
        link=LinkSettings(items_per_participant=each, pass_code=PASS, fail_code=FAIL, **link)))
    if campaign.status == Campaign.Status.DRAFT:
        opener = User.objects.create(username=f"{name}-opener", role=Role.RESEARCHER)
        campaign_open(campaign=campaign, user=opener)
    return campaign


def _join(campaign: Campaign, pid: str, now) -> Participant:
    participant, _ = participant_join(link=campaign.study_link, ids={"prolific_pid": pid, "session_id": f"s{pid}"},
                                      now=now)
    return participant


def _real(campaign: Campaign, user_id: int):
    return Assignment.objects.filter(campaign=campaign, annotator_id=user_id, is_training=False, is_control=False,
                                     item__derived_from__isnull=True)


def test_a_link_only_study_gives_every_participant_the_checks_and_keeps_the_arm_crossed():
    # 14 outputs x 2 judges = 28 places, 4 outputs each. Decoys: 0.3 of 28 machine spans asks for
    # round(0.3 * 28 / 0.7) = 12; planted: round(0.3 * 4 / 0.7) = 2 per participant, 7 participants fill the
    # pool, so 14 copies wait. The arm: round(0.5 * 14) = 7 outputs, one of their two places unprimed.
    campaign = _study(14)
    report = SetupReport.objects.get(campaign=campaign)
    assert (report.decoys_asked, report.decoys_made) == (12, 12)
    assert (report.planted_asked, report.planted_made) == (14, 14)
    # 3 or 4 decoys each flag whoever accepts everything; 2 planted copies cannot flag anyone (0 of 2 is 0.66).
    assert campaign.warnings == ["checks_power: no check can flag a participant who rejects everything"]
    slots = list(PoolSlot.objects.filter(link=campaign.study_link))
    assert len(slots) == 28 and sum(s.unprimed for s in slots) == 7
    assert all(n == 1 for n in Counter(s.item_id for s in slots if s.unprimed).values())

    t0 = timezone.now() - timedelta(hours=2)
    people = {}
    for minute, pid in [(0, "P1"), (0, "P2"), (5, "P3"), (5, "P4"), (10, "P5"), (10, "P6")]:
        people[pid] = _join(campaign, pid, t0 + timedelta(minutes=minute))
    # P3 and P5 finish two outputs and one planted copy each, and leave; the others are still there 40 minutes in.
    for pid in ("P3", "P5"):
        copy = Assignment.objects.get(campaign=campaign, annotator_id=people[pid].user_id,
                                      item=PlantedOutput.objects.filter(annotator_id=people[pid].user_id)[0].item)
        for work in [*_real(campaign, people[pid].user_id).order_by("order")[:2], copy]:
            judge_item(work, stamp=False, ms=3000)
    for pid in ("P1", "P2", "P4", "P6"):
        participant_touch(participant_pk=people[pid].pk, now=t0 + timedelta(minutes=40))
    # 45 minutes in, P7's arrival returns the leavers' unfinished work (places with their arm, planted copies).
    people["P7"] = _join(campaign, "P7", t0 + timedelta(minutes=45))
    people["P8"] = _join(campaign, "P8", t0 + timedelta(minutes=46))
    for pid in ("P3", "P5"):
        assert _real(campaign, people[pid].user_id).count() == 2  # only what they finished stays theirs

    for pid, participant in people.items():
        if pid in ("P3", "P5"):
            continue
        for work in Assignment.objects.filter(campaign=campaign, annotator_id=participant.user_id).order_by("order"):
            judge_item(work, stamp=pid == "P2", ms=100 if pid == "P2" else 3000)

    queues = {pid: queue_of(campaign, p.user_id) for pid, p in people.items()}
    for pid, q in queues.items():
        print(pid, q.line())
    for pid, q in queues.items():
        assert q.decoy_bearing >= 1 and q.planted >= 1
        machine = 2 * q.real
        assert abs(q.decoys - DECOYS * machine / (1 - DECOYS)) <= 1, (pid, q)
        if pid not in ("P3", "P5"):  # the leavers' planted copies went back with their unfinished work
            assert q.planted == planted_count(PLANTED, q.real), (pid, q)
            assert abs(q.marking - 0.25 * q.real) <= 1, (pid, q)
    # Every place ended with one finished judgment, and the arm held: on 7 of the 14 outputs exactly one of the
    # two judges was unprimed, never both, whoever left.
    done = Assignment.objects.filter(campaign=campaign, status=Assignment.Status.DONE, is_training=False,
                                     item__derived_from__isnull=True)
    per_output = Counter(done.values_list("item_id", flat=True))
    assert sorted(per_output.values()) == [2] * 14
    unprimed = Counter(done.filter(in_control_arm=True).values_list("item_id", flat=True))
    assert len(unprimed) == 7 and set(unprimed.values()) == {1}
    # The rubber-stamper gets the fail code, everyone who finished carefully the pass code.
    codes = {pid: participant_finish(participant=p).code_given for pid, p in people.items()
             if pid not in ("P3", "P5")}
    assert codes == {"P1": PASS, "P2": FAIL, "P4": PASS, "P6": PASS, "P7": PASS, "P8": PASS}


def test_released_work_returns_to_the_pool_with_its_arm_and_its_planted_copy():
    # Each participant judges all six outputs, so their planted copies are of their own outputs, as allowed.
    campaign = _study(6, per_item=2, each=6, name="release",
                      checks=CheckSettings(decoys=DECOYS, planted=PLANTED, planted_near_duplicates=True))
    t0 = timezone.now() - timedelta(hours=1)
    gone = _join(campaign, "GONE", t0)
    held = {a.item_id: a.in_control_arm for a in _real(campaign, gone.user_id)}
    copies = set(PlantedOutput.objects.filter(campaign=campaign, annotator_id=gone.user_id)
                 .values_list("item_id", flat=True))
    # 12 places, 3 of them unprimed (a quarter): the leaver held 6 outputs, one or two unprimed.
    assert len(held) == 6 and 1 <= sum(held.values()) <= 2 and len(copies) == planted_count(PLANTED, 6) == 3
    newcomer = _join(campaign, "NEW", t0 + timedelta(minutes=31))
    got = {a.item_id: a.in_control_arm for a in _real(campaign, newcomer.user_id)}
    # The same six outputs, each taken from the slot the leaver held: the unprimed ones unprimed again.
    assert got == held
    assert not PlantedOutput.objects.filter(campaign=campaign, annotator_id=gone.user_id).exists()
    assert PlantedOutput.objects.filter(campaign=campaign, annotator_id=newcomer.user_id).count() == 3


def test_registered_annotators_and_participants_share_one_design():
    # expert1 judges every output; two participant places per output are left (3 judges per output). The arm's
    # unprimed role of an output goes to one of its three judges, participants included.
    expert = f.user("expert1")
    campaign = _study(6, annotators=[expert], per_item=3, each=6, arm=1.0, name="mixed",  # all judge every output
                      checks=CheckSettings(decoys=DECOYS, planted=PLANTED, planted_near_duplicates=True))
    mine = Assignment.objects.filter(campaign=campaign, annotator=expert, item__derived_from__isnull=True)
    planted_expert = PlantedOutput.objects.filter(campaign=campaign, annotator=expert).count()
    assert planted_expert == planted_count(PLANTED, 6)
    people = [_join(campaign, f"M{n}", None) for n in range(2)]
    for p in people:
        q = queue_of(campaign, p.user_id)
        assert q.real == 6 and q.planted == planted_count(PLANTED, 6) and q.decoys >= 1
    # Every output is in the arm (share 1.0) with one unprimed judge of three; the expert does not carry them all.
    unprimed = Counter(Assignment.objects.filter(campaign=campaign, in_control_arm=True).values_list("item_id",
                                                                                                       flat=True))
    assert sorted(unprimed.values()) == [1] * 6
    loads = [mine.filter(in_control_arm=True).count()] + [
        _real(campaign, p.user_id).filter(in_control_arm=True).count() for p in people]
    assert sorted(loads) == [2, 2, 2]


def test_participants_get_training_first_and_every_control_item():
    boxes = box_scores(6, "train")
    training, control = boxes.items[0], boxes.items[1]
    campaign = campaign_create(CampaignSpec(
        name="train", dataset=boxes.data, runs=boxes.runs, annotators=[], aspects=["accuracy"],
        annotators_per_item=1, seed=1, control_item_ids=[control.pk],
        checks=CheckSettings(qualification_items=(training.pk,)),
        link=LinkSettings(items_per_participant=2, pass_code=PASS)))
    first = _join(campaign, "T1", None)
    second = _join(campaign, "T2", None)
    for p in (first, second):
        rows = list(Assignment.objects.filter(campaign=campaign, annotator_id=p.user_id).order_by("order"))
        assert (rows[0].item_id, rows[0].is_training, rows[0].phase) == (training.pk, True, "training")
        assert [r.item_id for r in rows if r.is_control] == [control.pk]
        assert queue_of(campaign, p.user_id).real == 2
    # Neither training nor control items are pool outputs: the four others go two by two.
    pool = {a.item_id for a in Assignment.objects.filter(campaign=campaign, is_training=False, is_control=False)}
    assert pool == {i.pk for i in boxes.items[2:]}


def test_a_participant_who_holds_their_share_gets_nothing_more():
    campaign = _study(4, per_item=1, each=2, arm=0.0, name="share", checks=CheckSettings())
    p = _join(campaign, "S1", None)
    assert participant_top_up(participant=p) == 0
    assert queue_of(campaign, p.user_id).real == 2


def test_a_participant_ends_marking_on_their_control_arm_output_from_the_page(client):
    campaign = _study(4, per_item=1, each=4, arm=1.0, name="marking", checks=CheckSettings())
    url = f"/join/{campaign.study_link.token}/"
    ids = {"PROLIFIC_PID": "M1", "STUDY_ID": "S", "SESSION_ID": "sM1"}
    assert client.get(url, ids).status_code == 200 and client.post(url, ids).status_code == 302
    marking = Assignment.objects.filter(campaign=campaign, phase="marking").first()
    assert marking is not None and marking.annotator.participant.prolific_pid == "M1"
    answer = client.post(f"/work/{marking.pk}/reveal/", HTTP_HX_REQUEST="true")
    assert answer.status_code < 400
    marking.refresh_from_db()
    assert marking.phase == "judging" and marking.revealed_at is not None


def test_a_link_made_before_places_gets_them_with_its_participants_in_them():
    migration = importlib.import_module("studies.migrations.0004_existing_links_get_their_places")
    campaign = _study(4, annotators=[f.user("old-expert")], per_item=3, each=2, arm=0.0, name="old",
                      checks=CheckSettings())
    p1 = _join(campaign, "O1", None)
    link = campaign.study_link
    held = set(Assignment.objects.filter(annotator_id=p1.user_id).values_list("pk", flat=True))
    # As a link of before: no places, no control items recorded.
    PoolSlot.objects.filter(link=link).delete()
    migration._places(apps, None)
    slots = list(PoolSlot.objects.filter(link=link))
    # 4 outputs, 3 judges each, the expert one of them: 2 places each, the participant in two of them.
    assert len(slots) == 8 and not any(s.unprimed for s in slots)
    assert {s.assignment_id for s in slots if s.assignment_id} == held
    assert Counter(s.item_id for s in slots) == {i: 2 for i in link.items}
    p2 = _join(campaign, "O2", None)
    assert queue_of(campaign, p2.user_id).real == 2
