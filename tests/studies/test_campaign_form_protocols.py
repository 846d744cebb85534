"""The new-campaign form's protocol: MQM and ESA campaigns made on the web open their own item screens, their
options are checked like the API's, and settings that need verdicts on machine spans are refused at their field
(through the API too, for a sample)."""

from __future__ import annotations

import json
import re

import pytest
from ninja.testing import TestClient

from annotator.models import Assignment, Campaign
from config.api import api
from tests.esa_study import build_esa_study
from tests.factories import build_campaign
from tests.mqm_study import build_mqm_study

pytestmark = pytest.mark.django_db

MQM_OPTIONS = {"tree": [{"name": "Accuracy", "children": ["Mistranslation", "Omission"]}, "Style"],
               "weights": {"*": {"major": 7, "minor": 2, "neutral": 0}}}


def _field_error(html: str, field: str) -> str:
    """The error the one form layout shows beside `field` ("" when none)."""
    found = re.search(rf'<span class="field-error" role="alert" id="id_{field}_error">(.*?)</span>', html, re.S)
    return found.group(1) if found else ""


def _screen_templates(client, assignment: Assignment) -> list[str]:
    client.force_login(assignment.annotator)
    response = client.get(f"/work/{assignment.pk}/")
    assert response.status_code == 200
    return [t.name for t in response.templates]


@pytest.fixture
def mqm_form(tmp_path, make_user, client, researcher):
    """A form for an MQM campaign on an imported MQM dataset of six outputs, without runs."""
    base = build_mqm_study(tmp_path, [make_user("m0")], name="MQM base")
    judge = make_user("m1")
    client.force_login(researcher)
    return judge, {"name": "Web MQM", "dataset": base.dataset.pk, "annotators": [judge.pk],
                   "annotators_per_item": 1, "seed": 0, "guidelines": "Mark every error.", "protocol": "mqm"}


def test_the_form_creates_an_mqm_campaign_with_its_own_tree_and_weights(client, mqm_form, researcher):
    judge, form = mqm_form
    created = client.post("/campaigns/new/", {**form, "protocol_options": json.dumps(MQM_OPTIONS)})
    campaign = Campaign.objects.get(name="Web MQM")
    assert created.status_code == 302 and created.url == f"/campaigns/{campaign.pk}/"
    assert campaign.protocol == "mqm"
    again = client.post("/campaigns/new/", {**form, "protocol_options": json.dumps(MQM_OPTIONS)})
    assert again.status_code == 200
    assert "name: a campaign named &#x27;Web MQM&#x27; exists" in _field_error(again.content.decode(), "name")
    assert campaign.protocol_options == {
        "tree": [{"name": "Accuracy", "children": ["Mistranslation", "Omission"]}, {"name": "Style", "children": []}],
        "weights": {"*": {"major": 7.0, "minor": 2.0, "neutral": 0.0}}}
    assignments = Assignment.objects.filter(campaign=campaign, annotator=judge)
    assert assignments.count() == 6  # no runs: every output of the dataset is rated
    assert "annotator/item_mqm.html" in _screen_templates(client, assignments.first())
    screen = client.get(f"/work/{assignments.first().pk}/").content.decode()
    assert "Style" in screen and "Fluency" not in screen  # the campaign's own tree, not the default one
    client.force_login(researcher)
    page = client.get(f"/campaigns/{campaign.pk}/").content.decode()
    row = page[page.index('id="setting-protocol"'):]
    row = row[:row.index("</tr>")]
    assert "MQM (error spans" in row and "&quot;Style&quot;" in row


def test_the_form_creates_an_esa_campaign_whose_run_prefills_the_esa_screen(client, make_user, researcher):
    base = build_esa_study([make_user("e0"), make_user("e00")], name="ESA base", control_arm=0.0)
    judge = make_user("e1")
    client.force_login(researcher)
    created = client.post("/campaigns/new/", {
        "name": "Web ESA", "dataset": base.dataset.pk, "runs": [str(base.run.pk)], "aspects": ["accuracy"],
        "annotators": [judge.pk], "annotators_per_item": 1, "seed": 0, "guidelines": "Mark, then score.",
        "protocol": "esa", "protocol_options": '{"major_from": 2}'})
    campaign = Campaign.objects.get(name="Web ESA")
    assert created.status_code == 302
    assert (campaign.protocol, campaign.protocol_options) == ("esa", {"major_from": 2})
    assignment = Assignment.objects.filter(campaign=campaign, annotator=judge).first()
    assert "annotator/item_esa.html" in _screen_templates(client, assignment)
    client.force_login(researcher)
    page = client.get(f"/campaigns/{campaign.pk}/").content.decode()
    assert "ESA (error spans as Minor or Major" in page and "major_from" in page


@pytest.mark.parametrize(("options", "shown"), [
    ('{"tree": [', "Not valid JSON: Expecting value"),
    ('{"weights": {"*": {"major": NaN}}}', "Not valid JSON: NaN is not a JSON number"),
    ('["Accuracy"]', "protocol_options: an object with &#x27;tree&#x27; and/or &#x27;weights&#x27;"),
    ('{"colour": "red"}', "protocol_options: unknown option(s) colour (known: tree, weights, major_from)"),
    ('{"tree": [{"name": "A/B"}]}', "protocol_options.tree[1]: a category needs a name without &#x27;/&#x27;"),
])
def test_bad_protocol_options_are_shown_at_their_field_and_nothing_is_created(client, mqm_form, options, shown):
    _, form = mqm_form
    refused = client.post("/campaigns/new/", {**form, "protocol_options": options})
    html = refused.content.decode()
    assert refused.status_code == 200 and not Campaign.objects.filter(name="Web MQM").exists()
    assert shown in _field_error(html, "protocol_options")
    # what was typed stays, escaped, in the textarea, and MQM stays picked
    textarea = html[html.index('name="protocol_options"'):]
    assert textarea[textarea.index(">") + 1:textarea.index("</textarea>")].strip() == (
        options.replace('"', "&quot;").replace("<", "&lt;"))
    assert '<option value="mqm" selected>' in html


def test_options_for_the_default_protocol_are_refused_at_their_field(client, researcher, make_user):
    judge = make_user("d1")
    built = build_campaign([make_user("d0")], name="default base")
    client.force_login(researcher)
    refused = client.post("/campaigns/new/", {
        "name": "Default with options", "dataset": built.dataset.pk, "runs": [str(built.runs[0].pk)],
        "aspects": ["accuracy"], "annotators": [judge.pk], "annotators_per_item": 1, "seed": 0, "guidelines": "x",
        "protocol_options": '{"major_from": 4}'})
    assert refused.status_code == 200 and not Campaign.objects.filter(name="Default with options").exists()
    assert "the OpeNLGauge protocol takes none" in _field_error(refused.content.decode(), "protocol_options")


def test_decoys_under_esa_are_refused_at_the_decoys_field_keeping_what_was_typed(client, make_user, researcher):
    base = build_esa_study([make_user("x0"), make_user("x00")], name="ESA decoys", control_arm=0.0)
    judge = make_user("x1")
    client.force_login(researcher)
    form = {"name": "ESA with decoys", "dataset": base.dataset.pk, "runs": [str(base.run.pk)],
            "aspects": ["accuracy"], "annotators": [judge.pk], "annotators_per_item": 1, "seed": 5,
            "guidelines": "Mark, then score.", "protocol": "esa", "decoys": "0.2"}
    refused = client.post("/campaigns/new/", form)
    html = refused.content.decode()
    assert refused.status_code == 200 and not Campaign.objects.filter(name="ESA with decoys").exists()
    assert _field_error(html, "decoys").startswith("decoys, protocol: a decoy is a machine span")
    assert "&#x27;esa&#x27; protocol" in _field_error(html, "decoys")
    assert 'name="decoys" value="0.2"' in html and 'name="seed" value="5"' in html
    assert '<option value="esa" selected>' in html and 'value="ESA with decoys"' in html


def test_a_sample_or_routing_under_mqm_is_refused_at_its_own_field(client, mqm_form):
    _, form = mqm_form
    sampled = client.post("/campaigns/new/", {**form, "sample_strata": "evaluator", "sample_total": "3"})
    assert sampled.status_code == 200 and not Campaign.objects.filter(name="Web MQM").exists()
    assert _field_error(sampled.content.decode(), "sample_strata").startswith("sample, protocol:")
    routed = client.post("/campaigns/new/", {**form, "routing_min_k": "2", "routing_audit_rate": "0.2"})
    assert routed.status_code == 200 and not Campaign.objects.filter(name="Web MQM").exists()
    assert _field_error(routed.content.decode(), "routing_min_k").startswith("routing, protocol:")


def test_the_api_refuses_a_sample_under_esa_naming_both_fields(make_user):
    base = build_esa_study([make_user("s0"), make_user("s00")], name="ESA sample", control_arm=0.0)
    judge = make_user("s1")
    answer = TestClient(api).post("/campaigns", json={
        "name": "ESA sampled", "dataset_id": base.dataset.pk, "run_ids": [base.run.pk], "annotators": [judge.username],
        "protocol": "esa", "sample": {"strata": "evaluator", "total": 2}}, user=make_user("s-res", role="researcher"))
    assert answer.status_code == 422 and answer.json()["detail"].startswith("sample, protocol:")
    assert not Campaign.objects.filter(name="ESA sampled").exists()


def test_the_default_protocol_stays_opennlgauge_and_needs_runs(client, researcher, make_user):
    judge = make_user("o1")
    built = build_campaign([make_user("o0")], name="opennlgauge base")
    client.force_login(researcher)
    page = client.get("/campaigns/new/").content.decode()
    group = page[page.index('<fieldset id="protocol-settings">'):]
    group = group[:group.index("</fieldset>")]
    assert '<option value="opennlgauge" selected>' in group and 'name="protocol_options"' in group
    # the protocol is chosen before the runs, whose need depends on it
    assert page.index('id="protocol-settings"') < page.index("Evaluator runs to judge")
    form = {"name": "Plain", "dataset": built.dataset.pk, "aspects": ["accuracy"], "annotators": [judge.pk],
            "annotators_per_item": 1, "seed": 0, "guidelines": "x"}
    without_runs = client.post("/campaigns/new/", form)
    assert without_runs.status_code == 200 and not Campaign.objects.filter(name="Plain").exists()
    assert "Choose at least one run" in _field_error(without_runs.content.decode(), "runs")
    unknown = client.post("/campaigns/new/", {**form, "protocol": "likert"})
    assert unknown.status_code == 200 and "Select a valid choice" in _field_error(unknown.content.decode(), "protocol")
    created = client.post("/campaigns/new/", {**form, "runs": [str(r.pk) for r in built.runs]})
    assert created.status_code == 302
    campaign = Campaign.objects.get(name="Plain")
    assert (campaign.protocol, campaign.protocol_options) == ("opennlgauge", {})
    assert "annotator/item.html" in _screen_templates(client, Assignment.objects.filter(campaign=campaign).first())


def test_picking_a_dataset_keeps_the_protocol_and_its_options(client, researcher, make_user):
    built = build_campaign([make_user("p0")], name="keep protocol")
    client.force_login(researcher)
    html = client.get("/campaigns/new/", {"dataset": built.dataset.pk, "protocol": "esa",
                                          "protocol_options": '{"major_from": 3}'},
                      HTTP_HX_REQUEST="true").content.decode()
    assert '<option value="esa" selected>' in html and "{&quot;major_from&quot;: 3}" in html


def test_a_control_arm_under_mqm_is_refused_at_the_control_arm_field(client, mqm_form):
    _, form = mqm_form
    refused = client.post("/campaigns/new/", {**form, "control_arm": "0.5"})
    html = refused.content.decode()
    assert refused.status_code == 200 and not Campaign.objects.filter(name="Web MQM").exists()
    assert _field_error(html, "control_arm").startswith("control_arm, protocol:")
