"""The new-campaign form and the campaign page: what is typed stays, a run preselects, cancelled runs are left
out, categories come from the task, the campaign links its analytics."""

from __future__ import annotations

import pytest

from annotator.models import Campaign
from jobs.models import JobStatus
from tests.factories import build_campaign, run

pytestmark = pytest.mark.django_db


def test_picking_a_dataset_keeps_the_typed_name_and_other_fields(client, researcher, make_user):
    built = build_campaign([make_user("k1")], name="keep seed")
    client.force_login(researcher)
    html = client.get("/campaigns/new/", {"dataset": built.dataset.pk, "name": "My <typed> study", "seed": "7",
                                          "annotators_per_item": "1"}, HTTP_HX_REQUEST="true").content.decode()
    assert 'value="My &lt;typed&gt; study"' in html and 'name="seed" value="7"' in html
    # The dataset select sends the whole form along when it changes.
    page = client.get("/campaigns/new/").content.decode()
    assert 'hx-include="closest form"' in page


def test_start_a_campaign_from_a_run_preselects_it_and_cancelled_runs_are_not_offered(client, researcher, make_user):
    built = build_campaign([make_user("k2")], name="preselect")
    alpha, beta = built.runs
    stopped = run(built.dataset, "stopped-run", status=JobStatus.CANCELLED)
    client.force_login(researcher)
    response = client.get("/campaigns/new/", {"run": beta.pk})
    form = response.context["form"]
    assert form["runs"].value() == [str(beta.pk)] and form["aspects"].value() == ["accuracy"]
    assert form["dataset"].value() == built.dataset.pk
    offered = [value for value, _ in form.fields["runs"].choices]
    assert str(stopped.pk) not in offered and str(alpha.pk) in offered
    # The task's default categories are proposed (data-to-text: RotoWire's).
    assert form["categories"].value() == "NAME, NUMBER, WORD, CONTEXT, NOT_CHECKABLE, OTHER"
    # The run page's link carries the run.
    run_page = client.get(f"/runs/{beta.pk}/").content.decode()
    assert f'href="/campaigns/new/?run={beta.pk}"' in run_page


def test_a_campaign_gets_the_typed_categories_and_links_its_analytics(client, researcher, make_user):
    ann = make_user("k3")
    built = build_campaign([ann], name="categories seed")
    client.force_login(researcher)
    form = {"name": "Typed categories", "dataset": built.dataset.pk, "runs": [str(built.runs[0].pk)],
            "aspects": ["accuracy"], "annotators": [ann.pk], "annotators_per_item": 1, "seed": 0,
            "guidelines": "x", "categories": "Wrong number, Wrong name, Other"}
    response = client.post("/campaigns/new/", form)
    campaign = Campaign.objects.get(name="Typed categories")
    assert response.status_code == 302
    assert campaign.categories == [
        {"key": "1", "name": "Wrong number", "colour": "#0b63c5"},
        {"key": "2", "name": "Wrong name", "colour": "#c2410c"},
        {"key": "3", "name": "Other", "colour": "#7e22ce"},
    ]
    bad = client.post("/campaigns/new/", {**form, "name": "Bad", "categories": "A, a"})
    assert bad.status_code == 200 and "listed twice" in bad.content.decode()
    overview = client.get(f"/campaigns/{campaign.pk}/").content.decode()
    assert f'href="/analytics/campaigns/{campaign.pk}/"' in overview


def test_the_campaign_form_is_laid_out_by_the_one_form_layout_in_its_groups(client, researcher, make_user):
    built = build_campaign([make_user("k4")], name="layout")
    client.force_login(researcher)
    page = client.get("/campaigns/new/").content.decode()
    # The dataset select carries its own htmx: it re-renders the form for the picked dataset.
    select = page[page.index('<select name="dataset"'):]
    select = select[:select.index(">")]
    assert 'hx-get="/campaigns/new/"' in select and 'hx-target="#campaign-form"' in select
    assert "Choose a dataset first" in page and "<p><label" not in page
    for group in ("sample-settings", "link-settings", "quality-check-settings"):
        assert f'<fieldset id="{group}">' in page
    link = page[page.index('<fieldset id="link-settings">'):page.index('<fieldset id="quality-check-settings">')]
    assert 'name="pass_code"' in link and 'name="decoys"' not in link
    picked = client.get("/campaigns/new/", {"dataset": built.dataset.pk}, HTTP_HX_REQUEST="true").content.decode()
    assert 'class="form-field' in picked and "Choose a dataset first" not in picked
    assert picked.count('name="runs"') == len(built.runs)
