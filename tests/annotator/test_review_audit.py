"""Every label is explained by its audit trail: two reviewers' decisions and undos interleave without one
silently reverting the other, an agreed span is decided only by an override the screen lists, an export's
consensus comes from one campaign, and the campaign API allows the roles the form allows."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from accounts.services.tokens import token_create
from annotator.models import Adjudication, AdjudicationEvent, Assignment
from annotator.services.adjudication import adjudication_set
from studies.setup import CampaignSpec, campaign_create
from tests.adjudication_study import three_judge_study
from tests.factories import judgment

pytestmark = pytest.mark.django_db


@pytest.fixture
def study(make_user):
    built, _ = three_judge_study((make_user("ann1"), make_user("ann2"), make_user("ann3")))
    return built


def _api(user) -> Client:
    return Client(enforce_csrf_checks=True, HTTP_AUTHORIZATION=f"Bearer {token_create(user=user)}")


def _put(client: Client, campaign, span_id: int, body: dict):
    return client.put(f"/api/campaigns/{campaign.pk}/disputes/{span_id}", data=json.dumps(body),
                      content_type="application/json")


def _history(client: Client, campaign, span_id: int) -> list[tuple[str, str, str, str, str, int]]:
    rows = client.get(f"/api/campaigns/{campaign.pk}/disputes/{span_id}/history").json()
    return [(r["user"], r["action"], r["field"], r["old_value"], r["new_value"], r["version"]) for r in rows]


def test_an_undo_never_reverts_another_reviewers_later_decision(study, make_user):
    campaign, span = study.campaign, study.spans["a1_missing"].pk
    rita, adam = _api(make_user("rita", role="researcher")), _api(make_user("adam", role="admin"))
    assert _put(rita, campaign, span, {"span_verdict": "hallucination"}).status_code == 200
    decided = _put(adam, campaign, span, {"span_verdict": "no_span"}).json()
    assert decided["decision"]["reviewer"] == "adam" and decided["versions"] == {"span_verdict": 2}

    refused = rita.post(f"/api/campaigns/{campaign.pk}/disputes/undo")
    assert refused.status_code == 409
    assert "adam (change, version 2)" in refused.json()["detail"] and "nothing was undone" in refused.json()["detail"]
    decision = Adjudication.objects.get(campaign=campaign, span_id=span)
    assert (decision.span_verdict, decision.reviewer.username) == ("no_span", "adam")  # untouched

    # adam undoes his own change: rita's verdict is back, and hers is the change in force again
    back = adam.post(f"/api/campaigns/{campaign.pk}/disputes/undo").json()
    assert back["decision"]["span_verdict"] == "hallucination" and back["decision"]["reviewer"] == "rita"
    # rita's undo is still refused: adam touched the field after her change (an undo is a change too)
    assert rita.post(f"/api/campaigns/{campaign.pk}/disputes/undo").status_code == 409
    # adam's redo: his change is in force again
    assert adam.post(f"/api/campaigns/{campaign.pk}/disputes/redo").json()["decision"]["span_verdict"] == "no_span"
    assert _history(rita, campaign, span) == [
        ("rita", "change", "span_verdict", "", "hallucination", 1),
        ("adam", "change", "span_verdict", "hallucination", "no_span", 2),
        ("adam", "undo", "span_verdict", "no_span", "hallucination", 3),
        ("adam", "redo", "span_verdict", "hallucination", "no_span", 4),
    ]
    # the refused undos wrote nothing, and the audit explains the stored value: its last row's new value
    assert AdjudicationEvent.objects.filter(adjudication__span_id=span).count() == 4
    decision.refresh_from_db()
    assert decision.span_verdict == "no_span" and decision.versions == {"span_verdict": 4}


def test_a_reviewer_undoes_and_redoes_their_own_change_on_another_field(study, make_user):
    """Per field: adam's note does not block rita's undo of her span verdict on the same span."""
    campaign, span = study.campaign, study.spans["a1_missing"].pk
    rita, adam = _api(make_user("rita", role="researcher")), _api(make_user("adam", role="admin"))
    _put(rita, campaign, span, {"span_verdict": "hallucination"})
    _put(adam, campaign, span, {"note": "checked the table"})
    undone = rita.post(f"/api/campaigns/{campaign.pk}/disputes/undo")
    assert undone.status_code == 200
    assert undone.json()["decision"] == {"span_verdict": "", "explanation_verdict": "", "occurrence": "",
                                         "note": "checked the table", "reviewer": "adam"}
    assert rita.post(f"/api/campaigns/{campaign.pk}/disputes/redo").json()["decision"]["reviewer"] == "rita"
    assert [a for _, a, *_ in _history(adam, campaign, span)] == ["change", "change", "undo", "redo"]


def test_an_agreed_span_is_decided_only_by_an_override_the_screen_lists(study, make_user, client):
    campaign, agreed = study.campaign, study.spans["a1_family"].pk  # all three judges: error / correct
    rita_user = make_user("rita", role="researcher")
    rita = _api(rita_user)
    refused = _put(rita, campaign, agreed, {"span_verdict": "not_error"})
    assert refused.status_code == 409 and "not in dispute" in refused.json()["detail"]
    assert not Adjudication.objects.filter(span_id=agreed).exists()  # nothing half-stored
    listed = {d["span_id"] for d in rita.get(f"/api/campaigns/{campaign.pk}/disputes").json()}
    assert agreed not in listed

    overridden = _put(rita, campaign, agreed, {"span_verdict": "not_error", "override": True})
    assert overridden.status_code == 200
    body = overridden.json()
    assert body["override"] is True and body["consensus"]["method"] == "adjudicated"
    entries = {d["span_id"]: d for d in rita.get(f"/api/campaigns/{campaign.pk}/disputes").json()}
    assert entries[agreed]["override"] is True and entries[agreed]["decision"]["span_verdict"] == "not_error"
    assert _history(rita, campaign, agreed) == [("rita", "override", "override", "", "true", 0),
                                                ("rita", "change", "span_verdict", "", "not_error", 1)]
    # once overridden, the span is on the screen: later changes need no second override
    assert _put(rita, campaign, agreed, {"note": "the data says no"}).status_code == 200
    client.force_login(rita_user)
    page = client.get(f"/campaigns/{campaign.pk}/adjudicate/").content.decode()
    assert f'id="dispute-{agreed}"' in page and ">Override</span>" in page


def test_a_single_judged_span_is_not_in_dispute_either(study, researcher):
    with pytest.raises(Exception, match="not in dispute") as refused:
        adjudication_set(campaign=study.campaign, span_id=study.spans["b2_rating"].pk, user=researcher,
                         changes={"span_verdict": "not_error"})
    assert refused.value.status == 409


def _export(client: Client, dataset, query: str = "") -> dict[str, dict]:
    lines = b"".join(client.get(f"/api/datasets/{dataset.pk}/export{query}").streaming_content).decode().splitlines()
    return {s["text"]: s["consensus"] for r in map(json.loads, lines) for a in r["annotations"]
            for s in a["spans"] if a["kind"] == "ensemble"}


def test_the_export_consensus_comes_from_one_campaign(study, make_user):
    """Two campaigns on one dataset decide the same span differently; the export never takes whichever
    decision is newest: it takes the named campaign's, else the labeling campaign's, else none."""
    first, dataset, span = study.campaign, study.dataset, study.spans["a1_missing"]
    rita, rex = make_user("rita", role="researcher"), make_user("rex", role="researcher")
    adjudication_set(campaign=first, span_id=span.pk, user=rita, changes={"span_verdict": "hallucination"})
    judges = [make_user("ann4"), make_user("ann5")]
    second = campaign_create(CampaignSpec(name="Second look", dataset=dataset, runs=study.runs, annotators=judges,
                             aspects=["accuracy"], annotators_per_item=2, reviewers=[rex]))
    for who, verdict in zip(judges, ("error", "not_error"), strict=True):
        judgment(span, Assignment.objects.get(campaign=second, annotator=who, item=study.items[0]), verdict, "correct")
    adjudication_set(campaign=second, span_id=span.pk, user=rex, changes={"span_verdict": "not_error"})  # newest

    api = _api(rita)
    plain = _export(api, dataset)["serves French food"]
    assert plain["method"] != "adjudicated"  # no campaign named, none marked: no reviewer's decision applies
    assert _export(api, dataset, f"?campaign={second.pk}")["serves French food"]["span_verdict"] == "not_error"
    assert _export(api, dataset, f"?campaign={first.pk}")["serves French food"]["span_verdict"] == "hallucination"

    marked = api.put(f"/api/datasets/{dataset.pk}/labeling-campaign", data=json.dumps({"campaign_id": first.pk}),
                     content_type="application/json")
    assert marked.status_code == 200 and marked.json()["campaign"] == first.name
    labeled = _export(api, dataset)["serves French food"]
    assert (labeled["span_verdict"], labeled["method"]) == ("hallucination", "adjudicated")
    assert labeled["agreement"] == round(2 / 3, 4)  # the labeling campaign's three judges, not all five
    api.put(f"/api/datasets/{dataset.pk}/labeling-campaign", data=json.dumps({"campaign_id": second.pk}),
            content_type="application/json")
    assert _export(api, dataset)["serves French food"]["span_verdict"] == "not_error"
    assert api.get(f"/api/datasets/{dataset.pk}/labeling-campaign").json()["campaign_id"] == second.pk
    assert api.get(f"/api/datasets/{dataset.pk}/export?campaign=999999").status_code == 404


def test_the_campaign_api_allows_the_roles_the_form_allows(study, make_user):
    rita = make_user("rita", role="researcher")
    expert = make_user("expert3")
    api = _api(rita)
    body = {"name": "roles", "dataset_id": study.dataset.pk, "run_ids": [r.pk for r in study.runs],
            "annotators": ["ann1"], "aspects": ["accuracy"]}

    def create(**changes):
        return api.post("/api/campaigns", data=json.dumps({**body, **changes}), content_type="application/json")

    as_reviewer = create(reviewers=[expert.username])
    assert as_reviewer.status_code == 422 and "reviewers: expert3" in as_reviewer.json()["detail"]
    as_judge = create(annotators=["rita"])  # a researcher judging their own campaign (then deciding it)
    assert as_judge.status_code == 422 and "annotators: rita" in as_judge.json()["detail"]
    assert create(reviewers=["rita"]).status_code == 201


def test_the_campaign_page_marks_and_clears_the_labeling_campaign(study, make_user, client):
    from annotator.models import Campaign

    campaign = study.campaign
    client.force_login(make_user("rita", role="researcher"))
    page = client.get(f"/campaigns/{campaign.pk}/").content.decode()
    assert "Make this the labeling campaign" in page
    assert client.post(f"/campaigns/{campaign.pk}/labeling/").status_code == 302
    assert Campaign.objects.get(pk=campaign.pk).is_labeling
    assert "Stop using it for exports" in client.get(f"/campaigns/{campaign.pk}/").content.decode()
    client.post(f"/campaigns/{campaign.pk}/labeling/", {"clear": "1"})
    assert not Campaign.objects.filter(dataset=study.dataset, is_labeling=True).exists()
    client.force_login(make_user("ann9"))
    assert client.post(f"/campaigns/{campaign.pk}/labeling/").status_code == 403
