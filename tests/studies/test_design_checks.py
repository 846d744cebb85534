"""A design that cannot run is refused at creation, one that runs but not as asked is warned about, with numbers;
the campaign page and `GET /api/campaigns/ID` show the study's settings and what creation made."""

from __future__ import annotations

import re

import pytest

from annotator.models import Campaign
from studies.models import SetupReport, StudyLink
from tests import factories as f
from tests.quality.conftest import Api
from tests.studies.box_study import box_scores

pytestmark = pytest.mark.django_db


def _body(boxes, name: str, **fields) -> dict:
    body = {"name": name, "dataset_id": boxes.data.pk, "run_ids": [r.pk for r in boxes.runs], "annotators": [],
            "aspects": ["accuracy"], "annotators_per_item": 2, "seed": 4, "link": {"enabled": True},
            "items_per_participant": 2, "pass_code": "OK-1"}
    return body | fields


def _plain(n: int, name: str):
    """Outputs with no number and no name: nothing a decoy or a planted error could change."""
    data = f.dataset(f"{name} data", input_headers=["Data"])
    judge = f.run(data, f"{name}-run")
    for i in range(n):
        made = f.item(data, f"p{i}", "the food is cheap and the staff are kind.", position=i + 1,
                      inputs={"Data": "priceRange[high] | staff[kind]"})
        f.span_at(f.annotation(made, judge), 1, "cheap", explanation="The price range is high.", severity=3)
    return type("Plain", (), {"data": data, "runs": [judge]})


def test_a_link_the_registered_annotators_already_fill_is_refused_with_its_numbers(researcher, make_user):
    boxes = box_scores(4)
    make_user("expert1"), make_user("expert2")
    answer = Api(researcher)("post", "/campaigns", _body(boxes, "full", annotators=["expert1", "expert2"],
                                                          link={"enabled": True, "cap": 10}))
    assert answer.status_code == 422
    message = answer.json()["detail"]
    assert message.startswith("link: the 2 registered annotators already give every output its 2 judges")
    assert not Campaign.objects.filter(name="full").exists() and not StudyLink.objects.exists()
    # With one more judge per output the link has a place on each output, and the campaign is made.
    made = Api(researcher)("post", "/campaigns", _body(boxes, "room", annotators=["expert1", "expert2"],
                                                        annotators_per_item=3))
    assert made.status_code == 201 and made.json()["warnings"] == []


@pytest.mark.parametrize("protocol", ["mqm", "esa"])
def test_decoys_under_a_protocol_without_verdicts_on_machine_spans_are_refused(researcher, protocol):
    boxes = box_scores(4)
    answer = Api(researcher)("post", "/campaigns", _body(boxes, f"{protocol} decoys", protocol=protocol, decoys=0.3))
    assert answer.status_code == 422
    assert answer.json()["detail"].startswith(f"decoys, protocol: a decoy is a machine span annotators should reject, "
                                              f"but under the '{protocol}' protocol")
    assert not Campaign.objects.filter(name=f"{protocol} decoys").exists()
    made = Api(researcher)("post", "/campaigns", _body(boxes, f"{protocol} plain", protocol=protocol))
    assert made.status_code == 201, made.json()


def test_a_link_with_an_empty_pool_is_refused(researcher):
    boxes = box_scores(2, "empty")
    answer = Api(researcher)("post", "/campaigns", _body(boxes, "empty", item_ids=[]))
    assert answer.status_code == 422 and answer.json()["detail"].startswith("link: the pool is empty")


@pytest.mark.parametrize(("fields", "warning"), [
    # 4 outputs x 2 judges = 8 places; 2 outputs each: 4 participants fill them.
    ({"link": {"enabled": True, "cap": 10}},
     "link.cap: 10, but the pool's 8 places (4 outputs x 2 participant judges) at 2 outputs each admit at most 4 "
     "participants; the link says the study is full after that"),
    ({"link": {"enabled": True, "cap": 3}},
     "link.cap: 3 participants x 2 outputs fill 6 of the pool's 8 places; 2 stay unjudged unless the cap is raised"),
    ({"items_per_participant": 6},
     "items_per_participant: 6, but the pool has 4 outputs and nobody judges one twice: each participant gets at "
     "most 4"),
    ({"annotators_per_item": 1, "control_arm": 0.5},
     "control_arm: with 1 judge per output the arm cannot be crossed: its 2 outputs are seen unprimed only, so "
     "priming is compared between different outputs, not on the same ones (annotators_per_item 2 or more crosses "
     "it)"),
    ({"control_arm": 0.1}, "control_arm: 0.1 of 4 outputs rounds to 0, so no output is in the arm"),
])
def test_a_design_that_runs_but_not_as_asked_is_warned_about_with_numbers(client, researcher, fields, warning):
    boxes = box_scores(4)
    answer = Api(researcher)("post", "/campaigns", _body(boxes, "warned", **fields))
    assert answer.status_code == 201, answer.content
    assert answer.json()["warnings"] == [warning]
    campaign_id = answer.json()["id"]
    assert Api(researcher)("get", f"/campaigns/{campaign_id}").json()["warnings"] == [warning]
    client.force_login(researcher)
    page = client.get(f"/campaigns/{campaign_id}/").content.decode()
    assert warning.replace("'", "&#x27;") in page


def test_checks_that_cannot_be_made_are_warned_about_with_how_many_and_why(researcher):
    plain = _plain(4, "plain")
    answer = Api(researcher)("post", "/campaigns", _body(plain, "no checks", decoys=0.3, planted=0.3))
    assert answer.status_code == 201 and answer.json()["status"] == "draft"
    # 4 machine spans at 0.3 ask for round(0.3 * 4 / 0.7) = 2 decoys; 8 places at 2 outputs each: 4 participants
    # with round(0.3 * 2 / 0.7) = 1 planted output each.
    assert answer.json()["warnings"] == [
        "decoys: 0.3 asked for 2, 0 made: 0.3 of 4 machine spans asks for 2 decoys, but the 4 outputs hold only 0 "
        "stretches like their machine spans that the input supports and no source marks",
        "planted: 0.3 asked for 4 planted outputs, 0 made: only 0 of the 4 outputs can take a planted error (a "
        "number, a name the input mentions, or a sentence to swap or add, outside every span of any source)",
        # Without a fail code the checks that cannot flag are a warning, not a refusal.
        "decoys, items_per_participant, planted: the checks can flag nobody: decoys 0, planted outputs 0 per "
        "participant are too few for the vigilance rule to flag anyone (decoys: outputs that take decoys: 3 decoys "
        "per participant flag, none are made; planted: outputs that take planted errors: 3 per participant flag, "
        "none are made)",
    ]
    detail = Api(researcher)("get", f"/campaigns/{answer.json()['id']}").json()
    assert detail["checks_made"]["planted"] == {
        "asked": 4, "made": 0,
        "why": "only 0 of the 4 outputs can take a planted error (a number, a name the input mentions, or a "
               "sentence to swap or add, outside every span of any source)"}
    assert detail["checks_made"]["decoys"]["asked"] == 2 and detail["checks_made"]["decoys"]["made"] == 0


def test_the_form_refuses_a_full_link_at_its_field_and_shows_warnings_after_creation(client, researcher, make_user):
    boxes = box_scores(4)
    experts = [make_user("e1"), make_user("e2")]
    client.force_login(researcher)
    form = {"name": "Form study", "dataset": boxes.data.pk, "runs": [r.pk for r in boxes.runs],
            "aspects": ["accuracy"], "annotators": [e.pk for e in experts], "annotators_per_item": 2, "seed": 0,
            "guidelines": "Read.", "link_enabled": "on", "link_cap": 10, "items_per_participant": 2,
            "release_after_minutes": 30, "pass_code": "C0DE"}
    refused = client.post("/campaigns/new/", form)
    assert refused.status_code == 200
    assert "link: the 2 registered annotators already give every output its 2 judges" in refused.content.decode()
    form.update(annotators_per_item=3)
    made = client.post("/campaigns/new/", form, follow=True)
    page = made.content.decode()
    # 4 outputs x 1 participant place, 2 each: 2 participants fill the pool, not 10.
    assert "Warning: link.cap: 10, but the pool&#x27;s 4 places" in page
    assert 'id="setup-warnings"' in page


def test_the_api_and_the_page_show_the_study_settings(client, researcher, make_user):
    boxes = box_scores(6)
    make_user("expert1")
    body = _body(boxes, "settings", annotators=["expert1"], annotators_per_item=3, control_arm=0.5, decoys=0.2,
                 planted=0.2, vigilance_min=0.7, exclude_flagged=True, items_per_participant=3,
                 qualification={"items": [boxes.items[0].pk], "pass": 0.9},
                 link={"enabled": True, "cap": 4, "expires": None},
                 planted_near_duplicates=True)  # expert1 judges every output: their copies are of their own
    api = Api(researcher)
    created = api("post", "/campaigns", body).json()
    detail = api("get", f"/campaigns/{created['id']}").json()
    assert {k: detail[k] for k in ("control_arm", "decoys", "planted", "vigilance_min", "exclude_flagged",
                                   "qualification")} == {
        "control_arm": 0.5, "decoys": 0.2, "planted": 0.2, "vigilance_min": 0.7, "exclude_flagged": True,
        "qualification": {"items": [boxes.items[0].pk], "pass": 0.9}}
    assert detail["link"] == api("get", f"/campaigns/{created['id']}/link").json()
    report = SetupReport.objects.get(campaign_id=created["id"])
    # expert1: 5 outputs -> round(0.2 * 5 / 0.8) = 1 planted; participants: 5 outputs x 2 places, 3 each -> 4
    # participants (the cap) x round(0.2 * 3 / 0.8) = 1.
    assert detail["checks_made"]["planted"] == {"asked": 5, "made": report.planted_made, "why": ""} and \
        report.planted_made == 5
    # An annotator of the campaign reads it without the settings.
    mine = Api(make_user("expert1b"))
    assert mine("get", f"/campaigns/{created['id']}").status_code == 404
    expert = Api(type(researcher).objects.get(username="expert1"))("get", f"/campaigns/{created['id']}").json()
    assert expert["decoys"] is None and expert["link"] is None and expert["checks_made"] is None
    # The campaign page shows the same settings.
    client.force_login(researcher)
    page = client.get(f"/campaigns/{created['id']}/").content.decode()
    settings = " ".join(re.sub(r"<[^>]+>", " ", page[page.index('id="campaign-settings"'):]).split())
    assert "Control arm 0.50 of the outputs start unprimed" in settings
    assert "Decoys 0.20 of each judge's machine spans" in settings.replace("&#x27;", "'")
    assert "Planted outputs 0.20 of each judge's outputs · 5 made of 5 asked" in settings.replace("&#x27;", "'")
    assert "flagged annotators are left out of the figures" in settings
    assert "Qualification 1 training item, pass mark 0.9" in settings
    assert f"{detail['link']['url']} · enabled · 0 joined of at most 4" in settings
