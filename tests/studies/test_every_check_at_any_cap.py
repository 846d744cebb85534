"""A link study with every check on is created at any cap, under every protocol, and a refusal names what it is
about: the pool's planted copies (several of one original) never clash, and only a taken name says so."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from annotator.models import Assignment, Campaign
from annotator.services.campaigns import campaign_name_clash
from corpus import protocols
from corpus.models import Item
from quality.models import PlantedOutput
from quality.services import CheckSettings
from studies.models import SetupReport
from studies.participants import LinkSettings
from studies.setup import CampaignSpec, campaign_create
from tests.quality.conftest import Api
from tests.studies.box_study import box_scores

pytestmark = pytest.mark.django_db

# Every protocol takes planted copies (decoys only those with verdicts on machine spans, the control arm only those
# with a step without the machine's spans).
# A comparing protocol's link study deals whole inputs, its planted copies come as screens of their own and it
# takes no decoys: it is walked in tests/studies/test_comparing_link_study.py (and the participant walk), on inputs
# with several outputs.
PROTOCOLS = sorted(name for name, declared in protocols.PROTOCOLS.items() if not declared.comparing)


def _spec(boxes, *, name: str, cap: int, protocol: str) -> CampaignSpec:
    """12 outputs x 3 participant judges at 8 each: 5 participants fill the pool, 3 planted copies each, so the
    pool copies some outputs twice; a training item, the control arm and (where verdicts are given) decoys."""
    declared = protocols.get(protocol)
    training, *outputs = boxes.items
    return CampaignSpec(
        name=name, dataset=boxes.data, runs=boxes.runs, aspects=["accuracy"], annotators_per_item=3, seed=5,
        item_ids=[i.pk for i in outputs], control_arm=0.5 if declared.control_arm else 0.0, protocol=protocol,
        checks=CheckSettings(decoys=0.3 if declared.judges_machine_spans else 0.0, planted=0.3,
                             qualification_items=(training.pk,), qualification_pass=0.5),
        link=LinkSettings(items_per_participant=8, pass_code="PASS-1", fail_code="FAIL-1", cap=cap,
                          consent="You judge box-score summaries.", time_limit_minutes=60))


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("cap", [1, 10, 100, 500])
def test_a_link_study_with_every_check_on_is_created_at_any_cap(protocol, cap):
    boxes = box_scores(13, f"cap-{cap}-{protocol}")
    campaign = campaign_create(_spec(boxes, name=f"every check {cap} {protocol}", cap=cap, protocol=protocol))
    report = SetupReport.objects.get(campaign=campaign)
    copies = PlantedOutput.objects.filter(campaign=campaign, annotator__isnull=True)
    # round(0.3 x 8 / 0.7) = 3 copies per participant; the pool admits ceil(36 / 8) = 5, a cap may admit fewer.
    expected = 3 * min(cap, 5)
    assert (report.planted_asked, report.planted_made) == (expected, expected)
    assert copies.count() == expected
    originals = list(copies.values_list("original_id", flat=True))
    if expected > 12:
        assert len(set(originals)) < len(originals)  # some output is copied twice: the case that used to clash
    ids = list(Item.objects.filter(pk__in=copies.values("item_id")).values_list("external_id", flat=True))
    assert len(set(ids)) == len(ids)


def test_a_taken_name_is_refused_by_name_and_before_anything_is_made(researcher):
    boxes = box_scores(13, "named")
    campaign_create(_spec(boxes, name="taken", cap=10, protocol="opennlgauge"))
    before = Item.objects.count()
    body = {"name": "taken", "dataset_id": boxes.data.pk, "run_ids": [r.pk for r in boxes.runs], "annotators": [],
            "aspects": ["accuracy"], "annotators_per_item": 2, "link": {"enabled": True},
            "items_per_participant": 2, "pass_code": "OK-1", "accept_weak_checks": True}
    answer = Api(researcher)("post", "/campaigns", body)
    assert answer.status_code == 409
    assert answer.json() == {"detail": "name: a campaign named 'taken' exists", "field": "name"}
    assert Item.objects.count() == before and Campaign.objects.filter(name="taken").count() == 1


def test_only_the_names_constraint_reads_as_a_name_clash():
    boxes = box_scores(2, "clash")
    Campaign.objects.create(name="first", dataset=boxes.data)
    with pytest.raises(IntegrityError) as name, transaction.atomic():
        Campaign.objects.create(name="first", dataset=boxes.data)
    assert campaign_name_clash(name.value)
    campaign = Campaign.objects.create(name="second", dataset=boxes.data)
    user = Assignment._meta.get_field("annotator").related_model.objects.create(username="clasher")
    Assignment.objects.create(campaign=campaign, item=boxes.items[0], annotator=user, order=1)
    with pytest.raises(IntegrityError) as other, transaction.atomic():
        Assignment.objects.create(campaign=campaign, item=boxes.items[0], annotator=user, order=2)
    assert not campaign_name_clash(other.value)
