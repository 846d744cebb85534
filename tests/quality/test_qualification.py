"""The qualification step: training items first, the key after each, the pass gate and re-opening training."""

from __future__ import annotations

from annotator.models import Assignment
from annotator.selectors.spans import item_errors, span_handle
from annotator.services.assignments import assignment_finish
from annotator.services.campaigns import ControlKey, campaign_control_set
from annotator.services.judgments import judgment_set
from quality.models import Qualification
from quality.services import CheckSettings, qualification_reopen
from tests.quality.conftest import Api, build_study


def _trained(make_user, name: str):
    judge = make_user(f"{name}-judge")
    study = build_study([judge], name=name, n_items=4)
    training = study.items[:2]
    checked = build_study([judge], name=f"{name} real", data=study.campaign.dataset, runs=study.runs,
                          items=study.items, checks=CheckSettings(qualification_items=(training[0].pk, training[1].pk),
                                                                  qualification_pass=0.75))
    keys = []
    for item in training:
        keys += [ControlKey(study.wrong[item.pk].pk, "error", "correct", note="The data says otherwise."),
                 ControlKey(study.false_alarm[item.pk].pk, "not_error", "incorrect", note="Assists are in the data.")]
    campaign_control_set(campaign=checked.campaign, keys=keys)
    return judge, checked, training


def _finish_training(study, judge, right: int) -> None:
    """Judge the 4 keyed spans of the two training items, `right` of them as the key says."""
    given = 0
    for work in Assignment.objects.filter(campaign=study.campaign, annotator=judge, is_training=True).order_by("order"):
        for row in item_errors(work)[0]:
            truth = "error" if row.span.pk == study.wrong[work.item_id].pk else "not_error"
            verdict = truth if given < right else ("not_error" if truth == "error" else "error")
            judgment_set(assignment=work, span=row.span, user=judge,
                         changes={"span_verdict": verdict, "explanation_verdict": "correct"})
            given += 1
        assignment_finish(assignment=work, user=judge)


def test_training_comes_first_and_real_items_open_only_after_the_pass_mark(make_user, client):
    judge, study, training = _trained(make_user, "qual")
    queue = list(Assignment.objects.filter(campaign=study.campaign, annotator=judge).order_by("order"))
    assert [a.item_id for a in queue[:2]] == [t.pk for t in training] and all(a.is_training for a in queue[:2])
    assert {a.item_id for a in queue[2:]} == {i.pk for i in study.items[2:]}  # training items are not real work
    real = queue[2]
    handle = span_handle(real.pk, study.wrong[real.item_id].pk)
    api = Api(judge)
    refused = api("patch", f"/assignments/{real.pk}/judgments/{handle}", {"span_verdict": "error"})
    assert refused.status_code == 409 and "training" in refused.json()["detail"].lower()
    client.force_login(judge)
    page = client.get(f"/work/{real.pk}/")
    assert page.status_code == 403 and "Finish the training items first" in page.content.decode()

    _finish_training(study, judge, right=3)  # 3 of 4 = 0.75: passes a 0.75 mark
    row = Qualification.objects.get(campaign=study.campaign, annotator=judge)
    assert (row.score, row.passed) == (0.75, True)
    assert api("patch", f"/assignments/{real.pk}/judgments/{handle}", {"span_verdict": "error"}).status_code == 200
    # a finished training item shows the key beside the annotator's verdicts, with the key's note
    html = client.get(f"/work/{queue[0].pk}/").content.decode()
    assert "Answer key of this training item" in html and "Assists are in the data." in html
    assert api("get", f"/campaigns/{study.campaign.pk}/vigilance").status_code == 403


def test_below_the_pass_mark_the_expert_is_told_and_the_researcher_can_reopen(make_user, client, researcher):
    judge, study, _ = _trained(make_user, "fail")
    _finish_training(study, judge, right=2)  # 2 of 4 = 0.5 < 0.75
    row = Qualification.objects.get(campaign=study.campaign, annotator=judge)
    assert (row.score, row.passed) == (0.5, False)
    real = Assignment.objects.filter(campaign=study.campaign, annotator=judge, is_training=False).first()
    client.force_login(judge)
    page = client.get(f"/work/{real.pk}/").content.decode()
    assert "is below this campaign" in page and "pass mark" in page and "50%" in page
    vigilance = {r["annotator"]: r for r in Api(researcher)("get", f"/campaigns/{study.campaign.pk}/vigilance").json()}
    assert vigilance[judge.username]["qualification"] == {"passed": False, "score": 0.5}
    assert "qualification_failed" in vigilance[judge.username]["reasons"]
    reopen = f"/campaigns/{study.campaign.pk}/qualification/{judge.username}/reopen"
    assert Api(judge)("post", reopen).status_code == 403
    assert qualification_reopen(campaign=study.campaign, annotator=judge) == 2
    again = Api(researcher)("post", reopen)
    assert again.status_code == 422 and "no failed qualification" in again.json()["detail"]
    training = Assignment.objects.filter(campaign=study.campaign, annotator=judge, is_training=True)
    assert {(a.phase, a.status) for a in training} == {("training", "in_progress")}
    _finish_training(study, judge, right=4)
    row.refresh_from_db()
    assert (row.score, row.passed, row.attempts) == (1.0, True, 2)
