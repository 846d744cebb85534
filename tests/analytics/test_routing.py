"""A routed campaign's figures: design-weighted span accuracy by hand, the audit, expert time saved; the planner."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from analytics.exports.labeled import labeled_card, labeled_records
from analytics.report.build import report_files
from annotator.models import Assignment, AutoResolved, SampledSpan
from annotator.selectors.spans import judged_spans
from annotator.services.routing import RoutingSpec
from stats.intervals import wilson
from stats.routing import CONFIDENT
from studies.setup import CampaignSpec, campaign_create
from tests import factories as make
from tests.annotator.routed_data import build_routed_data

pytestmark = pytest.mark.django_db


@pytest.fixture
def routed_data(db):
    return build_routed_data()


def _judge_everything(campaign, seconds: float = 60.0) -> dict[int, str]:
    """Scripted experts: the score and the assists are errors, the points are not; each finished output took
    `seconds` of active time. Returns span id -> verdict."""
    verdicts: dict[int, str] = {}
    for assignment in Assignment.objects.filter(campaign=campaign).select_related("campaign", "item"):
        for span, _ in judged_spans(assignment):
            verdict = "not_error" if span.text.endswith("points") else "error"
            verdicts[span.pk] = verdict
            make.judgment(span, assignment, verdict, "correct" if verdict == "error" else "not_error")
        Assignment.objects.filter(pk=assignment.pk).update(status="done", phase="done", active_seconds=seconds)
    return verdicts


def test_routing_figures_are_the_horvitz_thompson_estimate_by_hand(routed_data, researcher, annotator_user):
    data, run, items, spans = routed_data
    campaign = campaign_create(CampaignSpec(name="Routed figures", dataset=data, runs=[run],
                                            annotators=[annotator_user], aspects=["accuracy"], seed=9,
                                            routing=RoutingSpec(2, 0.3, seed=9)))
    _judge_everything(campaign)
    audited = list(SampledSpan.objects.filter(design__campaign=campaign, stratum=CONFIDENT)
                   .select_related("span"))
    n_c = len(audited)  # ceil(0.3 x 20) = 6
    ok_c = sum(1 for row in audited if not row.span.text.endswith("points"))
    assert n_c == 6
    # uncertain stratum (the assists, 10 spans, all judged Error): share 1; confident (20 spans): ok_c / 6
    point = (10 * 1.0 + 20 * ok_c / n_c) / 30
    client = Client()
    client.force_login(researcher)
    body = client.get(f"/api/analytics/campaigns/{campaign.pk}/routing").json()
    assert (body["min_k"], body["audit_rate"], body["spans"], body["expert_spans"], body["auto"]) == (
        2, 0.3, 30, 16, 14)
    row = body["evaluators"][0]
    assert (row["confident"], row["uncertain"], row["audited"], row["auto"]) == (20, 10, 6, 14)
    assert row["expert_share"] == pytest.approx(16 / 30)
    assert row["span_accuracy"]["estimate"] == pytest.approx(point)
    assert row["span_accuracy"]["estimator"] == "ht" and row["exp_correct"]["estimator"] == "ht"
    assert row["span_accuracy"]["ci_low"] <= point <= row["span_accuracy"]["ci_high"]
    expected = wilson(ok_c, n_c)
    assert (row["audited_accuracy"]["value"], row["audited_accuracy"]["ci_low"], row["audited_accuracy"]["n"]) == (
        pytest.approx(ok_c / n_c), pytest.approx(expected.low), n_c)
    # 10 outputs x 60 s over 16 judged spans; 14 spans resolved without an expert
    assert body["seconds_per_span"] == pytest.approx(600 / 16)
    assert body["expert_seconds_saved"] == pytest.approx(14 * 600 / 16)
    assert body["expert_hours_saved"] == pytest.approx(14 * 600 / 16 / 3600)
    # the calibration leaves the auto-resolved spans out: only expert-labelled spans count
    confidence = client.get(f"/api/analytics/campaigns/{campaign.pk}/confidence").json()["evaluators"][0]
    assert confidence["spans"] == 16
    assert sum(lv["spans"] for lv in confidence["levels"] if lv["k"] >= 2) == n_c
    assert AutoResolved.objects.filter(design__campaign=campaign).count() == 14
    # the page, the report and the labeled set say the same
    page = client.get(f"/analytics/campaigns/{campaign.pk}/").content.decode()
    assert "Routed judging: design-weighted figures" in page and f"{100 * point:.1f}" in page
    report = report_files(campaign, "markdown")["report.md"].decode()
    assert "Routed judging" in report and "14 spans that enough of the ensemble's models flagged were" in report
    records = list(labeled_records(campaign))
    auto_spans = [s for r in records for s in r["errors"] if s["method"] == "auto"]
    assert len(auto_spans) == 14 and {s["span_verdict"] for s in auto_spans} == {"error"}
    # 6 of the 20 confident spans audited: probability 0.3 for them and the auto-resolved; uncertain ones 1
    assert {(s["decided_by"], s["inclusion_probability"], s["weight"]) for s in auto_spans} == {("model", 0.3, 0.0)}
    shown = [s for r in records for b in ("errors", "rejected", "unresolved") for s in r[b]
             if s["origin"] == "machine" and s["method"] != "auto"]
    assert len(shown) == 16 and {s["decided_by"] for s in shown} == {"expert"}
    assert sorted(s["inclusion_probability"] for s in shown) == pytest.approx([0.3] * 6 + [1.0] * 10)
    assert sorted(s["weight"] for s in shown) == pytest.approx([1.0] * 10 + [1 / 0.3] * 6)
    card = labeled_card(campaign, fmt="jsonl")
    assert card["counts"]["by_method"]["auto"] == 14
    assert card["routing"]["evaluators"][0]["audited_accuracy"] == pytest.approx(ok_c / n_c)
    for path in ("routing", "confidence"):  # the dashboard's exclude_flagged choice, refused like everywhere
        assert client.get(f"/api/analytics/campaigns/{campaign.pk}/{path}?exclude_flagged=2").status_code == 422
        assert client.get(f"/api/analytics/campaigns/{campaign.pk}/{path}?exclude_flagged=0").status_code == 200
    plain = make.campaign("Not routed", data, [run], [annotator_user])
    assert client.get(f"/api/analytics/campaigns/{plain.pk}/routing").status_code == 409


def test_plan_study_prints_the_json_contract(routed_data, annotator_user, capsys):
    data, run, _, _ = routed_data
    pilot = campaign_create(CampaignSpec(name="Pilot", dataset=data, runs=[run], annotators=[annotator_user],
                                         aspects=["accuracy"], seed=1))
    _judge_everything(pilot, seconds=90.0)
    call_command("plan_study", "--from-campaign", str(pilot.pk), "--outputs", "200", "--judges", "2",
                 "--difference", "0.1", "--format", "json", "--hourly-rate", "40")
    out = json.loads(capsys.readouterr().out)
    assert {"seconds_per_span", "seconds_per_output", "expert_hours", "ci_width", "power"} <= set(out)
    # 10 outputs x 90 s over 30 judged spans
    assert (out["seconds_per_span"], out["seconds_per_output"]) == (pytest.approx(30.0), pytest.approx(90.0))
    assert out["expert_hours"] == pytest.approx(90 * 200 * 2 / 3600)
    assert out["cost"] == pytest.approx(out["expert_hours"] * 40)
    # every output has the same verdicts (2 of 3 spans OK): nothing varies, the width is 0
    assert out["ci_width"] == {run.label: pytest.approx(0.0)}
    # nothing varies between outputs: only the thinning of B's Error verdicts, far below 10 points
    assert out["power"] > 0.99 and out["pilot_accuracy"] == pytest.approx(2 / 3)


def test_plan_study_refuses_bad_sizes_naming_them(routed_data, annotator_user):
    data, run, _, _ = routed_data
    pilot = campaign_create(CampaignSpec(name="Pilot 2", dataset=data, runs=[run], annotators=[annotator_user],
                                         aspects=["accuracy"], seed=1))
    with pytest.raises(CommandError, match="outputs"):
        call_command("plan_study", "--from-campaign", str(pilot.pk), "--outputs", "0", "--judges", "2")
    with pytest.raises(CommandError, match="--campaign"):
        call_command("plan_study", "--from-campaign", "99999", "--outputs", "10", "--judges", "2")
