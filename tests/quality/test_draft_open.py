"""A campaign with decoys waits as a draft until a researcher, having reviewed them, opens it."""

from __future__ import annotations

import pytest

from accounts.access import AccessError
from annotator.models import Assignment, Campaign
from annotator.selectors.spans import item_errors, span_handle
from annotator.services.campaigns import campaign_open
from quality.services import CheckSettings
from studies.models import StudyLink
from studies.participants import LinkSettings
from studies.setup import CampaignSpec, campaign_create
from tests.quality.conftest import Api, build_study


def _first_work(study, judge) -> tuple[Assignment, int]:
    """The judge's first item and the handle of its first machine span."""
    work = Assignment.objects.filter(campaign=study.campaign, annotator=judge).order_by("order").first()
    rows, _ = item_errors(work)
    return work, span_handle(work.pk, rows[0].span.pk)


def test_decoy_campaign_starts_draft_and_nobody_can_judge_it(client, judges):
    study = build_study(list(judges), checks=CheckSettings(decoys=0.2), opened=False)
    assert study.campaign.status == Campaign.Status.DRAFT
    judge = judges[0]
    work, handle = _first_work(study, judge)
    r = Api(judge)("patch", f"/assignments/{work.pk}/judgments/{handle}", {"span_verdict": "error"})
    assert r.status_code == 409 and "has not opened yet" in r.json()["detail"], r.content
    client.force_login(judge)
    queue = client.get(f"/campaigns/{study.campaign.pk}/").content.decode()
    assert 'id="campaign-not-open"' in queue and "has not opened yet" in queue


def test_campaign_without_decoys_opens_at_once(judges):
    assert build_study(list(judges)).campaign.status == Campaign.Status.OPEN
    planted_only = build_study([judges[0]], name="planted only", checks=CheckSettings(planted=0.2))
    assert planted_only.campaign.status == Campaign.Status.OPEN


def test_researcher_opens_through_the_api_annotator_is_refused_and_twice_is_409(researcher, judges):
    study = build_study(list(judges), checks=CheckSettings(decoys=0.2), opened=False)
    url = f"/campaigns/{study.campaign.pk}/open"
    r = Api(judges[0])("post", url)
    assert r.status_code == 403
    study.campaign.refresh_from_db()
    assert study.campaign.status == Campaign.Status.DRAFT
    r = Api(researcher)("post", url)
    assert r.status_code == 200, r.content
    assert (r.json()["id"], r.json()["name"], r.json()["status"]) == (study.campaign.pk, "box study", "open")
    study.campaign.refresh_from_db()
    assert study.campaign.status == Campaign.Status.OPEN
    again = Api(researcher)("post", url)
    assert again.status_code == 409 and "open, not a draft" in again.json()["detail"]
    Campaign.objects.filter(pk=study.campaign.pk).update(status=Campaign.Status.CLOSED)
    closed = Api(researcher)("post", url)
    assert closed.status_code == 409 and "closed, not a draft" in closed.json()["detail"]
    assert Api(researcher)("post", "/campaigns/999999/open").status_code == 404
    # once open, the judge's verdict is saved
    work, handle = _first_work(study, judges[0])
    Campaign.objects.filter(pk=study.campaign.pk).update(status=Campaign.Status.OPEN)
    saved = Api(judges[0])("patch", f"/assignments/{work.pk}/judgments/{handle}", {"span_verdict": "error"})
    assert saved.status_code == 200, saved.content


def test_service_refuses_annotators_and_non_drafts(researcher, judges):
    study = build_study(list(judges), checks=CheckSettings(decoys=0.2), opened=False)
    with pytest.raises(AccessError) as refused:
        campaign_open(campaign=study.campaign, user=judges[0])
    assert refused.value.status == 403
    assert campaign_open(campaign=study.campaign, user=researcher).status == Campaign.Status.OPEN
    with pytest.raises(AccessError) as twice:
        campaign_open(campaign=study.campaign, user=researcher)
    assert twice.value.status == 409


@pytest.mark.parametrize("page", ["", "decoys/"])
def test_open_button_on_the_overview_and_decoys_pages_while_draft(client, researcher, judges, page):
    study = build_study(list(judges), checks=CheckSettings(decoys=0.2), opened=False)
    pk = study.campaign.pk
    client.force_login(judges[0])
    assert client.post(f"/campaigns/{pk}/open/").status_code == 403
    client.force_login(researcher)
    html = client.get(f"/campaigns/{pk}/{page}").content.decode()
    assert 'id="campaign-open"' in html and "This campaign is a draft" in html
    r = client.post(f"/campaigns/{pk}/open/", {"next": "decoys" if page else ""})
    assert r.status_code == 302 and r.url == f"/campaigns/{pk}/{page}"
    study.campaign.refresh_from_db()
    assert study.campaign.status == Campaign.Status.OPEN
    html = client.get(f"/campaigns/{pk}/{page}").content.decode()
    assert 'id="campaign-open"' not in html and "The campaign is open" in html
    assert client.post(f"/campaigns/{pk}/open/").status_code == 409


def test_participant_link_of_a_draft_answers_its_not_open_page(client, judges):
    base = build_study([judges[0]], name="link base")
    campaign = campaign_create(CampaignSpec(
        name="draft by link", dataset=base.campaign.dataset, runs=base.runs, annotators=[], aspects=["accuracy"],
        seed=7, link=LinkSettings(items_per_participant=2, pass_code="DONE-1"), checks=CheckSettings(decoys=0.2)))
    assert campaign.status == Campaign.Status.DRAFT
    token = StudyLink.objects.get(campaign=campaign).token
    r = client.get(f"/join/{token}/")
    assert r.status_code == 409 and "This study has not opened yet" in r.content.decode()
    r = client.post(f"/join/{token}/", {"consent": "on"})
    assert r.status_code == 409 and "This study has not opened yet" in r.content.decode()
