"""Form bodies meet the input rules JSON bodies meet (NUL and lone surrogates refused with 422 naming the field),
and names (models, systems, sources, servers, campaigns) refuse bidirectional controls that dataset text keeps."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from annotator.models import Campaign
from corpus.formats.items import FormatError
from corpus.models import Item
from corpus.services.importing import items_import
from errors import UserError
from evaluation.llm.errors import ServerListError
from evaluation.llm.servers import parse_server
from quality.planted_writing import writer_choose
from studies.setup import CampaignSpec, campaign_create
from tests import factories as make

pytestmark = pytest.mark.django_db

RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: "m\u202egnp.exe" shows as "mexe.png"


@pytest.fixture
def researcher():
    return make.user("res", role="researcher")


@pytest.mark.parametrize("value", ["m\x00", "\x00"])
@pytest.mark.parametrize("kind", ["urlencoded", "multipart"])
def test_a_form_post_with_a_nul_is_refused_naming_the_field(researcher, value, kind):
    """The planted-error form reads request.POST itself: no form field stood between a NUL and the database."""
    client = Client()
    client.force_login(researcher)
    if kind == "urlencoded":
        answer = client.post("/campaigns/1/planted/write/", "server=&model=" + value.replace("\x00", "%00"),
                             content_type="application/x-www-form-urlencoded")
    else:
        answer = client.post("/campaigns/1/planted/write/", {"server": "", "model": value})
    assert answer.status_code == 422, answer.content[:300]
    assert "model: contains a NUL" in answer.content.decode()


def test_an_api_form_body_with_a_nul_answers_the_field_as_data(researcher):
    from accounts.services.tokens import token_create

    client = Client(HTTP_AUTHORIZATION=f"Bearer {token_create(user=researcher)}")
    form = "application/x-www-form-urlencoded"
    answer = client.post("/api/campaigns/1/planted/write", "model=m%00", content_type=form)
    assert answer.status_code == 422
    assert answer.json()["field"] == "model" and "NUL" in answer.json()["detail"]
    put = client.put("/api/campaigns/1/disputes/1", "note=a%00", content_type=form)
    assert put.status_code == 422 and put.json()["field"] == "note"


def test_a_clean_form_post_passes_the_rules(researcher):
    """The check refuses what breaks a rule only: right-to-left text and a plain post reach the view."""
    client = Client()
    client.force_login(researcher)
    answer = client.post("/campaigns/999999/planted/write/", {"model": "\u05de\u05d5\u05d3\u05dc", "server": ""})
    assert answer.status_code == 404  # the view ran: there is no such campaign


def test_a_model_name_with_a_bidi_control_is_refused_naming_the_field(researcher):
    data = make.dataset("bidi", items=[{"external_id": "1", "output": "An output."}])
    campaign = make.campaign("bidi", data, [], [researcher])
    with pytest.raises(UserError, match="bidirectional") as refused:
        writer_choose(campaign, server="http://127.0.0.1:11434", model=f"m{RLO}gnp.exe")
    assert refused.value.field == "model"
    with pytest.raises(ServerListError, match="bidirectional"):
        parse_server(f"http://127.0.0.1:11434/{RLO}")


def test_a_campaign_name_with_a_bidi_control_is_refused_naming_the_field(researcher):
    data = make.dataset("bidi", items=[{"external_id": "1", "output": "An output."}])
    with pytest.raises(UserError, match="bidirectional") as refused:
        campaign_create(CampaignSpec(name=f"study{RLO}txt.exe", dataset=data, annotators=[researcher],
                                     aspects=["accuracy"]), created_by=researcher)
    assert refused.value.field == "name"
    assert not Campaign.objects.filter(name__startswith="study").exists()


def test_bidi_controls_are_refused_in_an_items_system_but_kept_in_its_text(tmp_path):
    """Right-to-left languages need the controls in their text; a system's name is a label, not text."""
    make.task("data-to-text")
    arabic = "\u0627\u0644\u0646\u0635 \u2067\u0645\u0631\u062d\u0628\u0627\u2069 \u202bnested\u202c"
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps({"id": "1", "inputs": {"Data": "d"}, "outputs": {"Text": arabic}, "system": "s"}) + "\n",
                    encoding="utf-8")
    items_import(path=good, dataset_name="rtl", task_slug="data-to-text")
    assert Item.objects.get(dataset__name="rtl").output == arabic
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "2", "inputs": {"Data": "d"}, "outputs": {"Text": "t"},
                               "system": f"sys{RLO}"}) + "\n", encoding="utf-8")
    with pytest.raises(FormatError, match="system.*bidirectional"):
        items_import(path=bad, dataset_name="rtl2", task_slug="data-to-text")
    with pytest.raises(FormatError, match="bidirectional"):
        items_import(path=good, dataset_name="rtl3", task_slug="data-to-text", source=f"gold{RLO}")
