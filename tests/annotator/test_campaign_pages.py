"""Campaign pages: the creation form, the annotator's queue with progress and resume, the control key."""

from __future__ import annotations

import pytest

from annotator.models import Assignment, Campaign, ControlVerdict
from annotator.services.judgments import judgment_set
from tests.factories import build_campaign

pytestmark = pytest.mark.django_db


def test_researcher_creates_a_campaign_through_the_form(client, researcher, make_user):
    ann1, ann2, ann3 = make_user("f1"), make_user("f2"), make_user("f3")
    built = build_campaign([ann1], name="form seed")
    client.force_login(researcher)
    # Choosing the dataset re-renders the form (htmx) with that dataset's runs and aspects.
    partial = client.get("/campaigns/new/", {"dataset": built.dataset.pk}, HTTP_HX_REQUEST="true").content.decode()
    assert partial.lstrip().startswith('<form method="post" class="card form-stack" id="campaign-form">')
    assert "secret-run-alpha" in partial and 'value="accuracy"' in partial
    response = client.post("/campaigns/new/", {
        "name": "Form campaign", "dataset": built.dataset.pk, "runs": [str(r.pk) for r in built.runs],
        "aspects": ["accuracy"], "annotators": [ann2.pk, ann3.pk], "annotators_per_item": 2,
        "control_items": "i2", "seed": 1, "guidelines": "# Judge carefully",
    })
    campaign = Campaign.objects.get(name="Form campaign")
    assert response.status_code == 302 and response.url == f"/campaigns/{campaign.pk}/"
    # Two items, two annotators each (item i2 is a control and goes to everyone anyway): 4 assignments.
    assert campaign.assignments.count() == 4
    assert set(campaign.assignments.filter(is_control=True).values_list("item__external_id", flat=True)) == {"i2"}
    assert campaign.guidelines == "# Judge carefully"
    bad = client.post("/campaigns/new/", {
        "name": "Too many", "dataset": built.dataset.pk, "runs": [str(built.runs[0].pk)],
        "annotators": [ann2.pk], "annotators_per_item": 2, "seed": 0, "guidelines": "x", "control_items": "nope",
    })
    assert bad.status_code == 200 and not Campaign.objects.filter(name="Too many").exists()
    text = bad.content.decode()
    assert "Only 1 annotators chosen" in text and "Not items of this dataset: nope" in text


def test_queue_shows_progress_and_resumes_at_the_item_in_progress(client, make_user):
    ann = make_user("q1")
    built = build_campaign([ann], per_item=1)
    rows = list(Assignment.objects.filter(annotator=ann).select_related("campaign", "item").order_by("order"))
    assert len(rows) == 2
    client.force_login(ann)
    assert client.get(f"/campaigns/{built.campaign.pk}/resume/").url == f"/work/{rows[0].pk}/"
    # Working on the second item makes it the one to resume.
    span = next(s for s in built.spans.values() if s.annotation.item_id == rows[1].item_id)
    judgment_set(assignment=rows[1], span=span, user=ann, changes={"span_verdict": "error"})
    assert client.get(f"/campaigns/{built.campaign.pk}/resume/").url == f"/work/{rows[1].pk}/"
    Assignment.objects.filter(pk=rows[0].pk).update(status=Assignment.Status.DONE, phase="done")
    page = client.get(f"/campaigns/{built.campaign.pk}/").content.decode()
    assert "<strong>1 of 2</strong> items done" in page and 'max="2" value="1"' in page and ">50%</progress>" in page


def test_control_key_page_stores_known_verdicts(client, researcher, make_user):
    ann = make_user("k1")
    built = build_campaign([ann], control_first=True)
    client.force_login(researcher)
    page = client.get(f"/campaigns/{built.campaign.pk}/control/").content.decode()
    s = built.spans
    assert f'name="span-{s["a1_family"].pk}"' in page and f'name="span-{s["b2_rating"].pk}"' not in page
    client.post(f"/campaigns/{built.campaign.pk}/control/", {
        f"span-{s['a1_family'].pk}": "error", f"explanation-{s['a1_family'].pk}": "correct",
        f"span-{s['b1_family'].pk}": "", f"span-{s['a1_missing'].pk}": "hallucination",
    })
    assert set(ControlVerdict.objects.values_list("span_id", "span_verdict", "explanation_verdict")) == {
        (s["a1_family"].pk, "error", "correct"), (s["a1_missing"].pk, "hallucination", "")}


def test_demo_campaign_is_workable_for_expert1(client):
    from django.core.management import call_command

    from accounts.models import User

    call_command("load_demo", stdout=open("/dev/null", "w"))  # noqa: SIM115
    expert = User.objects.get(username="expert1")
    campaign = Campaign.objects.get(name="Demo campaign: restaurant accuracy")
    client.force_login(expert)
    resume = client.get(f"/campaigns/{campaign.pk}/resume/")
    assert resume.status_code == 302 and resume.url.startswith("/work/")
    page = client.get(resume.url)
    assert page.status_code == 200 and "sample-ensemble" not in page.content.decode()
    assert 'id="output-text"' in page.content.decode()


def test_item_screen_marks_a_span_whose_location_is_ambiguous(client, make_user):
    """The aligner's doubt reaches the expert: only the flagged span carries the badge."""
    ann = make_user("amb1")
    built = build_campaign([ann], per_item=1)
    flagged = built.spans["b2_rating"]
    flagged.ambiguous = True
    flagged.save(update_fields=["ambiguous"])
    client.force_login(ann)
    pages = {a.item_id: client.get(f"/work/{a.pk}/").content.decode()
             for a in Assignment.objects.filter(annotator=ann)}
    assert pages[flagged.annotation.item_id].count("ambiguous location") == 1
    assert all("ambiguous location" not in page for item_id, page in pages.items()
               if item_id != flagged.annotation.item_id)
