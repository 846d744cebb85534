"""Planted copies under the protocols that pre-fill: a copy opens pre-filled with the machine's spans as its
neighbours do (an empty copy among pre-filled items would tell it apart); set-up asks the protocol whether it can
plant errors and hold a control arm, naming the fields it refuses."""

from __future__ import annotations

from dataclasses import replace

import pytest

from annotator.models import Assignment
from annotator.selectors.spans import added_spans
from annotator.services.campaigns import CampaignError
from annotator.services.esa import esa_open
from annotator.services.mqm_prefill import mqm_prefill
from corpus import protocols
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


def _spec(make_user, name: str, protocol: str, **fields) -> CampaignSpec:
    data = f.dataset(f"{name} data", input_headers=["Source"], output_header="Summary")
    run = f.run(data, f"{name} run")
    it = f.item(data, "seg0", OUTPUTS[0], system="sys0")
    f.span_at(f.annotation(it, run), 1, MARKED[0], severity=4)
    values = {"name": name, "dataset": data, "runs": [run], "annotators": [make_user(f"{name}-a")],
              "aspects": ["accuracy"], "protocol": protocol} | fields
    return CampaignSpec(**values)


def test_set_up_refuses_a_control_arm_the_protocol_has_no_step_for(make_user):
    with pytest.raises(CampaignError) as refused:
        campaign_create(_spec(make_user, "mqm arm", "mqm", control_arm=0.5))
    assert refused.value.field == ("control_arm", "protocol") and "'mqm' protocol" in str(refused.value)
    with pytest.raises(CampaignError) as refused:  # nothing primes without a run, under any protocol
        campaign_create(_spec(make_user, "esa arm", "esa", control_arm=0.5, runs=[]))
    assert refused.value.field == ("control_arm", "runs")
    assert campaign_create(_spec(make_user, "esa arm ok", "esa", control_arm=0.5)).control_arm == 0.5


def test_set_up_asks_the_protocol_whether_errors_can_be_planted(make_user, monkeypatch):
    declared = protocols.PROTOCOLS["esa"]
    monkeypatch.setitem(protocols.PROTOCOLS, "esa", replace(declared, marks=()))  # marks nothing: no errors of its own
    with pytest.raises(CampaignError) as refused:
        campaign_create(_spec(make_user, "no marks", "esa", checks=CheckSettings(planted=0.5)))
    assert refused.value.field == ("planted", "protocol")
    # every other protocol plants: by marks, by scores, or (pairwise) by the preference on a planted screen
    others = [p for p in protocols.PROTOCOLS.values() if p is not protocols.PROTOCOLS["esa"]]
    assert all(p.plants for p in others)
    assert [p.name for p in others if p.planted_check == protocols.PREFERRED] == [protocols.PAIRWISE]


def test_set_up_says_training_is_practice_where_no_verdict_grades_it(make_user):
    for protocol in ("opennlgauge", "mqm", "esa", "da"):
        spec = _spec(make_user, f"{protocol} training", protocol)
        training = f.item(spec.dataset, "train0", OUTPUTS[0], system="sys0").pk
        campaign = campaign_create(replace(spec, checks=CheckSettings(qualification_items=(training,))))
        said = [w for w in campaign.warnings if w.startswith("qualification:")]
        assert said == ([] if protocol == "opennlgauge" else [said[0]]) and (not said or "practice" in said[0])
    assert [p.name for p in protocols.PROTOCOLS.values() if p.grades_training] == ["opennlgauge"]


def test_the_campaign_api_names_the_refused_fields(make_user):
    from tests.quality.conftest import Api

    spec = _spec(make_user, "api arm", "mqm")
    body = {"name": "api arm", "dataset_id": spec.dataset.pk, "run_ids": [r.pk for r in spec.runs],
            "annotators": [spec.annotators[0].username], "aspects": ["accuracy"], "annotators_per_item": 1,
            "protocol": "mqm", "control_arm": 0.5}
    answer = Api(make_user("rita-arm", role="researcher"))("post", "/campaigns", body)
    assert answer.status_code == 422, answer.json()
    assert answer.json()["field"] == ["control_arm", "protocol"]
