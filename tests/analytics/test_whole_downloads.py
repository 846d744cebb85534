"""A download is whole or an error: a failure in a campaign's per-campaign step or in one row answers a 5xx
status, never a 200 whose body stops part-way; a whole download carries its length."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from accounts.services.tokens import token_create
from analytics.exports import labeled
from annotator.services import exporting
from tests.control_arm_study import build_study, work_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def study(make_user):
    built = build_study([make_user("ann1"), make_user("ann2")])
    work_study(built)
    return built


@pytest.fixture
def clients(make_user):
    """A researcher in the browser and with a token; the clients answer 500 instead of raising, as gunicorn does."""
    researcher = make_user("res", role="researcher")
    browser = Client(raise_request_exception=False)
    browser.force_login(researcher)
    api = Client(raise_request_exception=False, HTTP_AUTHORIZATION=f"Bearer {token_create(user=researcher)}")
    return browser, api


def _downloads(study) -> list[tuple[str, str]]:
    campaign, dataset = study.campaign.pk, study.campaign.dataset_id
    return [("browser", f"/analytics/campaigns/{campaign}/labeled.jsonl"),
            ("api", f"/api/analytics/campaigns/{campaign}/labeled?format=jsonl"),
            ("browser", f"/datasets/{dataset}/export.jsonl"), ("browser", f"/datasets/{dataset}/export.csv"),
            ("api", f"/api/datasets/{dataset}/export?format=jsonl"),
            ("api", f"/api/datasets/{dataset}/export?format=csv&campaign={campaign}")]


def _get(clients, who: str, url: str):
    response = clients[0 if who == "browser" else 1].get(url)
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return response, body


def test_whole_downloads_carry_their_length_and_parse(study, clients):
    for who, url in _downloads(study):
        response, body = _get(clients, who, url)
        assert response.status_code == 200, (url, body[:300])
        assert int(response["Content-Length"]) == len(body) > 0
        if "jsonl" in url:
            assert all(json.loads(line) for line in body.decode().splitlines())


def test_a_failing_per_campaign_step_answers_an_error_not_a_partial_file(study, clients, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("the per-campaign step failed")

    monkeypatch.setattr(labeled, "campaign_arms", broken)  # labeled set: the arms of the campaign
    monkeypatch.setattr(exporting, "consensus_campaign", broken)  # items: the campaign whose consensus applies
    for who, url in _downloads(study):
        response, body = _get(clients, who, url)
        assert response.status_code >= 500, (url, response.status_code, body[:200])


def test_a_failing_row_answers_an_error_not_a_partial_file(study, clients, monkeypatch):
    """The first rows are made, then one fails: nothing of them may reach the client under a 200."""
    real_labeled, real_items = labeled.labeled_records, exporting.dataset_records

    def second_fails(real):
        def rows(*args, **kwargs):
            for number, row in enumerate(real(*args, **kwargs)):
                if number == 1:
                    raise RuntimeError("a row failed")
                yield row
        return rows

    monkeypatch.setattr(labeled, "labeled_records", second_fails(real_labeled))
    monkeypatch.setattr(exporting, "dataset_records", second_fails(real_items))
    for who, url in _downloads(study):
        response, body = _get(clients, who, url)
        assert response.status_code >= 500, (url, response.status_code, body[:200])
