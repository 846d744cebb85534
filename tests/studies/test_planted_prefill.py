"""Planted copies under the protocols that pre-fill: a copy opens pre-filled with the machine's spans as its
neighbours do (an empty copy among pre-filled items would tell it apart)."""

from __future__ import annotations

import pytest

from annotator.models import Assignment
from annotator.selectors.spans import added_spans
from annotator.services.esa import esa_open
from annotator.services.mqm_prefill import mqm_prefill
from quality.models import CheckSpan, PlantedOutput
from quality.services import CheckSettings
from studies.setup import CampaignSpec, campaign_create
from tests import factories as f

pytestmark = pytest.mark.django_db
# Outputs with numbers, so that each can take a planted error; the machine marks a word away from the numbers.
OUTPUTS = ("The Hawks scored 112 points against Boston.", "Smith added 27 points and 9 rebounds tonight.",
           "The Bulls won 98 to 91 in Chicago yesterday.", "Jones made 6 of 11 shots in the loss.")
MARKED = ("against", "tonight", "yesterday", "loss")


def _campaign(protocol: str, make_user, name: str):
    data = f.dataset(f"{name} data", input_headers=["Source"], output_header="Summary")
    run = f.run(data, f"{name} run")
    for n, (output, word) in enumerate(zip(OUTPUTS, MARKED, strict=True)):
        it = f.item(data, f"seg{n}", output, system=f"sys{n % 2}", inputs={"Source": "A basketball game."})
        f.span_at(f.annotation(it, run, score=2.0, score_label="Poor"), 1, word, severity=5, category="Accuracy",
                  explanation=f"machine says {word}")
    return campaign_create(CampaignSpec(
        name=name, dataset=data, runs=[run], annotators=[make_user(f"{name}-a"), make_user(f"{name}-b")],
        aspects=["accuracy"], annotators_per_item=1, seed=5, protocol=protocol,
        checks=CheckSettings(planted=0.5, planted_near_duplicates=True)))


def _copies(campaign) -> list[Assignment]:
    items = PlantedOutput.objects.filter(campaign=campaign, annotator__isnull=False).values_list("item_id", flat=True)
    found = list(Assignment.objects.filter(campaign=campaign, item_id__in=list(items))
                 .select_related("campaign", "item", "annotator"))
    assert found, "the set-up made no planted copy"
    return found


def _machine_on(assignment: Assignment) -> set[tuple[int, int]]:
    return {(c.span.start, c.span.end) for c in CheckSpan.objects.filter(
        campaign=assignment.campaign, role=CheckSpan.Role.COPY, span__annotation__item=assignment.item)
        .select_related("span")}


@pytest.mark.parametrize("protocol", ["esa", "mqm"])
def test_a_planted_copy_opens_pre_filled_like_its_neighbours(protocol, make_user):
    campaign = _campaign(protocol, make_user, f"planted {protocol}")
    for copy in _copies(campaign):
        machine = _machine_on(copy)
        assert machine, "the copy carries no machine span to pre-fill"
        if protocol == "esa":
            assert esa_open(assignment=copy, user=copy.annotator).prefilled
        else:
            assert mqm_prefill(assignment=copy, user=copy.annotator) == len(machine)
        assert {(s.start, s.end) for s in added_spans(copy)} == machine
    real = Assignment.objects.filter(campaign=campaign, item__derived_from__isnull=True).select_related(
        "campaign", "item", "annotator").first()
    made = esa_open(assignment=real, user=real.annotator).prefilled if protocol == "esa" else \
        mqm_prefill(assignment=real, user=real.annotator)
    assert made  # its neighbours open pre-filled too
