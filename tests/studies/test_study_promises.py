"""What a link study promises holds from creation: the training key can be set before anyone joins, a training id
names one output, the consent page counts what the queue holds, and the form shows the checks' power first."""

from __future__ import annotations

import re

import pytest
from django.utils import timezone

from accounts.models import Role, User
from annotator.models import Assignment, Campaign, ControlVerdict
from annotator.services.campaigns import campaign_open
from corpus.models import ErrorSpan
from quality.services import CheckSettings
from studies.participants import LinkSettings, participant_join
from studies.setup import CampaignSpec, campaign_create
from tests import factories as f
from tests.quality.conftest import Api
from tests.studies.box_study import box_scores

pytestmark = pytest.mark.django_db


def _training_study(name: str, *, each: int = 8, cap: int | None = None) -> tuple[Campaign, list]:
    """13 box scores: the first is a training item, 12 outputs go to 3 participant judges each."""
    boxes = box_scores(13, name)
    training, *outputs = boxes.items
    campaign = campaign_create(CampaignSpec(
        name=name, dataset=boxes.data, runs=boxes.runs, aspects=["accuracy"], annotators_per_item=3, seed=2,
        item_ids=[i.pk for i in outputs], control_arm=0.5,
        checks=CheckSettings(decoys=0.3, planted=0.3, qualification_items=(training.pk,), qualification_pass=0.5),
        link=LinkSettings(items_per_participant=each, pass_code="PASS-1", fail_code="FAIL-1", cap=cap)))
    if campaign.status == Campaign.Status.DRAFT:
        campaign_open(campaign=campaign, user=User.objects.create(username=f"{name}-op", role=Role.RESEARCHER))
    return campaign, boxes.items


def test_the_training_key_is_set_before_anyone_joins(client, researcher):
    campaign, items = _training_study("keyed")
    assert not Assignment.objects.filter(campaign=campaign).exists()  # a link-only study: nobody has joined
    spans = list(ErrorSpan.objects.filter(annotation__item=items[0]).order_by("pk"))
    client.force_login(researcher)
    page = client.get(f"/campaigns/{campaign.pk}/control/").content.decode()
    assert "The control items have no machine spans." not in page
    assert all(f'name="span-{span.pk}"' in page for span in spans)
    saved = client.post(f"/campaigns/{campaign.pk}/control/", {f"span-{spans[0].pk}": "error",
                                                                 f"span-{spans[1].pk}": "not_error"})
    assert saved.status_code == 302
    assert dict(ControlVerdict.objects.filter(campaign=campaign).values_list("span_id", "span_verdict")) == {
        spans[0].pk: "error", spans[1].pk: "not_error"}


def test_control_verdicts_of_training_items_are_taken_at_creation(researcher):
    boxes = box_scores(9, "api-keyed")
    training, *outputs = boxes.items
    spans = list(ErrorSpan.objects.filter(annotation__item=training).order_by("pk"))
    body = {"name": "api keyed", "dataset_id": boxes.data.pk, "run_ids": [r.pk for r in boxes.runs],
            "annotators": [], "aspects": ["accuracy"], "annotators_per_item": 2, "link": {"enabled": True},
            "items_per_participant": 4, "pass_code": "PASS-1", "item_ids": [i.pk for i in outputs],
            "qualification": {"items": [training.pk], "pass": 0.8},
            "control_verdicts": [{"span_id": spans[0].pk, "span_verdict": "error"},
                                 {"span_id": spans[1].pk, "span_verdict": "not_error"}]}
    answer = Api(researcher)("post", "/campaigns", body)
    assert answer.status_code == 201, answer.json()
    # One key of each kind: accept-all and reject-all score 1/2 each, below the pass mark of 0.8.
    training_row = next(r for r in answer.json()["checks_power"] if r["check"] == "qualification")
    assert training_row["p_flag"]["accept_all"] == 1.0 and training_row["p_flag"]["reject_all"] == 1.0
    assert ControlVerdict.objects.filter(campaign_id=answer.json()["id"]).count() == 2


def test_a_training_id_naming_outputs_of_several_systems_is_refused_with_the_matches(client, researcher):
    boxes = box_scores(6, "systems")
    for system in ("alpha", "beta"):
        f.item(boxes.data, "r06", f"Output of {system}.", position=100 + len(system), system=system)
    client.force_login(researcher)
    form = {"name": "two systems", "dataset": boxes.data.pk, "runs": [str(r.pk) for r in boxes.runs],
            "annotators": [f.user("judge1").pk], "annotators_per_item": 1, "seed": 0, "guidelines": "Judge."}
    page = client.post("/campaigns/new/", {**form, "qualification_items": "r06"}).content.decode()
    error = re.search(r'id="id_qualification_items_error">(.*?)</span>', page, re.S).group(1)
    assert "pick one by system: r06 (r06@alpha, r06@beta)" in error
    assert not Campaign.objects.filter(name="two systems").exists()
    made = client.post("/campaigns/new/", {**form, "qualification_items": "r06@beta"})
    assert made.status_code == 302
    picked = Campaign.objects.get(name="two systems").qualification["items"]
    assert picked == [boxes.data.items.get(external_id="r06", system="beta").pk]


def test_the_consent_page_counts_every_item_the_queue_then_holds(client):
    # 36 places at 8 each: four newcomers get 8 outputs, the fifth the 4 left; each their planted copies too.
    campaign, _ = _training_study("promised")
    url = f"/join/{campaign.study_link.token}/"
    for n in range(5):
        page = client.get(url).content.decode()
        told = int(re.search(r'<strong id="n-items">(\d+)</strong>', page).group(1))
        person, _ = participant_join(link=campaign.study_link, ids={"prolific_pid": f"C{n}", "session_id": f"s{n}"},
                                     now=timezone.now())
        held = Assignment.objects.filter(campaign=campaign, annotator=person.user)
        assert told == held.count(), (n, told, held.count())
        # 1 training item, then 8 (or 4) outputs and round(0.3 x 8 / 0.7) = 3 (or 2) planted copies.
        assert told == (12 if n < 4 else 7)


def test_the_form_checks_the_design_before_creating_it(client, researcher):
    boxes = box_scores(14, "formcheck")
    client.force_login(researcher)
    form = {"name": "form check", "dataset": boxes.data.pk, "runs": [str(r.pk) for r in boxes.runs],
            "annotators_per_item": 2, "seed": 0, "guidelines": "Judge.", "link_enabled": "on",
            "items_per_participant": 4, "pass_code": "PASS-1", "fail_code": "FAIL-1", "planted": "0.3",
            "aspects": ["accuracy"]}
    checked = client.post("/campaigns/new/", {**form, "dry_run": "1"}).content.decode()
    assert not Campaign.objects.filter(name="form check").exists()
    power = re.search(r'<tr id="power-planted">(.*?)</tr>', checked, re.S).group(1)
    assert '<td class="p-accept-all">0.0%</td>' in power and "planted 0.4 or 6 items per participant" in power
    # What Create would answer is placed at the fields it names.
    assert "the checks can flag nobody" in re.search(r'id="id_planted_error">(.*?)</span>', checked, re.S).group(1)
    refused = client.post("/campaigns/new/", form)
    assert refused.status_code == 200 and not Campaign.objects.filter(name="form check").exists()
    made = client.post("/campaigns/new/", {**form, "items_per_participant": 6})
    assert made.status_code == 302
    page = client.get(made.url).content.decode()
    assert '<td class="p-accept-all">100.0%</td>' in re.search(r'<tr id="power-planted">(.*?)</tr>', page,
                                                              re.S).group(1)
