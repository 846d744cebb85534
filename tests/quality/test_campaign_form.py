"""The new-campaign form takes the check settings like the API."""

from __future__ import annotations

from annotator.models import Assignment, Campaign
from tests.quality.conftest import build_study


def test_the_form_sets_the_checks_and_refuses_bad_values_by_field(client, researcher, make_user):
    judge = make_user("f1")
    study = build_study([make_user("f0")], name="form base")
    client.force_login(researcher)
    form = {"name": "Form checks", "dataset": study.campaign.dataset_id, "runs": [str(r.pk) for r in study.runs],
            "aspects": ["accuracy"], "annotators": [judge.pk], "annotators_per_item": 1, "seed": 0,
            "guidelines": "x", "decoys": "0.2", "planted": "0.2", "vigilance_min": "0.7",
            "qualification_items": "g3, g1", "qualification_pass": "0.9", "exclude_flagged": "on",
            # f1 judges every output, so a planted copy can only be of one of theirs: the form allows it.
            "planted_near_duplicates": "on"}
    bad = client.post("/campaigns/new/", {**form, "decoys": "0.9"})
    assert bad.status_code == 200 and "less than or equal to 0.5" in bad.content.decode()
    bad = client.post("/campaigns/new/", {**form, "qualification_items": "g1, nope"})
    assert "Not items of this dataset: nope" in bad.content.decode()
    created = client.post("/campaigns/new/", form)
    made = Campaign.objects.get(name="Form checks")
    # with decoys it is a draft, and the researcher lands on the decoys page to review them
    assert created.status_code == 302 and created.url == f"/campaigns/{made.pk}/decoys/"
    assert made.status == Campaign.Status.DRAFT
    assert (made.decoys, made.planted, made.vigilance_min, made.exclude_flagged) == (0.2, 0.2, 0.7, True)
    g3, g1 = study.items[3].pk, study.items[1].pk
    assert made.qualification == {"items": [g3, g1], "pass": 0.9}
    first_two = Assignment.objects.filter(campaign=made, annotator=judge).order_by("order")[:2]
    assert [(a.item_id, a.is_training) for a in first_two] == [(g3, True), (g1, True)]
    assert made.check_spans.filter(role="decoy").exists() and made.planted_outputs.filter(annotator=judge).exists()
