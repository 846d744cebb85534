"""Planted copies look like their neighbours: never one fact apart from an output in the same judge's queue unless
the researcher allows it, and then warned with the count."""

from __future__ import annotations

import pytest

from annotator.models import Assignment
from quality.models import PlantedOutput
from quality.services import CheckSettings
from studies.setup import CampaignSpec, campaign_create
from tests import factories as f
from tests.studies.box_study import box_scores

pytestmark = pytest.mark.django_db


def _alone(name: str, *, allowed: bool):
    """One registered judge of all six outputs: no output outside their queue to copy."""
    boxes = box_scores(6, name)
    judge = f.user(f"{name}-judge")
    campaign = campaign_create(CampaignSpec(
        name=name, dataset=boxes.data, runs=boxes.runs, annotators=[judge], aspects=["accuracy"], seed=1,
        checks=CheckSettings(planted=0.3, planted_near_duplicates=allowed)))
    return campaign, judge


def _near_duplicates(campaign, judge) -> int:
    judged = set(Assignment.objects.filter(campaign=campaign, annotator=judge).values_list("item_id", flat=True))
    return sum(o in judged for o in PlantedOutput.objects.filter(campaign=campaign, annotator=judge)
               .values_list("original_id", flat=True))


def test_a_judge_gets_no_copy_of_their_own_outputs_by_default():
    campaign, judge = _alone("own-off", allowed=False)
    assert PlantedOutput.objects.filter(campaign=campaign).count() == 0
    # round(0.3 x 6 / 0.7) = 3 asked, none made, and the warning says what would allow them.
    assert any(w.startswith("planted: 0.3 asked for 3 planted outputs, 0 made") and "planted_near_duplicates allows"
               in w for w in campaign.warnings), campaign.warnings


def test_allowed_near_duplicates_are_made_and_counted():
    campaign, judge = _alone("own-on", allowed=True)
    made = _near_duplicates(campaign, judge)
    assert made == PlantedOutput.objects.filter(campaign=campaign).count() == 3
    assert ("planted_near_duplicates: 3 planted copies are of outputs their judge also judges, one fact apart from "
            "an output in the same queue") in campaign.warnings
