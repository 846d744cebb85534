"""Who reaches which DHP page: admins manage, invited experts answer, annotators see nothing else;
perturbed items never appear as normal items (dataset lists, exports, campaigns, API)."""

from __future__ import annotations

import pytest
from django.test import Client

from accounts.services.tokens import token_create
from annotator.services.exporting import dataset_records
from dhp.engine.kinds import parse_kinds
from dhp.models import Survey
from dhp.services.perturbing import perturb_dataset
from dhp.services.surveys import survey_create
from studies.setup import CampaignSpec, campaign_create
from tests import factories
from tests.dhp.conftest import N_ITEMS, make_dataset

pytestmark = pytest.mark.django_db


@pytest.fixture
def survey(make_user) -> Survey:
    return survey_create(task=factories.task("summarization"), title="S", metrics=["coherence", "fluency"],
                         experts=[make_user("expert", role="annotator")])


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_annotators_cannot_reach_admin_survey_pages(make_user, survey):
    annotator = make_user("plain", role="annotator")
    client = _client(annotator)
    for url in ("/dhp/surveys/new/", f"/dhp/surveys/{survey.pk}/results/", "/dhp/runs/new/"):
        assert client.get(url).status_code == 403, url
    assert client.post(f"/dhp/surveys/{survey.pk}/close/").status_code == 403
    assert client.post(f"/dhp/surveys/{survey.pk}/invite/", {"experts": [annotator.pk]}).status_code == 403
    assert client.get(f"/dhp/surveys/{survey.pk}/").status_code == 404  # not invited: not even told it exists
    assert "S</a>" not in client.get("/dhp/").content.decode()


def test_invited_expert_answers_in_the_browser(survey):
    expert = survey.invitations.get().expert
    client = _client(expert)
    assert f'href="/dhp/surveys/{survey.pk}/"' in client.get("/dhp/").content.decode()
    page = client.get(f"/dhp/surveys/{survey.pk}/")
    assert page.status_code == 200 and "Typing mistakes" in page.content.decode()
    saved = client.post(f"/dhp/surveys/{survey.pk}/", {"issue-typo": "fluency", "issue-llm-entities": "coherence"},
                        HTTP_HX_REQUEST="true")
    assert saved.status_code == 200 and "2 of 9 answered" in saved.content.decode()
    assert client.post(f"/dhp/surveys/{survey.pk}/", {"issue-typo": "nonsense"}).status_code == 422
    assert client.get(f"/dhp/surveys/{survey.pk}/results/").status_code == 403


def test_admin_sees_results_with_plot_and_closes(make_user, survey):
    admin = make_user("boss", role="admin")
    client = _client(admin)
    expert = survey.invitations.get().expert
    _client(expert).post(f"/dhp/surveys/{survey.pk}/", {"issue-typo": "fluency"})
    late = make_user("late", role="annotator")
    assert client.post(f"/dhp/surveys/{survey.pk}/invite/", {"experts": [late.pk]}).status_code == 302
    assert _client(late).get(f"/dhp/surveys/{survey.pk}/").status_code == 200
    page = client.get(f"/dhp/surveys/{survey.pk}/results/").content.decode()
    assert "data:image/svg+xml;base64," in page and "1 of 2 invited" in page
    assert client.post(f"/dhp/surveys/{survey.pk}/close/").status_code == 302
    survey.refresh_from_db()
    assert survey.status == "closed"
    assert _client(expert).post(f"/dhp/surveys/{survey.pk}/", {"issue-typo": "coherence"}).status_code == 409
    api = Client().get(f"/api/dhp/surveys/{survey.pk}/results",
                       HTTP_AUTHORIZATION=f"Bearer {token_create(user=admin)}").json()
    assert api["n_experts"] == 1 and api["weight_versions"] == [1]


def test_perturbed_items_never_appear_as_normal_items(make_user):
    dataset = make_dataset()
    perturb_dataset(dataset=dataset, kinds=parse_kinds("typo:minor,word-delete:minor"), seed=0)
    assert dataset.items.count() == 3 * N_ITEMS
    researcher = make_user("res", role="researcher")
    page = _client(researcher).get(f"/datasets/{dataset.pk}/").content.decode()
    assert "~typo:minor" not in page and "d0" in page
    api = Client().get(f"/api/datasets/{dataset.pk}/items?limit=1000",
                       HTTP_AUTHORIZATION=f"Bearer {token_create(user=researcher)}").json()
    assert api["count"] == N_ITEMS and len(api["items"]) == N_ITEMS
    listed = Client().get("/api/datasets", HTTP_AUTHORIZATION=f"Bearer {token_create(user=researcher)}").json()
    assert [d["n_items"] for d in listed["items"] if d["name"] == dataset.name] == [N_ITEMS]
    exported = list(dataset_records(dataset))
    assert {r["item_id"] for r in exported} == {f"d{i}" for i in range(N_ITEMS)}
    # A campaign over a run that (wrongly) annotated perturbed items still never assigns them.
    run = factories.run(dataset, "dhp-ensemble", aspect="coherence")
    for item in dataset.items.all():
        factories.annotation(item, run, aspect="coherence")
    annotator = make_user("ann", role="annotator")
    campaign = campaign_create(CampaignSpec(name="c", dataset=dataset, runs=[run], annotators=[annotator],
                                            aspects=["coherence"]))
    assigned = list(campaign.assignments.values_list("item__derived_from", flat=True))
    assert len(assigned) == N_ITEMS and set(assigned) == {None}


def test_annotators_cannot_reach_perturbed_texts_or_results(make_user):
    dataset = make_dataset(n=3)
    perturb_dataset(dataset=dataset, kinds=parse_kinds("typo:minor"), seed=0)
    annotator = make_user("peek", role="annotator")
    client = _client(annotator)
    assert client.get(f"/dhp/datasets/{dataset.pk}/").status_code == 403
    token = token_create(user=annotator)
    assert Client().get(f"/api/datasets/{dataset.pk}/items", HTTP_AUTHORIZATION=f"Bearer {token}").status_code == 403
