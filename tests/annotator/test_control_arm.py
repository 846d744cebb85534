"""The control arm on the annotation side: the crossed draw, the marking phase that leaks nothing, the reveal."""

from __future__ import annotations

import json
from collections import Counter
from datetime import timedelta

import pytest
from django.test import Client
from ninja.testing import TestClient

from accounts.access import AccessError
from annotator.engine.crossing import control_arm_draw, unprimed_count
from annotator.engine.phases import Phase
from annotator.models import Assignment, MarkingTime, UnprimedMark
from annotator.services.added_spans import AddedSpanError, added_span_create, added_span_delete, added_span_update
from annotator.services.assignments import AssignmentError, assignment_finish
from annotator.services.control_arm import assignment_reveal
from annotator.services.undo import action_undo
from config.api import api
from tests.control_arm_study import build_study, script_clock, spend, word

pytestmark = pytest.mark.django_db


# ---- the draw ------------------------------------------------------------------------------------------------


def _round_robin(n_outputs: int, annotators: list[int], per_output: int) -> dict[int, list[int]]:
    return {o: [annotators[(o * per_output + k) % len(annotators)] for k in range(per_output)]
            for o in range(n_outputs)}


@pytest.mark.parametrize(("per_output", "share"), [(2, 0.5), (3, 0.4), (4, 1.0)])
def test_crossing_balances_arms_per_annotator_within_one_output(per_output, share):
    outputs = _round_robin(20, [1, 2, 3, 4, 5], per_output)
    pairs = control_arm_draw(outputs, {o: [7] for o in outputs}, share=share, seed=11)
    arm = {o for o, _ in pairs}
    assert len(arm) == round(share * 20)
    for output in arm:
        unprimed = {a for o, a in pairs if o == output}
        # half of the output's annotators (at least one) see it unprimed, the others primed: crossed
        assert len(unprimed) == unprimed_count(per_output) == max(1, per_output // 2)
        assert set(outputs[output]) - unprimed
    load = Counter(a for _, a in pairs)
    assert max(load.values()) - min(load.values()) <= 1


def test_crossing_balances_over_evaluators():
    outputs = {o: [1, 2] for o in range(10)}
    evaluators = {o: ([7] if o < 6 else [8]) for o in outputs}
    arm = {o for o, _ in control_arm_draw(outputs, evaluators, share=0.5, seed=3)}
    assert len([o for o in arm if o < 6]) == 3 and len([o for o in arm if o >= 6]) == 2


def test_crossing_is_seeded_and_alone_outputs_are_balanced_per_annotator():
    outputs = {o: [1 + o % 2] for o in range(12)}  # one annotator per output: nothing to cross
    first = control_arm_draw(outputs, {}, share=0.5, seed=9)
    assert first == control_arm_draw(outputs, {}, share=0.5, seed=9)
    assert Counter(a for _, a in first) == {1: 3, 2: 3}
    assert control_arm_draw(outputs, {}, share=0.0, seed=9) == set()
    with pytest.raises(ValueError, match="control_arm"):
        control_arm_draw(outputs, {}, share=1.5, seed=9)


def test_campaign_create_starts_arm_assignments_in_marking(make_user):
    study = build_study([make_user("ann1"), make_user("ann2")])
    rows = list(Assignment.objects.filter(campaign=study.campaign))
    assert study.campaign.control_arm == 1.0
    for it in study.items:
        mine = [a for a in rows if a.item_id == it.pk]
        assert sorted(a.in_control_arm for a in mine) == [False, True]
    assert {a.phase for a in rows if a.in_control_arm} == {Phase.MARKING}
    assert {a.phase for a in rows if not a.in_control_arm} == {Phase.JUDGING}


def test_campaign_api_refuses_a_bad_share_naming_the_field(researcher, make_user):
    study = build_study([make_user("ann1"), make_user("ann2")], control_arm=0.0)
    client = TestClient(api)
    body = {"name": "bad share", "dataset_id": study.campaign.dataset_id,
            "run_ids": list(study.campaign.runs.values_list("pk", flat=True)), "annotators": ["ann1", "ann2"],
            "annotators_per_item": 2}
    for bad in (1.5, -0.1, "lots"):
        answer = client.post("/campaigns", json={**body, "control_arm": bad}, user=researcher)
        assert answer.status_code == 422
        assert "control_arm" in json.dumps(answer.json())
    answer = client.post("/campaigns", json={**body, "control_arm": 0.2}, user=researcher)
    assert answer.status_code == 201
    created = Assignment.objects.filter(campaign_id=answer.json()["id"])
    assert created.filter(in_control_arm=True).count() == 1  # round(0.2 * 3) outputs, one annotator each


# ---- marking leaks nothing ------------------------------------------------------------------------------------


def _marking(study, item_index: int) -> Assignment:
    return Assignment.objects.select_related("campaign", "item").get(
        campaign=study.campaign, item=study.items[item_index], in_control_arm=True)


def test_marking_leaks_no_machine_span_in_html_or_json(make_user):
    study = build_study([make_user("ann1"), make_user("ann2")])
    a = _marking(study, 1)  # output 2: two placed spans and one that is not in the text
    secrets = ["serves French food", "reason 1", "reason 2", "reason 3", "Evaluator A", "alpha"]
    browser = Client()
    browser.force_login(a.annotator)
    html = browser.get(f"/work/{a.pk}/").content.decode()
    for secret in secrets:
        assert secret not in html
    assert "Done marking" in html
    assert "Machine errors" not in html and "have both verdicts" not in html and "error-card" not in html
    assert 'class="seg hl' not in html and "data-span=" not in html
    for span in study.spans[a.item_id]:
        # saving a verdict on a machine span answers as if it did not exist
        assert browser.post(f"/work/{a.pk}/errors/{span.pk}/", {"field": "span_verdict", "value": "error"}
                            ).status_code == 404

    client = TestClient(api)
    answer = client.get(f"/assignments/{a.pk}", user=a.annotator)
    assert answer.status_code == 200
    body = answer.json()
    assert body["phase"] == "marking"
    assert body["errors"] == [] and body["n_total"] is None and body["n_complete"] is None
    text = json.dumps(body)
    for secret in secrets:
        assert secret not in text
    span = study.spans[a.item_id][0]
    refused = client.post(f"/assignments/{a.pk}/judgments", json={"span_id": span.pk, "span_verdict": "error"},
                          user=a.annotator)
    assert refused.status_code == 404
    # and once marking has ended, the same endpoints show the spans
    assert client.post(f"/assignments/{a.pk}/reveal", user=a.annotator).status_code == 200
    body = client.get(f"/assignments/{a.pk}", user=a.annotator).json()
    assert body["phase"] == "judging" and body["n_total"] == 3 and len(body["errors"]) == 3


# ---- the reveal -----------------------------------------------------------------------------------------------


def test_reveal_contract_404_outside_the_arm_409_once_ended(make_user):
    study = build_study([make_user("ann1"), make_user("ann2")])
    a = _marking(study, 0)
    primed = Assignment.objects.get(campaign=study.campaign, item=study.items[0], in_control_arm=False)
    client = TestClient(api)
    assert client.post(f"/assignments/{primed.pk}/reveal", user=primed.annotator).status_code == 404
    assert client.post(f"/assignments/{a.pk}/reveal", user=a.annotator).status_code == 200
    second = client.post(f"/assignments/{a.pk}/reveal", user=a.annotator)
    assert second.status_code == 409 and "already ended" in second.json()["detail"]
    # someone else's assignment is not even found
    assert client.post(f"/assignments/{a.pk}/reveal", user=primed.annotator).status_code == 404


def test_finish_is_refused_while_marking(make_user):
    study = build_study([make_user("ann1"), make_user("ann2")])
    a = _marking(study, 2)
    with pytest.raises(AssignmentError, match="Done marking"):
        assignment_finish(assignment=a, user=a.annotator)


def test_marks_are_fixed_after_the_reveal_and_later_additions_are_not_unprimed(make_user):
    study = build_study([make_user("ann1"), make_user("ann2")])
    a = _marking(study, 0)
    user = a.annotator
    kept = added_span_create(assignment=a, user=user, start=word(1)[0], end=word(1)[1])
    dropped = added_span_create(assignment=a, user=user, start=word(2)[0], end=word(2)[1])
    added_span_delete(span=dropped, assignment=a, user=user)  # while marking, marks may still change
    with script_clock() as clock:
        spend(clock, a, user, 42)  # the page's heartbeat: 42 s of active time
        a.refresh_from_db()
        clock.now += timedelta(seconds=3)
        assignment_reveal(assignment=a, user=user, seconds=3)  # the reveal is a signal too: 3 s more
    assert a.phase == Phase.JUDGING and a.revealed_at is not None
    assert list(UnprimedMark.objects.filter(assignment=a).values_list("span_id", flat=True)) == [kept.pk]
    assert MarkingTime.objects.get(assignment=a).seconds == 45
    kept.refresh_from_db()
    with pytest.raises(AddedSpanError, match="before the machine's errors were shown"):
        added_span_update(span=kept, assignment=a, user=user, category="other")
    with pytest.raises(AddedSpanError):
        added_span_delete(span=kept, assignment=a, user=user)
    later = added_span_create(assignment=a, user=user, start=word(4)[0], end=word(4)[1])
    assert not UnprimedMark.objects.filter(span=later).exists()
    added_span_update(span=later, assignment=a, user=user, severity=2)  # a primed addition stays editable


def test_undo_never_crosses_the_reveal(make_user):
    study = build_study([make_user("ann1"), make_user("ann2")])
    a = _marking(study, 0)
    user = a.annotator
    mark = added_span_create(assignment=a, user=user, start=0, end=4)
    second = added_span_create(assignment=a, user=user, start=5, end=9)
    assert action_undo(assignment=a, user=user) is not None  # undo works while marking
    assert not type(second).objects.filter(pk=second.pk).exists()
    assignment_reveal(assignment=a, user=user)
    a.refresh_from_db()
    assert action_undo(assignment=a, user=user) is None  # nothing after the reveal: the marks stay
    assert UnprimedMark.objects.filter(span=mark).exists()
    later = added_span_create(assignment=a, user=user, start=10, end=14)
    assert action_undo(assignment=a, user=user) is not None  # the addition after the reveal is undone
    assert not type(later).objects.filter(pk=later.pk).exists()
    assert action_undo(assignment=a, user=user) is None


def test_reveal_is_only_for_the_assignee_while_open(make_user):
    study = build_study([make_user("ann1"), make_user("ann2")])
    a = _marking(study, 0)
    other = [u for u in study.annotators if u.pk != a.annotator_id][0]
    with pytest.raises(AccessError):
        assignment_reveal(assignment=a, user=other)
    a.refresh_from_db()
    assert a.phase == Phase.MARKING


def test_after_the_reveal_the_page_shows_own_marks_in_their_style_and_locked(make_user):
    study = build_study([make_user("ann1"), make_user("ann2")])
    a = _marking(study, 0)
    added_span_create(assignment=a, user=a.annotator, start=word(4)[0], end=word(4)[1])
    browser = Client()
    browser.force_login(a.annotator)
    answer = browser.post(f"/work/{a.pk}/reveal/", {"seconds": "5"}, HTTP_HX_REQUEST="true")
    assert answer.status_code == 200 and answer.headers["HX-Refresh"] == "true"
    html = browser.get(f"/work/{a.pk}/").content.decode()
    assert "Machine errors" in html and "Done marking" not in html
    assert "hl-unprimed" in html and "marked before the reveal" in html
    mark = UnprimedMark.objects.get(assignment=a).span
    assert f"/added/{mark.pk}/delete/" not in html  # no delete or edit for a fixed mark
    assert browser.post(f"/work/{a.pk}/reveal/").status_code == 409


def test_campaign_form_sets_the_control_arm_and_refuses_a_bad_share(client, researcher, make_user):
    ann1, ann2 = make_user("f1"), make_user("f2")
    study = build_study([ann1, ann2], name="form seed", control_arm=0.0)
    client.force_login(researcher)
    form = {"name": "With an arm", "dataset": study.campaign.dataset_id,
            "runs": [str(pk) for pk in study.campaign.runs.values_list("pk", flat=True)], "aspects": ["accuracy"],
            "annotators": [ann1.pk, ann2.pk], "annotators_per_item": 2, "seed": 1, "guidelines": "x",
            "control_arm": "0.67"}
    assert client.post("/campaigns/new/", form).status_code == 302
    from annotator.models import Campaign

    made = Campaign.objects.get(name="With an arm")
    assert made.control_arm == 0.67
    assert made.assignments.filter(in_control_arm=True, phase="marking").count() == 2  # round(0.67 * 3)
    bad = client.post("/campaigns/new/", {**form, "name": "Too much", "control_arm": "1.5"})
    assert bad.status_code == 200 and not Campaign.objects.filter(name="Too much").exists()
    assert "less than or equal to 1" in bad.content.decode()
