"""Active routing: the routing object's contract, a uniform first batch with stored probabilities, top-ups."""

from __future__ import annotations

import json

import numpy as np
import pytest
from django.test import Client

from analytics.report.build import report_files
from annotator.models import Assignment, AutoResolved, Campaign, SampledSpan, SpanDraw
from annotator.selectors.routing import inclusion_probabilities, span_signals
from annotator.selectors.spans import judged_spans
from annotator.services.assignments import assignment_finish
from annotator.services.control_arm import assignment_reveal
from annotator.services.routing import RoutingSpec, TopUpWaits, campaign_route_top_up, top_up_when_ready
from corpus.models import ErrorSpan
from errors import Conflict
from quality.models import CheckSpan
from quality.services import CheckSettings
from stats.ppi import combine, cross_fit, design_matrix, ppi_mean
from stats.routing import ACTIVE, ACTIVE_STRATUM, DEFAULT_MIN_PROBABILITY, RoutingError, check_settings
from studies.participants import LinkSettings
from studies.setup import CampaignError, CampaignSpec, campaign_create
from tests import factories as make
from tests.annotator.routed_data import build_routed_data

pytestmark = pytest.mark.django_db

OUTPUTS = 30


@pytest.fixture
def active_data(db):
    """30 outputs, three merged spans each: the score (k 3, an error), the points (k 2, an error on even outputs)
    and the assists (k 1, never an error). Returns the dataset, the run and span id -> the experts' verdict."""
    data = make.dataset("Active data", input_headers=["Data"], output_header="Summary")
    run = make.run(data, "active-ensemble")
    truth = {}
    for i in range(OUTPUTS):
        output = f"Team {i} won {100 + i}-{90 + i}. Player {i} scored {20 + i} points and {i + 3} assists."
        item = make.item(data, f"a{i}", output, position=i + 1, inputs={"Data": f"row {i}"})
        score, points, assists = make.ensemble_answer(
            item, run, [(f"{100 + i}-{90 + i}", 3), (f"{20 + i} points", 2), (f"{i + 3} assists", 1)], severity=3)
        truth |= {score.pk: True, points.pk: i % 2 == 0, assists.pk: False}
    return data, run, truth


def _active(data, run, judges, **routing):
    return campaign_create(CampaignSpec(name=routing.pop("name", "Active"), dataset=data, runs=[run],
                                        annotators=judges, aspects=["accuracy"], seed=7,
                                        routing=RoutingSpec(design=ACTIVE, seed=7, **routing)))


def _judge_all(campaign, truth, *, finish=True):
    """Every judge gives every span on their card the truth's verdict, and finishes the item."""
    for assignment in Assignment.objects.filter(campaign=campaign).select_related("campaign", "annotator"):
        for span, _ in judged_spans(assignment):
            if not assignment.judgments.filter(span=span).exists():
                error = truth[span.pk]
                make.judgment(span, assignment, "error" if error else "not_error", "correct" if error else "not_error")
        if finish and assignment.status != "done":
            assignment_finish(assignment=assignment, user=assignment.annotator)


@pytest.mark.parametrize(("given", "field"), [
    ({"design": "adaptive", "min_k": 2, "audit_rate": 0.2}, "routing.design"),
    ({"design": "threshold", "min_k": 2}, "routing.audit_rate"),
    ({"design": "threshold", "audit_rate": 0.2}, "routing.min_k"),
    ({"design": "threshold", "min_k": 2, "audit_rate": 0.2, "budget_spans": 10}, "routing.budget_spans"),
    ({"design": "threshold", "min_k": 2, "audit_rate": 0.2, "min_probability": 0.1}, "routing.min_probability"),
    ({"design": "active", "budget_spans": 10, "min_k": 2}, "routing.min_k"),
    ({"design": "active", "budget_spans": 10, "audit_rate": 0.2}, "routing.audit_rate"),
    ({"design": "active"}, ("routing.target_ci_width", "routing.budget_spans")),
    ({"design": "active", "budget_spans": 10, "target_ci_width": 0.06}, ("routing.target_ci_width",
                                                                          "routing.budget_spans")),
    ({"design": "active", "budget_spans": 0}, "routing.budget_spans"),
    ({"design": "active", "budget_spans": True}, "routing.budget_spans"),
    ({"design": "active", "target_ci_width": 1.0}, "routing.target_ci_width"),
    ({"design": "active", "target_ci_width": float("nan")}, "routing.target_ci_width"),
    ({"design": "active", "target_ci_width": 0.06, "min_probability": 0}, "routing.min_probability"),
    ({"design": "active", "target_ci_width": 0.06, "min_probability": 1.5}, "routing.min_probability"),
])
def test_check_settings_refuses_naming_the_field(given, field):
    with pytest.raises(RoutingError) as refused:
        check_settings(**given)
    assert refused.value.field == field
    assert str(refused.value).startswith(field if isinstance(field, str) else ", ".join(field))


def test_check_settings_takes_both_designs():
    check_settings(design="threshold", min_k=3, audit_rate=0.2)
    check_settings(design="active", target_ci_width=0.06)
    check_settings(design="active", budget_spans=200, min_probability=1)


def test_the_api_takes_the_routing_object_and_refuses_bad_settings_at_their_field(active_data, researcher):
    data, run, _ = active_data
    judge = make.user("api-judge")
    client = Client()
    client.force_login(researcher)
    body = {"name": "API active", "dataset_id": data.pk, "run_ids": [run.pk], "annotators": [judge.username],
            "aspects": ["accuracy"], "seed": 3}

    def post(routing, name):
        return client.post("/api/campaigns", json.dumps(body | {"name": name, "routing": routing}),
                           content_type="application/json")

    assert post({"min_k": 2, "audit_rate": 0.5}, "API old").status_code == 201  # today's object: threshold
    old = Campaign.objects.get(name="API old").sample_design
    assert (old.routing_design, old.min_k, old.audit_rate, old.min_probability) == ("threshold", 2, 0.5, None)
    made = post({"design": "active", "budget_spans": 30, "min_probability": 0.2}, "API active")
    assert made.status_code == 201, made.content
    design = Campaign.objects.get(name="API active").sample_design
    assert (design.routing_design, design.budget_spans, design.target_ci_width, design.min_probability,
            design.min_k, design.audit_rate) == ("active", 30, None, 0.2, None, None)
    width = post({"design": "active", "target_ci_width": 0.2}, "API width")
    assert width.status_code == 201
    assert Campaign.objects.get(name="API width").sample_design.min_probability == DEFAULT_MIN_PROBABILITY
    for routing, field in [({"design": "active", "budget_spans": 30, "min_k": 2}, "routing.min_k"),
                           ({"design": "active"}, ["routing.target_ci_width", "routing.budget_spans"]),
                           ({"design": "nope", "min_k": 2, "audit_rate": 0.2}, "routing.design"),
                           ({"min_k": 2, "audit_rate": 0.2, "target_ci_width": 0.1}, "routing.target_ci_width")]:
        refused = post(routing, "API refused")
        assert refused.status_code == 422 and refused.json()["field"] == field, refused.content
    typo = post({"design": "active", "budget_span": 30}, "API refused")
    assert typo.status_code == 422 and "budget_span" in typo.content.decode()  # unknown keys are not ignored
    assert not Campaign.objects.filter(name="API refused").exists()


def test_the_campaign_form_sets_up_an_active_design_and_places_refusals(active_data, researcher, client):
    data, run, _ = active_data
    judge = make.user("form-active-judge")
    client.force_login(researcher)
    form = {"name": "Form active", "dataset": data.pk, "runs": [str(run.pk)], "aspects": ["accuracy"],
            "annotators": [judge.pk], "annotators_per_item": 1, "seed": 4, "guidelines": "x",
            "routing_design": "active", "routing_audit_rate": 0.2, "routing_target_ci_width": 0.3}
    assert client.post("/campaigns/new/", form).status_code == 302
    design = Campaign.objects.get(name="Form active").sample_design
    assert (design.routing_design, design.target_ci_width, design.audit_rate) == ("active", 0.3, None)
    page = client.get(f"/campaigns/{design.campaign_id}/").content.decode()
    drawn = SampledSpan.objects.filter(design=design).count()
    assert "Routes its spans actively" in page and f"{drawn} spans drawn so far" in page
    both = client.post("/campaigns/new/", form | {"name": "Form both", "routing_budget_spans": 20}).content.decode()
    assert 'id="id_routing_target_ci_width_error"' in both and "exactly one of them" in both
    threshold = client.post("/campaigns/new/", form | {"name": "Form threshold", "routing_design": "threshold",
                                                       "routing_min_k": 2}).content.decode()
    assert 'id="id_routing_target_ci_width_error"' in threshold  # a setting of the other design
    assert not Campaign.objects.filter(name__in=["Form both", "Form threshold"]).exists()


def test_the_active_design_refuses_a_participant_link(active_data, annotator_user):
    data, run, _ = active_data
    with pytest.raises(CampaignError) as refused:
        campaign_create(CampaignSpec(name="Active link", dataset=data, runs=[run], annotators=[annotator_user],
                                     aspects=["accuracy"], routing=RoutingSpec(design=ACTIVE, budget_spans=20),
                                     link=LinkSettings(items_per_participant=2, pass_code="DONE-1")))
    assert refused.value.field == ("routing.design", "link")


def test_the_first_batch_is_uniform_with_its_probabilities_stored(active_data, make_user):
    data, run, _ = active_data
    campaign = _active(data, run, [make_user("aj1")], budget_spans=36, min_probability=0.1)
    design = campaign.sample_design
    assert design.is_active and design.population == {str(run.pk): {ACTIVE_STRATUM: 3 * OUTPUTS}}
    draws = SpanDraw.objects.filter(design=design)
    assert draws.count() == 3 * OUTPUTS and set(draws.values_list("batch", flat=True)) == {0}
    # half the budget, 18 of 90 spans, uniform: 0.2 each (above the floor), no prediction before any label
    assert list(draws.values_list("probability", flat=True)) == pytest.approx([0.2] * 3 * OUTPUTS)
    assert set(draws.values_list("prediction", flat=True)) == {None}
    drawn = set(draws.filter(drawn=True).values_list("span_id", flat=True))
    assert drawn == set(SampledSpan.objects.filter(design=design).values_list("span_id", flat=True))
    auto = set(AutoResolved.objects.filter(design=design).values_list("span_id", flat=True))
    assert auto == set(draws.filter(drawn=False).values_list("span_id", flat=True))
    shown = {s.pk for a in Assignment.objects.filter(campaign=campaign).select_related("campaign")
             for s, _ in judged_spans(a)}
    assert shown == drawn
    chances = inclusion_probabilities(campaign)
    assert chances is not None and list(chances.values()) == pytest.approx([0.2] * 3 * OUTPUTS)
    again = _active(data, run, [make_user("aj2")], budget_spans=36, min_probability=0.1, name="Active again")
    assert drawn == set(SpanDraw.objects.filter(design=again.sample_design, drawn=True).values_list(
        "span_id", flat=True))  # the seed fixes the draw


def test_a_top_up_waits_for_labels_then_draws_by_the_predicted_uncertainty(active_data, make_user):
    data, run, truth = active_data
    judges = [make_user("tj1"), make_user("tj2")]
    campaign = _active(data, run, judges, budget_spans=60, min_probability=0.1)
    design = campaign.sample_design
    first = set(SpanDraw.objects.filter(design=design, batch=0, drawn=True).values_list("span_id", flat=True))
    with pytest.raises(TopUpWaits):
        campaign_route_top_up(campaign=campaign)
    assert top_up_when_ready(campaign_id=campaign.pk) is None
    _judge_all(campaign, truth)  # finishing tops up on commit; the test's transaction never commits, so by hand
    assert not SpanDraw.objects.filter(design=design, batch=1).exists()
    done = Assignment.objects.filter(campaign=campaign, status="done").count()
    plan = campaign_route_top_up(campaign=campaign)
    assert plan.batch == 1 and plan.planned[run.pk] == 60 - len(first)
    second = SpanDraw.objects.filter(design=design, batch=1)
    assert second.count() == 3 * OUTPUTS  # every routed span, those drawn before with probability 1
    assert set(second.filter(span_id__in=first).values_list("probability", flat=True)) == {1.0}
    rest = second.exclude(span_id__in=first)
    probabilities = np.array(rest.values_list("probability", flat=True))
    predictions = np.array(rest.values_list("prediction", flat=True))
    assert probabilities.min() >= 0.1 - 1e-12 and probabilities.sum() == pytest.approx(60 - len(first))
    # the assists (k 1) are never errors and the scores (k 3) always: the uncertain points draw the most
    by_kind = {}
    for span_id, p in rest.values_list("span_id", "probability"):
        kind = "points" if "points" in ErrorSpan.objects.get(pk=span_id).text else "other"
        by_kind.setdefault(kind, []).append(p)
    assert np.mean(by_kind["points"]) > np.mean(by_kind["other"])
    assert ((predictions >= 0) & (predictions <= 1)).all()
    new = set(rest.filter(drawn=True).values_list("span_id", flat=True))
    assert len(new) == plan.drawn[run.pk] and new == set(SampledSpan.objects.filter(design=design).values_list(
        "span_id", flat=True)) - first
    # the spans left to the model carry its labels: Error where its prediction is at least one half
    for span_id, verdict in AutoResolved.objects.filter(design=design).values_list("span_id", "span_verdict"):
        assert verdict == ("error" if rest.get(span_id=span_id).prediction >= 0.5 else "not_error")
    assert not AutoResolved.objects.filter(design=design, span_id__in=new | first).exists()
    # experts get the new spans: finished outputs reopen, outputs without work are dealt
    shown = {s.pk for a in Assignment.objects.filter(campaign=campaign).select_related("campaign")
             for s, _ in judged_spans(a)}
    assert shown == first | new
    new_items = set(ErrorSpan.objects.filter(pk__in=new).values_list("annotation__item_id", flat=True))
    assert new_items == set(plan.items)
    assert not Assignment.objects.filter(campaign=campaign, item_id__in=new_items, status="done").exists()
    assert Assignment.objects.filter(campaign=campaign, status="done").count() < done
    with pytest.raises(TopUpWaits):
        campaign_route_top_up(campaign=campaign)
    chances = inclusion_probabilities(campaign)
    assert chances is not None and all(chances[pk] == pytest.approx(1 / 3) for pk in first)  # 30 of 90 first
    assert all(chances[pk] == pytest.approx(rest.get(span_id=pk).probability) for pk in new)
    never = set(chances) - first - new  # not drawn: 1 - (1 - 1/3)(1 - its second probability)
    assert never and all(chances[pk] == pytest.approx(1 - 2 / 3 * (1 - rest.get(span_id=pk).probability))
                         for pk in never)
    # a Poisson draw lands near its plan, not on it: while fewer than the budget were drawn, the next batch plans
    # the rest, and the draws stop once the budget is spent
    batches = 2
    while True:
        _judge_all(campaign, truth)
        so_far = SampledSpan.objects.filter(design=design).count()
        spent = campaign_route_top_up(campaign=campaign)
        if spent.batch is None:
            break
        assert spent.batch == batches and spent.planned[run.pk] == 60 - so_far and batches < 12
        batches += 1
    assert spent.reached[run.pk] == "the budget is spent" and so_far >= 60
    Campaign.objects.filter(pk=campaign.pk).update(status=Campaign.Status.CLOSED)
    campaign.refresh_from_db()
    with pytest.raises(Conflict, match="closed"):
        campaign_route_top_up(campaign=campaign)
    assert top_up_when_ready(campaign_id=campaign.pk) is None


def _by_hand(design, run_id, truth):
    """The active design's Span OK straight from its stored rows and the truth: per batch the PPI++ estimate with
    the prediction the batch stored (the first batch's cross-fitted on its own labels), combined."""
    rows = list(SpanDraw.objects.filter(design=design, run_id=run_id).order_by("batch", "span_id").values_list(
        "batch", "span_id", "probability", "prediction", "drawn"))
    spans = sorted({r[1] for r in rows})
    y = np.array([truth[pk] for pk in spans])
    index = {pk: i for i, pk in enumerate(spans)}
    first = [r for r in rows if r[0] == 0]
    drawn0 = np.array([r[4] for r in first])
    x = design_matrix(span_signals(spans))
    f0 = cross_fit(x, {i: bool(y[i]) for i in np.flatnonzero(drawn0)}, seed=design.seed)
    parts, so_far = [], np.zeros(len(spans), dtype=bool)
    for batch in sorted({r[0] for r in rows}):
        these = [r for r in rows if r[0] == batch]
        pi = np.array([r[2] for r in these])
        f = f0 if batch == 0 else np.array([r[3] for r in these])
        for r in these:
            so_far[index[r[1]]] |= r[4]
        parts.append(ppi_mean(prediction=f, probability=pi, sampled=so_far.copy(), outcome=y))
    return combine(parts)


def test_the_routing_figures_of_an_active_campaign_are_prediction_powered(active_data, make_user, researcher):
    data, run, truth = active_data
    judge = make_user("rj-active")
    campaign = _active(data, run, [judge], budget_spans=50, min_probability=0.1)
    _judge_all(campaign, truth)
    campaign_route_top_up(campaign=campaign)
    _judge_all(campaign, truth)
    client = Client()
    client.force_login(researcher)
    body = client.get(f"/api/analytics/campaigns/{campaign.pk}/routing").json()
    assert (body["design"], body["min_k"], body["audit_rate"], body["budget_spans"], body["min_probability"],
            body["batches"]) == ("active", None, None, 50, 0.1, 2)
    [row] = body["evaluators"]
    drawn = SampledSpan.objects.filter(design=campaign.sample_design).count()
    assert (row["audited"], row["auto"], row["spans"]) == (drawn, 3 * OUTPUTS - drawn, 3 * OUTPUTS)
    expected = _by_hand(campaign.sample_design, run.pk, truth)
    ppi, human = row["span_accuracy_ppi"], row["span_accuracy_human_only"]
    assert (ppi["estimate"], ppi["ci_low"], ppi["ci_high"]) == pytest.approx(
        (expected.estimate.point, expected.estimate.low, expected.estimate.high))
    assert human["estimate"] == pytest.approx(expected.classical.point) and human["estimator"] == "ht"
    assert ppi["estimator"] == "ppi++" and row["span_accuracy"]["estimator"] in ("ppi++", "ht")
    chosen = ppi if expected.estimate.se <= expected.classical.se else human
    assert row["span_accuracy"]["estimate"] == pytest.approx(chosen["estimate"])
    assert row["estimator_reason"].startswith("the calibrated predictor narrows" if chosen is ppi else "the predictor")
    full = sum(truth.values()) / len(truth)  # the draw depends on the run's key, so the interval covers full
    # judging only 95% of the time; the estimate always lands near it
    assert ppi["ci_low"] <= ppi["estimate"] <= ppi["ci_high"]
    assert abs(ppi["estimate"] - full) <= 2 * (ppi["ci_high"] - ppi["ci_low"])
    assert row["labeled_error"]["estimate"] is not None and 0 <= row["labeled_error"]["estimate"] <= 1
    card = client.get(f"/api/analytics/campaigns/{campaign.pk}/labeled/card").json()["routing"]
    assert card["design"] == "active" and card["batches"] == 2
    assert card["evaluators"][0]["labeled_error"] == pytest.approx(row["labeled_error"]["estimate"])
    # the labeled set: who decided each machine span, its inclusion probability and weight
    records = [json.loads(line) for line in b"".join(client.get(
        f"/api/analytics/campaigns/{campaign.pk}/labeled").streaming_content).decode().splitlines()]
    machine = [s for r in records for part in ("errors", "rejected", "unresolved") for s in r[part]
               if s["origin"] == "machine"]
    chances = inclusion_probabilities(campaign)
    experts = [s for s in machine if s["decided_by"] == "expert"]
    model = [s for s in machine if s["decided_by"] == "model"]
    assert len(experts) == drawn and model
    assert all(s["weight"] == pytest.approx(1 / s["inclusion_probability"]) for s in experts)
    assert all(s["weight"] == 0 and 0 < s["inclusion_probability"] < 1 for s in model)
    assert sorted(s["inclusion_probability"] for s in experts) == pytest.approx(sorted(
        chances[pk] for pk in SampledSpan.objects.filter(design=campaign.sample_design).values_list(
            "span_id", flat=True)))
    report = client.get(f"/api/analytics/campaigns/{campaign.pk}/estimates").json()
    assert report == []  # the designed-sample estimates assume equal probabilities: the routing figures say it
    # the dashboard and the report say the same, in the active design's words
    page = client.get(f"/analytics/campaigns/{campaign.pk}/").content.decode()
    assert "Active design: 2 batch(es)" in page and f"{100 * row['span_accuracy']['estimate']:.1f}" in page
    text = report_files(campaign, "markdown")["report.md"].decode()
    assert f"{drawn} machine spans drawn in 2 batches" in text and "labelled by the model" in text
    assert "Active design: 2 batch(es)" in text and "stratified random sample" not in text


def test_finishing_the_last_labelled_item_tops_up_on_commit(active_data, make_user,
                                                             django_capture_on_commit_callbacks):
    data, run, truth = active_data
    campaign = _active(data, run, [make_user("cj1")], budget_spans=50, min_probability=0.1)
    with django_capture_on_commit_callbacks(execute=True):
        _judge_all(campaign, truth)
    assert SpanDraw.objects.filter(design=campaign.sample_design, batch=1).exists()
    assert Assignment.objects.filter(campaign=campaign).exclude(status="done").exists()  # the new batch's work


def test_active_routing_composes_with_decoys_planted_outputs_the_control_arm_and_exclusion(make_user):
    """Every other setting on (a link aside, which the active design refuses): known answers still reach the
    experts and never enter the design, and a top-up after the first batch is labelled draws from routed spans
    only."""
    data, run, _, spans = build_routed_data()
    truth = {s[name].pk: name != "assists" for s in spans.values() for name in ("score", "points", "assists")}
    judges = [make_user("cx1"), make_user("cx2"), make_user("cx3")]
    campaign = campaign_create(CampaignSpec(
        name="Active with everything", dataset=data, runs=[run], annotators=judges, aspects=["accuracy"],
        annotators_per_item=2, seed=11, control_arm=0.5,
        routing=RoutingSpec(design=ACTIVE, budget_spans=20, min_probability=0.2, seed=11),
        checks=CheckSettings(decoys=0.2, planted=0.2, exclude_flagged=True)))
    design = campaign.sample_design
    routed = set(SpanDraw.objects.filter(design=design).values_list("span_id", flat=True))
    assert routed == set(truth)  # the design holds the run's machine spans, no known answer
    checks = CheckSpan.objects.filter(campaign=campaign)
    assert checks.filter(role=CheckSpan.Role.DECOY).exists() and checks.filter(role=CheckSpan.Role.COPY).exists()
    assert not routed & set(checks.values_list("span_id", flat=True))
    assert Assignment.objects.filter(campaign=campaign, in_control_arm=True).exists()
    Campaign.objects.filter(pk=campaign.pk).update(status=Campaign.Status.OPEN)  # its decoys reviewed
    for assignment in Assignment.objects.filter(campaign=campaign, phase="marking").select_related("annotator"):
        assignment_reveal(assignment=assignment, user=assignment.annotator)
    for assignment in Assignment.objects.filter(campaign=campaign).select_related("campaign", "annotator"):
        for span, _ in judged_spans(assignment):
            error = truth.get(span.pk, False)
            make.judgment(span, assignment, "error" if error else "not_error", "correct" if error else "not_error")
    plan = campaign_route_top_up(campaign=campaign)
    assert plan.batch == 1 and plan.planned[run.pk] > 0
    assert set(SpanDraw.objects.filter(design=design, batch=1).values_list("span_id", flat=True)) == routed
