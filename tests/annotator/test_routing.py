"""Routed judging: confident spans go to the ensemble but for an audit, the rest to experts; the design is exact."""

from __future__ import annotations

import json
import math

import pytest
from django.test import Client

from accounts.access import AccessError
from annotator.models import Assignment, AutoResolved, Campaign, SampleDesign, SampledSpan
from annotator.selectors.spans import judged_span_for_assignment, judged_spans
from annotator.services.campaigns import CampaignError
from annotator.services.routing import RoutingSpec
from annotator.services.sampling import SampleSpec
from quality.models import CheckSpan
from quality.services import CheckSettings
from stats.routing import CONFIDENT, UNCERTAIN, RoutingError, audit_size, route
from studies.models import StudyLink
from studies.participants import LinkSettings
from studies.setup import CampaignSpec, campaign_create
from tests import factories as make
from tests.annotator.routed_data import build_routed_data

pytestmark = pytest.mark.django_db


@pytest.fixture
def routed_data(db):
    return build_routed_data()


def test_route_keeps_uncertain_spans_and_audits_a_fixed_share_of_the_confident():
    units = [(f"s{i}", i % 4) for i in range(40)]  # k 0, 1, 2, 3 ten times each
    routes = route(units, min_k=2, audit_rate=0.25, seed=5)
    assert routes.population == {CONFIDENT: 20, UNCERTAIN: 20}
    assert sorted(routes.expert) == sorted(key for key, k in units if k < 2)
    assert len(routes.audit) == 5 and len(routes.auto) == 15
    assert set(routes.audit) | set(routes.auto) == {key for key, k in units if k >= 2}
    assert route(list(reversed(units)), min_k=2, audit_rate=0.25, seed=5).audit == routes.audit  # order-free
    assert route(units, min_k=2, audit_rate=0.25, seed=6).audit != routes.audit
    assert [audit_size(n, 0.1) for n in (0, 1, 9, 10, 11)] == [0, 1, 1, 1, 2]  # never an unaudited stratum
    for bad in ({"min_k": 0, "audit_rate": 0.2}, {"min_k": 2, "audit_rate": 0}, {"min_k": 2, "audit_rate": 1.5},
                {"min_k": 2, "audit_rate": math.nan}):
        with pytest.raises(RoutingError, match="routing." + next(k for k in bad if bad[k] in (0, 1.5) or
                                                              bad[k] != bad[k])):
            route(units, **bad)


def test_a_routed_campaign_shows_experts_the_uncertain_spans_and_the_audit_only(routed_data, annotator_user):
    data, run, items, spans = routed_data
    campaign = campaign_create(CampaignSpec(name="Routed", dataset=data, runs=[run], annotators=[annotator_user],
                                            aspects=["accuracy"], seed=3, routing=RoutingSpec(2, 0.25, seed=3)))
    design = campaign.sample_design
    assert (design.strata, design.min_k, design.audit_rate, design.is_routing) == (
        SampleDesign.Strata.ROUTING, 2, 0.25, True)
    assert design.population == {str(run.pk): {CONFIDENT: 20, UNCERTAIN: 10}}
    judged = SampledSpan.objects.filter(design=design)
    audited = set(judged.filter(stratum=CONFIDENT).values_list("span_id", flat=True))
    auto = set(AutoResolved.objects.filter(design=design).values_list("span_id", flat=True))
    assert len(audited) == 5 and len(auto) == 15  # ceil(0.25 x 20)
    assert set(judged.filter(stratum=UNCERTAIN).values_list("span_id", flat=True)) == {
        s["assists"].pk for s in spans.values()}
    assert set(AutoResolved.objects.filter(design=design).values_list("span_verdict", flat=True)) == {"error"}
    confident = {s[name].pk for s in spans.values() for name in ("score", "points")}
    assert audited | auto == confident and not audited & auto
    shown: set[int] = set()
    for assignment in Assignment.objects.filter(campaign=campaign).select_related("campaign"):
        shown |= {s.pk for s, _ in judged_spans(assignment)}
        for span_id in auto & {s.pk for s in (spans[assignment.item_id]["score"], spans[assignment.item_id]["points"])}:
            with pytest.raises(AccessError):  # an auto-resolved span cannot be judged, even by its id
                judged_span_for_assignment(assignment, span_id)
    assert shown == audited | {s["assists"].pk for s in spans.values()}
    assert Campaign.objects.get(pk=campaign.pk).is_sampled


def test_routing_and_sample_are_exclusive_and_refusals_name_the_field(routed_data, researcher, annotator_user):
    data, run, _, _ = routed_data
    with pytest.raises(CampaignError, match="sample, routing"):
        campaign_create(CampaignSpec(name="Both", dataset=data, runs=[run], annotators=[annotator_user],
                                     sample=SampleSpec(total=3), routing=RoutingSpec(2, 0.2)))
    client = Client()
    client.force_login(researcher)
    body = {"name": "Via API", "dataset_id": data.pk, "run_ids": [run.pk], "annotators": [annotator_user.username],
            "aspects": ["accuracy"], "routing": {"min_k": 2, "audit_rate": 0.5}, "sample": {"total": 4}}
    both = client.post("/api/campaigns", json.dumps(body), content_type="application/json")
    assert both.status_code == 422 and "sample, routing" in both.json()["detail"]
    no_audit = client.post("/api/campaigns", json.dumps(body | {"sample": None, "routing": {"min_k": 2,
                                                                                            "audit_rate": 0}}),
                           content_type="application/json")
    assert no_audit.status_code == 422 and "routing.audit_rate" in no_audit.json()["detail"]
    made = client.post("/api/campaigns", json.dumps(body | {"sample": None}), content_type="application/json")
    assert made.status_code == 201
    design = Campaign.objects.get(name="Via API").sample_design
    assert (design.min_k, design.audit_rate) == (2, 0.5)
    assert not Campaign.objects.filter(name="Both").exists()


def test_routing_composes_with_decoys_planted_outputs_and_the_control_arm(routed_data, make_user):
    """Known answers are never auto-resolved: decoys and planted copies reach the experts whatever the routes."""
    data, run, items, spans = routed_data
    judges = [make_user("rj1"), make_user("rj2")]
    campaign = campaign_create(CampaignSpec(
        name="Routed with everything", dataset=data, runs=[run], annotators=judges, aspects=["accuracy"],
        annotators_per_item=3, seed=11, control_arm=0.5, routing=RoutingSpec(2, 0.2, seed=11),
        checks=CheckSettings(decoys=0.2, planted=0.2, exclude_flagged=True),
        link=LinkSettings(items_per_participant=2, pass_code="DONE-1")))
    design = campaign.sample_design
    auto = set(AutoResolved.objects.filter(design=design).values_list("span_id", flat=True))
    checks = CheckSpan.objects.filter(campaign=campaign)
    assert checks.filter(role=CheckSpan.Role.DECOY).exists() and checks.filter(role=CheckSpan.Role.COPY).exists()
    assert not auto & set(checks.values_list("span_id", flat=True))
    # a planted copy carries exactly the spans experts judge on its original: never an auto-resolved one
    assert not auto & set(checks.filter(role=CheckSpan.Role.COPY).values_list("original_id", flat=True))
    shown_checks: set[int] = set()
    for assignment in Assignment.objects.filter(campaign=campaign).select_related("campaign"):
        if assignment.phase == "marking":
            continue
        on_card = {s.pk for s, _ in judged_spans(assignment)}
        assert not on_card & auto
        shown_checks |= on_card & set(checks.values_list("span_id", flat=True))
    assert shown_checks  # the known answers are on the cards
    assert Assignment.objects.filter(campaign=campaign, in_control_arm=True).exists()
    # the link's pool holds the routed outputs only: those with a span for experts
    routed_items = set(SampledSpan.objects.filter(design=design).values_list("span__annotation__item_id", flat=True))
    pool = set(StudyLink.objects.get(campaign=campaign).items)
    assert pool and pool <= routed_items


def test_the_campaign_form_routes_and_plans(routed_data, researcher, client):
    data, run, _, spans = routed_data
    judge = make.user("form-judge")
    client.force_login(researcher)
    form = {"name": "Form routed", "dataset": data.pk, "runs": [str(run.pk)], "aspects": ["accuracy"],
            "annotators": [judge.pk], "annotators_per_item": 1, "seed": 4, "guidelines": "x",
            "routing_min_k": 2, "routing_audit_rate": 0.5}
    assert client.post("/campaigns/new/", form).status_code == 302
    campaign = Campaign.objects.get(name="Form routed")
    assert (campaign.sample_design.min_k, campaign.sample_design.audit_rate, campaign.sample_design.seed) == (2, 0.5, 4)
    assert AutoResolved.objects.filter(design__campaign=campaign).count() == 10  # 20 confident, half audited
    page = client.get(f"/campaigns/{campaign.pk}/").content.decode()
    assert "Routes its spans" in page and "10 are resolved automatically" in page
    both = client.post("/campaigns/new/", form | {"name": "Form both", "sample_strata": "evaluator",
                                                  "sample_total": 3})
    assert both.status_code == 200 and "sample, routing" in both.content.decode()
    zero = client.post("/campaigns/new/", form | {"name": "Form zero", "routing_audit_rate": 0})
    assert zero.status_code == 200 and "routing.audit_rate" in zero.content.decode()
    assert not Campaign.objects.filter(name__in=["Form both", "Form zero"]).exists()
    # the planner box: from this campaign once its judge finished an output
    assignment = Assignment.objects.filter(campaign=campaign).first()
    for span, _ in judged_spans(assignment):
        make.judgment(span, assignment, "error", "correct")
    Assignment.objects.filter(pk=assignment.pk).update(status="done", phase="done", active_seconds=120.0)
    shown = len(judged_spans(assignment))
    planned = client.get("/campaigns/new/", {"plan_from": campaign.pk, "plan_outputs": 100, "plan_judges": 3})
    text = planned.content.decode()
    assert 'id="plan-result"' in text
    assert f"{120 / shown:.1f} s per span, 120.0 s per output" in text
    assert f"{120 * 100 * 3 / 3600:.1f}" in text  # expert hours


def test_routing_is_refused_for_a_protocol_that_judges_no_machine_span(routed_data, annotator_user):
    data, run, _, _ = routed_data
    with pytest.raises(CampaignError, match="routing, protocol"):
        campaign_create(CampaignSpec(name="MQM routed", dataset=data, runs=[run], annotators=[annotator_user],
                                     protocol="mqm", routing=RoutingSpec(2, 0.2)))
    assert not Campaign.objects.filter(name="MQM routed").exists()
