"""Values beyond their column, dates beyond the calendar, ids beyond 64 bits and malformed decoys are refused
with a 4xx naming the field (never a 500); completion URLs follow the strict rule, and a stored URL the rule
refuses is flagged on the campaign page and never redirected to."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from quality.models import CheckSpan
from quality.services import CheckSettings
from studies.completion import completion_url_problem
from studies.models import StudyLink
from tests.annotator.study_links import PASS, finish_all, join_by_link, link_study, signed_in_participant
from tests.annotator.test_participant_api import _api, _body, catalogue  # noqa: F401 - a fixture
from tests.quality.conftest import build_study, judges  # noqa: F401 - a fixture

pytestmark = pytest.mark.django_db

BIG = 2**31


@pytest.mark.parametrize(("change", "field"), [
    ({"link": {"enabled": True, "cap": BIG}}, "cap"),
    ({"items_per_participant": BIG}, "items_per_participant"),
    ({"release_after_minutes": BIG}, "release_after_minutes"),
    ({"time_limit_minutes": BIG}, "time_limit_minutes"),
    ({"annotators_per_item": BIG}, "annotators_per_item"),
    ({"link": {"enabled": True, "expires": "9999-12-31T23:59:59-14:00"}}, "expires"),
    ({"link": {"enabled": True, "expires": "0001-01-01T00:00:00+14:00"}}, "expires"),
    ({"item_ids": [2**63]}, "item_ids"),
    ({"dataset_id": 2**64}, "dataset_id"),
])
def test_campaign_values_beyond_their_column_are_a_422_naming_the_field(catalogue, researcher,  # noqa: F811
                                                                         change, field):
    answer = _api(researcher, "post", "/campaigns", _body(catalogue, **change))
    assert answer.status_code == 422, answer.content
    assert field in json.dumps(answer.json())
    assert not StudyLink.objects.exists()


def test_the_largest_32_bit_values_are_still_taken(catalogue, researcher):  # noqa: F811
    body = _body(catalogue, release_after_minutes=BIG - 1, time_limit_minutes=BIG - 1,
                 link={"enabled": True, "cap": BIG - 1, "expires": "9999-12-31T23:59:59Z"})
    assert _api(researcher, "post", "/campaigns", body).status_code == 201
    assert StudyLink.objects.get().cap == BIG - 1


def test_the_campaign_form_refuses_link_numbers_beyond_32_bits(client, researcher):
    client.force_login(researcher)
    page = client.post("/campaigns/new/", {"name": "x", "link_enabled": "on", "link_cap": str(BIG),
                                           "items_per_participant": str(BIG), "time_limit_minutes": str(BIG)})
    assert page.status_code == 200 and page.content.decode().count("less than or equal to 2147483647") == 3


@pytest.mark.parametrize("path", [
    f"/api/campaigns/1/disputes/{2**63}/history", f"/api/campaigns/{2**63}/link", f"/api/campaigns/{2**70}",
])
def test_path_ids_beyond_64_bits_are_a_404(researcher, path):
    answer = _api(researcher, "get", path.removeprefix("/api"))
    assert answer.status_code == 404 and "no such id" in answer.json()["detail"]


def test_page_ids_beyond_64_bits_are_a_404(client, researcher):
    client.force_login(researcher)
    for path in (f"/campaigns/{2**63}/", f"/campaigns/1/participants/{2**64}/flag/", f"/work/{10**30}/"):
        answer = client.post(path) if path.endswith("flag/") else client.get(path)
        assert answer.status_code == 404, path


def test_the_decoy_form_and_import_refuse_bad_values_with_a_message(client, researcher, judges):  # noqa: F811
    study = build_study(list(judges), checks=CheckSettings(decoys=0.2), opened=False)
    url = f"/campaigns/{study.campaign.pk}/decoys/"
    client.force_login(researcher)
    for bad in ("abc", str(2**63), "-1", "", "１２"):
        page = client.post(url, {"decoy": bad, "explanation": "x"}, follow=True)
        assert page.status_code == 200 and "is not a decoy of this campaign" in page.content.decode(), bad
    item = study.items[0]
    start = item.output.index("Friday")
    good = {"item_id": item.external_id, "start": start, "end": start + 6, "label": "Evaluator A",
            "explanation": "The game was not on Friday."}
    before = CheckSpan.objects.count()
    for change, words in (({"severity": 2**63}, "severity: one of 1, 2, 3, 4, 5"),
                          ({"severity": [1]}, "severity: one of"), ({"severity": True}, "severity: one of"),
                          ({"start": 2**63}, "start: a character offset"), ({"end": "7"}, "end: a character offset")):
        upload = SimpleUploadedFile("d.jsonl", json.dumps({**good, **change}).encode())
        page = client.post(f"{url}import/", {"file": upload}, follow=True)
        assert page.status_code == 200 and f"line 1: {words}" in page.content.decode(), change
    upload = SimpleUploadedFile("d.jsonl", b"[1, 2]\n")
    page = client.post(f"{url}import/", {"file": upload}, follow=True)
    assert "line 1: a JSON object per line" in page.content.decode()
    assert CheckSpan.objects.count() == before


@pytest.mark.parametrize("url", [
    "https://evil.example\\@good.example/", "https://user:password@good.example/done",
    "https://good.example/\u202e{code}", "https://good.example/\u200f", "https://good.example/a\x07",
    "https://127.0.0.1/done", "https://[::1]/done", "https://localhost/done", "https://app.localhost/done",
    "https://2130706433/", "http://good.example/", "https://good.example/{code}/{code}", "https:///path",
    "https://good.example:99999/", "https://good/", "javascript://good.example/%0aalert(1)",
])
def test_the_completion_url_rule_refuses(url):
    assert completion_url_problem(url) is not None


@pytest.mark.parametrize("url", [
    "https://app.prolific.com/submissions/complete?cc={code}", "https://www.mturk.com/mturk/externalSubmit",
    "https://xn--bcher-kva.example:8443/done?code={code}", "https://survey.example.org/end",
])
def test_the_completion_url_rule_takes(url):
    assert completion_url_problem(url) is None


def test_a_stored_url_the_rule_refuses_is_flagged_and_not_redirected_to(researcher):
    study = link_study(n_items=2, per_item=1, items_per_participant=2)
    StudyLink.objects.update(completion_url="https://evil.example\\@app.prolific.com/?cc={code}")
    browser = Client()
    join_by_link(browser, study)
    finish_all(signed_in_participant(browser))
    end = browser.get(f"/campaigns/{study.campaign.pk}/end/").content.decode()
    assert f'id="completion-code">{PASS}<' in end
    assert "http-equiv" not in end and "evil.example" not in end and 'id="complete-link"' not in end
    rita = Client()
    rita.force_login(researcher)
    page = rita.get(f"/campaigns/{study.campaign.pk}/").content.decode()
    assert 'id="completion-url-flag"' in page and "backslash" in page


def test_the_end_page_names_the_destination_host_before_redirecting():
    study = link_study(n_items=2, per_item=1, items_per_participant=2)
    browser = Client()
    join_by_link(browser, study)
    finish_all(signed_in_participant(browser))
    end = browser.get(f"/campaigns/{study.campaign.pk}/end/").content.decode()
    assert '<strong id="redirect-host">app.prolific.com</strong>' in end and 'http-equiv="refresh"' in end
