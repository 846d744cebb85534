"""Participants from a study link: who gets which items, release of abandoned work, caps, codes and flags."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import Count
from django.utils import timezone

from accounts.models import User
from analytics.selectors.base import Scope, judgments_in_scope
from annotator.engine.phases import Phase
from annotator.models import Assignment, SpanJudgment
from annotator.selectors.spans import item_errors
from annotator.services.judgments import judgment_set
from errors import UserError
from studies.models import Handout, Participant, StudyLink
from studies.participants import (
    LinkClosed,
    NotFinished,
    ParticipationError,
    completion_redirect,
    link_closed_reason,
    link_revoke,
    participant_find,
    participant_finish,
    participant_flag_set,
    participant_join,
    participant_touch,
    platform_ids,
)
from studies.pool import link_has_room, participant_top_up
from studies.screening import participant_flag_reasons
from tests import factories as f
from tests.annotator.study_links import FAIL, PASS, finish_all, finish_item, link_study

pytestmark = pytest.mark.django_db


def _join(study, pid: str | None = None, now=None) -> Participant:
    ids = {"prolific_pid": pid, "study_id": "S1", "session_id": f"sess-{pid}"} if pid else {}
    participant, _ = participant_join(link=study.campaign.study_link, ids=ids, now=now)
    return participant


def test_link_token_is_128_random_bits_in_hex():
    first = link_study(name="one").campaign.study_link
    second = link_study(name="two").campaign.study_link
    assert len(first.token) == 32 and int(first.token, 16) >= 0
    assert first.token != second.token


def test_participants_get_the_neediest_items_until_every_item_has_its_overlap():
    # 4 items, overlap 2, 2 items each: 4 participants fill all 8 places, the 5th finds the study full.
    study = link_study(n_items=4, per_item=2, items_per_participant=2)
    held = [study.numbers(_join(study, f"P{n}")) for n in range(1, 5)]
    # Fewest judgments first, ties in item order: 1,2 then 3,4 (all at 0), then 1,2 and 3,4 again (all at 1).
    assert held == [{1, 2}, {3, 4}, {1, 2}, {3, 4}]
    users = User.objects.count()
    with pytest.raises(LinkClosed) as closed:
        _join(study, "P5")
    assert closed.value.reason == "full"
    assert User.objects.count() == users  # nobody was made for the full study
    assert not Participant.objects.filter(prolific_pid="P5").exists()


def test_a_participant_is_a_passwordless_annotator_with_a_random_handle_and_the_platform_ids():
    study = link_study()
    pid = "5f8e0c1d2b3a4f5e6d7c8b9a"
    p = _join(study, pid)
    assert p.user.role == "annotator" and not p.user.has_usable_password()
    assert p.user.username.startswith("p-") and "5f8e" not in p.user.username
    assert (p.prolific_pid, p.study_id, p.session_id) == (pid, "S1", f"sess-{pid}")
    assert p.user in study.campaign.annotators.all()


def test_the_same_platform_id_resumes_and_never_gets_a_second_account_or_set_of_items():
    study = link_study()
    first = _join(study, "PID-A")
    again, created = participant_join(link=study.campaign.study_link, ids={"prolific_pid": "PID-A"})
    assert not created and again.pk == first.pk
    assert Assignment.objects.filter(annotator=first.user).count() == 2
    assert Participant.objects.count() == 1
    mturk, _ = participant_join(link=study.campaign.study_link,
                                ids={"worker_id": "A1WORKER", "mturk_assignment_id": "3AS", "hit_id": "3HIT"})
    assert participant_find(link=study.campaign.study_link, ids={"worker_id": "A1WORKER"}).pk == mturk.pk


def test_platform_ids_are_read_from_their_query_names_and_a_bad_one_is_named():
    assert platform_ids({"PROLIFIC_PID": "abc", "STUDY_ID": "s", "SESSION_ID": "x", "other": "y"}) == {
        "prolific_pid": "abc", "study_id": "s", "session_id": "x"}
    assert platform_ids({"workerId": "W", "assignmentId": "A", "hitId": "H"}) == {
        "worker_id": "W", "mturk_assignment_id": "A", "hit_id": "H"}
    with pytest.raises(ParticipationError, match="^PROLIFIC_PID:"):
        platform_ids({"PROLIFIC_PID": "<script>"})
    with pytest.raises(ParticipationError, match="^hitId:"):
        platform_ids({"hitId": "x" * 65})


def test_an_mturk_preview_cannot_start():
    study = link_study()
    with pytest.raises(ParticipationError, match="accept the HIT"):
        participant_join(link=study.campaign.study_link,
                         ids={"worker_id": "W1", "mturk_assignment_id": "ASSIGNMENT_ID_NOT_AVAILABLE"})
    assert not Participant.objects.exists()


def test_cap_expiry_and_revocation_close_the_link_to_newcomers_only():
    study = link_study(n_items=6, per_item=1, items_per_participant=1, cap=2)
    link = study.campaign.study_link
    now = timezone.now()
    _join(study, "A")
    assert link_closed_reason(link, now) is None
    _join(study, "B")
    assert link_closed_reason(link, now) == "full"
    with pytest.raises(LinkClosed, match="full"):
        _join(study, "C")
    link.cap = None
    link.expires = now + timedelta(hours=1)
    link.save()
    assert link_closed_reason(link, now) is None
    assert link_closed_reason(link, now + timedelta(hours=1)) == "expired"
    with pytest.raises(LinkClosed, match="expired"):
        _join(study, "C", now=now + timedelta(hours=2))
    link_revoke(link=link)
    assert link_closed_reason(link, now) == "revoked" and link.revoked_at is not None
    with pytest.raises(LinkClosed, match="revoked"):
        _join(study, "C")
    # Someone who joined before comes back with their id all the same.
    assert participant_join(link=link, ids={"prolific_pid": "A"})[1] is False


def test_an_abandoned_assignment_goes_back_to_the_pool_and_its_work_is_kept():
    # Overlap 1, 2 items each. P1 takes items 1 and 2 at t0, judges one error of item 1, then goes quiet.
    study = link_study(n_items=4, per_item=1, items_per_participant=2)
    t0 = timezone.now() - timedelta(hours=2)
    p1 = _join(study, "P1", now=t0)
    assert study.numbers(p1) == {1, 2}
    worked = Assignment.objects.select_related("campaign", "item").get(annotator=p1.user, item=study.items[0])
    row = item_errors(worked)[0][0]
    judgment_set(assignment=worked, span=row.span, user=p1.user, changes={"span_verdict": "error"})

    # 29 minutes idle: nothing goes back; P2 gets items 3 and 4.
    p2 = _join(study, "P2", now=t0 + timedelta(minutes=29))
    assert study.numbers(p2) == {3, 4}

    # 31 minutes after P1's last request: item 2 (untouched) is gone from P1, item 1 (worked on) stays with P1
    # but released, so neither counts: P3 gets both.
    p3 = _join(study, "P3", now=t0 + timedelta(minutes=31))
    assert study.numbers(p3) == {1, 2}
    assert study.numbers(p1) == {1}
    assert Handout.objects.get(assignment=worked).released_at == t0 + timedelta(minutes=31)
    assert SpanJudgment.objects.get(assignment=worked).span_verdict == "error"

    # Finished after all, P1's item 1 counts again: the pool is then empty for a newcomer.
    finish_item(worked)
    with pytest.raises(LinkClosed, match="full"):
        _join(study, "P4", now=t0 + timedelta(minutes=40))


def test_a_participant_who_is_still_there_keeps_their_items():
    study = link_study(n_items=2, per_item=1, items_per_participant=2)
    t0 = timezone.now() - timedelta(hours=1)
    p1 = _join(study, "P1", now=t0)
    participant_touch(participant_pk=p1.pk, now=t0 + timedelta(minutes=20))
    with pytest.raises(LinkClosed, match="full"):
        _join(study, "P2", now=t0 + timedelta(minutes=45))  # 25 minutes after P1's last request
    assert study.numbers(p1) == {1, 2}


def test_training_items_come_first_and_stay_out_of_the_pool():
    study = link_study(n_items=3, per_item=1, items_per_participant=2)
    registered = f.user("reg")
    f.assignment(study.campaign, registered, study.items[2], 1, is_training=True, phase=Phase.TRAINING.value)
    p = _join(study, "T1")
    rows = list(Assignment.objects.filter(annotator=p.user).order_by("order"))
    assert [(r.order, r.item_id, r.is_training, r.phase) for r in rows[:1]] == [
        (1, study.items[2].pk, True, "training")]
    assert study.numbers(p) == {1, 2}
    assert all(not r.is_training and r.phase == "judging" for r in rows[1:])


def test_no_code_before_the_items_are_done_then_the_pass_code_every_time():
    study = link_study()
    p = _join(study, "P1")
    with pytest.raises(NotFinished):
        participant_finish(participant=p)
    finish_item(Assignment.objects.filter(annotator=p.user).first())
    with pytest.raises(NotFinished):
        participant_finish(participant=p)
    finish_all(p)
    done = participant_finish(participant=p)
    assert (done.outcome, done.code_given) == ("pass", PASS) and done.finished_at is not None
    assert completion_redirect(done.link, done.code_given) == \
        f"https://app.prolific.com/submissions/complete?cc={PASS}"
    # A flag set after the code was given changes nothing: the participant has it already.
    participant_flag_set(participant=done, flagged=True)
    assert participant_finish(participant=done).code_given == PASS


def test_a_flagged_participant_gets_the_fail_code():
    study = link_study()
    p = _join(study, "P1")
    participant_flag_set(participant=p, flagged=True, note="answered at random")
    assert participant_flag_reasons(study.campaign, p.user) == ["flagged by a researcher: answered at random"]
    finish_all(p)
    done = participant_finish(participant=p)
    assert (done.outcome, done.code_given) == ("fail", FAIL)
    # Unflagged, another participant passes: a campaign without checks gives the pass code.
    other = _join(study, "P2")
    participant_flag_set(participant=other, flagged=True)
    participant_flag_set(participant=other, flagged=False)
    finish_all(other)
    assert participant_finish(participant=other).code_given == PASS


def test_out_of_time_ends_the_study_and_returns_unfinished_items():
    study = link_study(n_items=4, per_item=1, items_per_participant=2, time_limit_minutes=20)
    t0 = timezone.now() - timedelta(minutes=30)
    p = _join(study, "P1", now=t0)
    assert p.deadline == t0 + timedelta(minutes=20)
    first, second = Assignment.objects.filter(annotator=p.user).order_by("order")
    finish_item(first)
    done = participant_finish(participant=p)  # 30 minutes later: past the deadline with one item done
    assert done.code_given == PASS
    assert not Assignment.objects.filter(pk=second.pk).exists()  # untouched: back to the pool
    assert participant_top_up(participant=done) == 0  # no new items after the time is up


def test_out_of_time_without_a_finished_item_is_a_flag():
    study = link_study(n_items=2, per_item=1, items_per_participant=1, time_limit_minutes=5)
    p = _join(study, "P1", now=timezone.now() - timedelta(minutes=10))
    assert participant_flag_reasons(study.campaign, p.user) == ["the time limit passed before any item was finished"]
    assert participant_finish(participant=p).code_given == FAIL


@pytest.mark.parametrize(("field", "value", "message"), [
    ("completion_url", "http://app.prolific.com/?cc={code}", "completion_url: must be an https"),
    ("completion_url", "javascript:alert(1)", "completion_url: must be an https"),
    ("pass_code", "", "pass_code:"),
    ("pass_code", "has space", "pass_code:"),
    ("fail_code", "x" * 65, "fail_code:"),
    ("items_per_participant", 0, "items_per_participant:"),
    ("release_after_minutes", 0, "release_after_minutes:"),
    ("cap", 0, "link.cap:"),
    ("consent", "a\x00b", "consent:"),
])
def test_link_settings_are_refused_by_field(field, value, message):
    with pytest.raises(UserError, match=f"^{message}"):
        link_study(**{field: value})
    assert not StudyLink.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_arrivals_at_once_never_push_an_item_past_its_overlap():
    # 5 items, overlap 2, 3 items each: 10 places, so 3 participants fit (9 places), the 4th only gets 1 item.
    # Eight arrive at the same moment from eight threads (eight database connections).
    study = link_study(n_items=5, per_item=2, items_per_participant=3)
    barrier = threading.Barrier(8)
    outcomes: list[str] = []

    def arrive(n: int) -> None:
        try:
            barrier.wait()
            _join(study, f"T{n}")
            outcomes.append("joined")
        except LinkClosed as exc:
            outcomes.append(exc.reason)
        finally:
            connection.close()

    threads = [threading.Thread(target=arrive, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["full"] * 4 + ["joined"] * 4
    per_item = {item.pk: Assignment.objects.filter(item=item).count() for item in study.items}
    assert sorted(per_item.values()) == [2, 2, 2, 2, 2]
    held = sorted(Assignment.objects.filter(campaign=study.campaign).values("annotator").annotate(
        n=Count("pk")).values_list("n", flat=True))
    assert held == [1, 3, 3, 3]


def test_a_study_whose_participants_all_left_opens_up_again():
    study = link_study(n_items=2, per_item=1, items_per_participant=2)
    t0 = timezone.now() - timedelta(hours=1)
    gone = _join(study, "P1", now=t0)
    link = StudyLink.objects.get(pk=study.campaign.study_link.pk)
    assert not link_has_room(link=link, now=t0 + timedelta(minutes=10))
    assert link_has_room(link=link, now=t0 + timedelta(minutes=31))  # P1's untouched items count as free
    assert study.numbers(gone) == {1, 2}  # asking wrote nothing
    # A newcomer's join releases them and takes them; back after all, P1 finds nothing left to get.
    newcomer = _join(study, "P2", now=t0 + timedelta(minutes=32))
    assert study.numbers(newcomer) == {1, 2} and study.numbers(gone) == set()
    assert participant_top_up(participant=gone, now=t0 + timedelta(minutes=33)) == 0


def test_abandoned_work_is_not_counted_by_the_analytics_until_it_is_finished():
    study = link_study(n_items=2, per_item=1, items_per_participant=1)
    t0 = timezone.now() - timedelta(hours=1)
    p1 = _join(study, "P1", now=t0)
    mine = Assignment.objects.select_related("campaign", "item").get(annotator=p1.user)
    row = item_errors(mine)[0][0]
    judgment_set(assignment=mine, span=row.span, user=p1.user,
                 changes={"span_verdict": "error", "explanation_verdict": "correct"})
    scope = Scope(campaign_id=study.campaign.pk)
    assert judgments_in_scope(scope).count() == 1
    _join(study, "P2", now=t0 + timedelta(minutes=31))  # P1 idle: their item goes back, work kept
    assert Handout.objects.get(assignment=mine).released_at is not None
    assert judgments_in_scope(scope).count() == 0
    finish_item(mine)
    assert judgments_in_scope(scope).count() == 1


@pytest.mark.django_db(transaction=True)
def test_top_ups_at_once_never_push_an_item_past_its_overlap():
    # 5 items, overlap 2: 10 places. Four participants hold one item each; then each may hold three, and all
    # four ask for two more at the same moment: only the 6 free places are handed out.
    study = link_study(n_items=5, per_item=2, items_per_participant=1)
    people = [_join(study, f"T{n}") for n in range(4)]
    StudyLink.objects.filter(pk=study.campaign.study_link.pk).update(items_per_participant=3)
    barrier = threading.Barrier(4)
    given: list[int] = []

    def top_up(participant: Participant) -> None:
        try:
            fresh = Participant.objects.select_related("link").get(pk=participant.pk)
            barrier.wait()
            given.append(participant_top_up(participant=fresh))
        finally:
            connection.close()

    threads = [threading.Thread(target=top_up, args=(p,)) for p in people]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Which arrival gets what depends on who gets the lock first (a late one may find only items it holds).
    assert sum(given) == 6 and max(given) <= 2
    per_item = [Assignment.objects.filter(item=item).count() for item in study.items]
    assert per_item == [2, 2, 2, 2, 2]


def test_a_participant_the_quality_checks_flag_gets_the_fail_code():
    """The rubber-stamp rule (quality.selectors.vigilance) screens a participant out with no researcher's flag:
    six machine spans confirmed as errors 100 ms after focus each, none changed later."""
    study = link_study(n_items=6, per_item=1, items_per_participant=6, name="Stamp study")
    stamper = _join(study, "P1")
    for a in Assignment.objects.filter(annotator=stamper.user).select_related("campaign", "item"):
        rows, _ = item_errors(a)
        for row in rows:
            judgment_set(assignment=a, span=row.span, user=stamper.user, ms=100,
                         changes={"span_verdict": "error", "explanation_verdict": "correct"})
    assert "rubber_stamp" in participant_flag_reasons(study.campaign, stamper.user)
    finish_all(stamper)
    assert participant_finish(participant=stamper).code_given == FAIL
