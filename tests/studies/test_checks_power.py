"""The checks' power is known before launch: the set-up answers it (and a dry run does without creating anything),
a link study whose checks can flag nobody is refused with the smallest fix, and participants who join are flagged
at the rates the set-up predicted."""

from __future__ import annotations

import math
import random

import pytest
from django.utils import timezone

from accounts.models import Role, User
from analytics.exports.quality import quality_control
from analytics.report.sections import quality_section, report_context
from annotator.models import Assignment, Campaign
from annotator.services.campaigns import campaign_open
from corpus.models import Item
from quality.engine import power
from quality.engine.figures import DECOYS, PLANTED, Figures, flag_reasons
from quality.selectors.vigilance import annotator_flags
from quality.services import CheckSettings
from stats.intervals import wilson
from studies.design import checks_power_of
from studies.participants import LinkSettings, participant_join
from studies.setup import CampaignSpec, campaign_create
from tests.quality.conftest import Api
from tests.studies.box_study import answer_everything, box_scores, queue_of

pytestmark = pytest.mark.django_db

SEEDS = 1000


def _body(boxes, name: str, **fields) -> dict:
    body = {"name": name, "dataset_id": boxes.data.pk, "run_ids": [r.pk for r in boxes.runs], "annotators": [],
            "aspects": ["accuracy"], "annotators_per_item": 2, "seed": 4, "link": {"enabled": True},
            "items_per_participant": 4, "pass_code": "PASS-1", "fail_code": "FAIL-1", "planted": 0.3}
    return body | fields


def test_a_link_study_whose_checks_flag_nobody_is_refused_with_the_smallest_fix(researcher):
    boxes = box_scores(14, "weak")
    api = Api(researcher)
    before = Item.objects.count()
    answer = api("post", "/campaigns", _body(boxes, "weak"))
    # 4 outputs each: round(0.3 x 4 / 0.7) = 2 planted copies, and 0 of 2 found still has an upper bound of 0.66.
    assert answer.status_code == 422
    assert answer.json()["field"] == ["planted", "items_per_participant"]
    assert answer.json()["detail"] == (
        "planted, items_per_participant: the checks can flag nobody: planted outputs 2 per participant are too few "
        "for the vigilance rule to flag anyone (planted: planted 0.4 or 6 items per participant); or set "
        "accept_weak_checks to create it anyway")
    assert not Campaign.objects.filter(name="weak").exists() and Item.objects.count() == before
    accepted = api("post", "/campaigns", _body(boxes, "weak", accept_weak_checks=True))
    assert accepted.status_code == 201
    assert accepted.json()["warnings"][-1].startswith("planted, items_per_participant: the checks can flag nobody")
    # Without a fail code nobody is screened out by the checks: a warning, not a refusal.
    warned = api("post", "/campaigns", _body(boxes, "weak, no fail code", fail_code=""))
    assert warned.status_code == 201
    # The fix named works: 6 outputs each give 3 planted copies, and a participant who finds none is flagged.
    fixed = api("post", "/campaigns", _body(boxes, "fixed", items_per_participant=6))
    assert fixed.status_code == 201
    assert fixed.json()["checks_power"] == [{"check": "planted", "met_per_participant": 3.0, "smallest_fix": None,
                                             "p_flag": {"accept_all": 1.0, "reject_all": 1.0, "random": 1.0}}]
    assert fixed.json()["speed_rule"].startswith("beside these, the rubber-stamp rule flags whoever is fast")


def test_a_dry_run_answers_the_set_up_report_and_creates_nothing(researcher):
    boxes = box_scores(14, "dry")
    api = Api(researcher)
    counts = (Campaign.objects.count(), Item.objects.count(), Assignment.objects.count())
    body = _body(boxes, "dry", decoys=0.3, control_arm=0.5)
    dry = api("post", "/campaigns", {**body, "dry_run": True})
    assert dry.status_code == 200
    assert (Campaign.objects.count(), Item.objects.count(), Assignment.objects.count()) == counts
    assert dry.json()["dry_run"] is True and dry.json()["refusal"] is None
    made = api("post", "/campaigns", body)
    assert made.status_code == 201
    # The same seed draws the same checks: the dry run's figures are the creation's.
    assert dry.json()["checks_power"] == made.json()["checks_power"]
    assert dry.json()["warnings"] == made.json()["warnings"]
    detail = api("get", f"/campaigns/{made.json()['id']}").json()
    assert detail["checks_power"] == made.json()["checks_power"]
    decoys = next(row for row in made.json()["checks_power"] if row["check"] == "decoys")
    assert decoys["p_flag"]["accept_all"] > 0 and decoys["p_flag"]["reject_all"] == 0
    weak = api("post", "/campaigns", {**_body(boxes, "dry weak"), "dry_run": True})
    assert weak.status_code == 200
    assert weak.json()["refusal"]["field"] == ["planted", "items_per_participant"]
    assert not Campaign.objects.filter(name="dry weak").exists()


# ---- the predictions against participants who join -----------------------------------------------------------


def _study(name: str) -> Campaign:
    """13 outputs, 3 participant judges each, 8 outputs per participant: 5 participants fill the pool."""
    boxes = box_scores(13, name)
    campaign = campaign_create(CampaignSpec(
        name=name, dataset=boxes.data, runs=boxes.runs, aspects=["accuracy"], annotators_per_item=3, seed=9,
        control_arm=0.5, checks=CheckSettings(decoys=0.3, planted=0.3),
        link=LinkSettings(items_per_participant=8, pass_code="PASS-1", fail_code="FAIL-1")))
    campaign_open(campaign=campaign, user=User.objects.create(username=f"{name}-opener", role=Role.RESEARCHER))
    return campaign


def test_participants_meet_the_predicted_checks_and_are_flagged_at_the_predicted_rates():
    campaign = _study("sim")
    rows = {row.check: row for row in checks_power_of(campaign)}
    people = [participant_join(link=campaign.study_link, ids={"prolific_pid": f"P{i}", "session_id": f"S{i}"},
                               now=timezone.now())[0] for i in range(5)]
    # 39 places at 8 each: the fifth participant gets the 7 left, so the prediction is for the first four.
    queues = [queue_of(campaign, p.user_id) for p in people]
    assert [q.real for q in queues] == [8, 8, 8, 8, 7]
    queues = queues[:4]
    # What each meets is the prediction, within one (the handout keeps everyone within one of the rate).
    for queue in queues:
        assert abs(queue.decoys - rows["decoys"].met_per_participant) < 1 + 1e-9
        assert queue.planted == rows["planted"].met_per_participant
    # Accept-all and reject-all participants, answered through the services: flagged as predicted.
    for person, verdict in ((people[0], "error"), (people[1], "not_error")):
        for work in Assignment.objects.filter(campaign=campaign, annotator_id=person.user_id).order_by("order"):
            answer_everything(work, verdict=verdict, ms=4000)
        reasons = annotator_flags(campaign, person.user)
        behaviour = "accept_all" if verdict == "error" else "reject_all"
        for check, reason in ((power.DECOY_CHECK, DECOYS), (power.PLANTED_CHECK, PLANTED)):
            assert (reason in reasons) == (rows[check].p_flag[behaviour] == 1.0), (behaviour, check, reasons)
    # Random participants over 1,000 seeds, each on the queue of one of the five: the share flagged by the decoy
    # rule equals the prediction within its Monte Carlo error (4 standard errors).
    flagged = 0
    for seed in range(SEEDS):
        rng = random.Random(seed)
        queue = queues[seed % len(queues)]
        passed = sum(rng.choice(power.protocol.SPAN_VERDICT_VALUES) == "not_error" for _ in range(queue.decoys))
        flagged += DECOYS in flag_reasons(Figures(decoys=wilson(passed, queue.decoys)),
                                          vigilance_min=campaign.vigilance_min)
    predicted = rows["decoys"].p_flag["random"]
    print(f"\nrandom participants flagged by the decoy rule: {flagged / SEEDS:.3f} of {SEEDS} seeds, predicted "
          f"{predicted:.3f}; decoys met {[q.decoys for q in queues]}, predicted {rows['decoys'].met_per_participant}")
    assert 0 < predicted < 1
    assert abs(flagged / SEEDS - predicted) <= 4 * math.sqrt(predicted * (1 - predicted) / SEEDS), (
        flagged / SEEDS, predicted, [q.decoys for q in queues])


def test_the_report_the_data_card_and_the_analytics_page_show_the_power(client, researcher):
    campaign = _study("shown")
    rows = [row.as_dict() for row in checks_power_of(campaign)]
    card = quality_control(campaign)
    assert card["checks_power"] == rows and card["checks_power_condition"] == power.SPEED_RULE
    section = quality_section(report_context(campaign))
    table = next(t for t in section.tables if t.key == "checks_power")
    assert [(r["check"], r["accept_all"]) for r in table.rows] == [
        (row["check"], 100 * row["p_flag"]["accept_all"]) for row in rows]
    client.force_login(researcher)
    page = client.get(f"/analytics/campaigns/{campaign.pk}/").content.decode()
    assert "The checks&#x27; power" in page or "The checks' power" in page
