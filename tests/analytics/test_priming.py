"""Priming figures of a crossed control arm, checked against values worked out by hand (tests/control_arm_study)."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import call_command
from ninja.testing import TestClient

from analytics.report.build import report_files
from analytics.selectors.priming import priming_dicts, priming_paragraph, priming_report
from annotator.models import Assignment
from config.api import api
from tests.control_arm_study import build_study, work_study

pytestmark = pytest.mark.django_db

# Worked out from the module docstring of tests/control_arm_study.py, output by output.
# recall: marks overlapped 1 of 2, 0 of 1, 2 of 3                       -> 3/6, per output 1/2, 0, 2/3
# precision confirmed: 2 of 2, 1 of 3, 1 of 1                            -> 4/6, per output 1, 1/3, 1
# precision found: 1 of 2 (bbbb), 0 of 3, 1 of 1                         -> 2/6, per output 1/2, 0, 1
# accepted unfound: dddd confirmed (1 of 1); ffff and hhhh unfound, hhhh confirmed (1 of 2: the span without
# offsets could never be found unprimed, so it is left out and counted as unlocated); none unfound
#                                                                        -> 2/3, per output 1, 1/2 (output 3 has none)
# errors per output: primed 2, 2, 3 (mean 7/3); unprimed 2, 1, 3 (mean 2); differences 0, 1, 0 (mean 1/3)
# seconds per span: primed (60 + 40 + 50) / 7 errors; unprimed (100 + 80 + 120) / 6 marks
# With three outputs, a resample of one output alone has probability 1/27 (more than 2.5%), so each 95%
# percentile interval runs from the smallest to the largest per-output value.
EXPECTED = {
    "evaluator": "alpha",
    "recall": {"value": 0.5, "ci_low": 0.0, "ci_high": 2 / 3, "n": 6},
    "precision_confirmed": {"value": 4 / 6, "ci_low": 1 / 3, "ci_high": 1.0, "n": 6},
    "precision_found": {"value": 2 / 6, "ci_low": 0.0, "ci_high": 1.0, "n": 6},
    "accepted_unfound": {"value": 2 / 3, "ci_low": 0.5, "ci_high": 1.0, "n": 3},
    "errors_per_output": {"primed": 7 / 3, "unprimed": 2.0, "difference": 1 / 3, "ci_low": 0.0, "ci_high": 1.0,
                          "n_outputs": 3},
    "seconds_per_span": {"primed": 150 / 7, "unprimed": 50.0},
    "unlocated": 1,
    "simulated": False,
}


@pytest.fixture
def study(make_user):
    made = build_study([make_user("ann1"), make_user("ann2")])
    work_study(made)
    return made


def _approx(expected):
    if isinstance(expected, dict):
        return {k: _approx(v) for k, v in expected.items()}
    if isinstance(expected, float):
        return pytest.approx(expected, abs=1e-6)
    return expected


def test_priming_figures_match_the_hand_computed_fixture(study):
    rows = priming_dicts(priming_report(study.campaign))
    assert rows == [_approx(EXPECTED)]


def test_priming_api_gives_exactly_the_contract_fields(study, researcher):
    client = TestClient(api)
    answer = client.get(f"/analytics/campaigns/{study.campaign.pk}/priming", user=researcher)
    assert answer.status_code == 200
    body = answer.json()
    assert body == [_approx(EXPECTED)]
    assert list(body[0]) == ["evaluator", "recall", "precision_confirmed", "precision_found", "accepted_unfound",
                             "errors_per_output", "seconds_per_span", "unlocated", "simulated"]
    assert list(body[0]["recall"]) == ["value", "ci_low", "ci_high", "n"]
    assert list(body[0]["errors_per_output"]) == ["primed", "unprimed", "difference", "ci_low", "ci_high",
                                                  "n_outputs"]


def test_priming_api_is_for_researchers_only(study):
    client = TestClient(api)
    answer = client.get(f"/analytics/campaigns/{study.campaign.pk}/priming", user=study.annotators[0])
    assert answer.status_code == 403


def test_priming_command_json_and_csv(study, capsys):
    call_command("priming", "--campaign", str(study.campaign.pk))
    assert json.loads(capsys.readouterr().out) == [_approx(EXPECTED)]
    call_command("priming", "--campaign", str(study.campaign.pk), "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 1
    assert rows[0]["evaluator"] == "alpha"
    assert float(rows[0]["recall_value"]) == 0.5
    assert rows[0]["accepted_unfound_n"] == "3" and rows[0]["unlocated"] == "1"
    assert float(rows[0]["errors_per_output_difference"]) == pytest.approx(1 / 3)
    assert float(rows[0]["seconds_per_span_unprimed"]) == 50.0


def test_priming_paragraph_says_the_figures_in_words(study):
    text = priming_paragraph(priming_report(study.campaign))
    # shares printed as the tables print them (one decimal), on the page and in every report
    assert "overlap 50.0%" in text and "confirmed 66.7%" in text and "accepted 66.7%" in text
    assert "1 machine span without a location left out" in text
    assert "over 3 outputs seen both ways" in text


def test_priming_of_a_campaign_without_control_arm_is_empty(make_user):
    plain = build_study([make_user("ann1"), make_user("ann2")], control_arm=0.0)
    assert not plain.campaign.assignments.filter(in_control_arm=True).exists()
    assert priming_report(plain.campaign) == []


def test_priming_section_on_the_campaign_dashboard(study, researcher, client):
    client.force_login(researcher)
    html = client.get(f"/analytics/campaigns/{study.campaign.pk}/").content.decode()
    section = html.split('id="table-priming"')[1].split("</section>")[0]
    # recall 50.0 [0.0, 66.7] n = 6, marked as resting on fewer than 10 units; the paired difference of errors
    # per output 0.333 [0.000, 1.000] over 3 outputs: the cells the report prints (test_report_rounds_as_the_page)
    assert "<td>alpha</td><td>50.0<sup" in section and "<td>0.0</td><td>66.7</td><td>6</td>" in section
    assert "<td>0.333<sup" in section and "<td>0.000</td><td>1.000</td><td>3</td>" in section
    assert 'id="priming-text"' in section and "seen both ways" in section


def test_analytics_of_a_campaign_without_control_arm_are_unchanged(make_user, researcher, client):
    """Without a control arm nothing new appears: no priming section, the same tables, no assignment marks."""
    plain = build_study([make_user("ann1"), make_user("ann2")], control_arm=0.0)
    work_study(plain)
    assert set(plain.campaign.assignments.values_list("phase", flat=True)) == {"done"}
    client.force_login(researcher)
    html = client.get(f"/analytics/campaigns/{plain.campaign.pk}/").content.decode()
    assert "table-priming" not in html and "Priming" not in html
    body = TestClient(api).get(f"/analytics/campaigns/{plain.campaign.pk}", user=researcher).json()
    assert "priming" not in {t["key"] for t in body["tables"]}
    # Table 4 counts every verdict: 6 machine spans x 2 judges, all primed; Error on 4 spans each (8 of 12)
    accuracy = next(t for t in body["tables"] if t["key"] == "accuracy")
    assert [(r["run"], r["judged"], r["span_ok_pct"]) for r in accuracy["rows"]] == [
        ("alpha", 12, pytest.approx(100 * 8 / 12)), ("All evaluators", 12, pytest.approx(100 * 8 / 12))]
    assert TestClient(api).get(f"/analytics/campaigns/{plain.campaign.pk}/priming", user=researcher).json() == []


def _all_spans(record):
    return [s for bucket in ("errors", "rejected", "unresolved") for s in record[bucket]]


def test_labeled_set_records_each_errors_arm_and_what_was_found_unprimed(study):
    from analytics.exports.labeled import labeled_card, labeled_records

    records = {r["item_id"]: r for r in labeled_records(study.campaign)}
    machine = {(r, s["text"]): (s["arm"], s["found_unprimed"])
               for r, rec in records.items() for s in _all_spans(rec) if s["origin"] == "machine"}
    assert machine == {
        ("o1", "bbbb"): ("revealed", True), ("o1", "dddd"): ("revealed", False),
        ("o2", "ffff"): ("revealed", False), ("o2", "hhhh"): ("revealed", False),
        ("o2", "serves French food"): ("revealed", False), ("o3", "jjjj kkkk"): ("revealed", True),
    }
    added = {(r, s["text"]): s["arm"] for r, rec in records.items() for s in _all_spans(rec) if s["origin"] == "added"}
    # errors only the unprimed expert marked; eeee, kkkk and llll were found in both arms (the earliest span names
    # the group, so their arm is whichever expert's span came first)
    assert added[("o1", "bbbb")] == added[("o2", "gggg")] == added[("o3", "jjjj")] == "unprimed"
    assert {added[("o1", "eeee")], added[("o3", "kkkk")], added[("o3", "llll")]} <= {"unprimed", "primed"}
    card = labeled_card(study.campaign, fmt="jsonl")["control_arm"]
    assert (card["share"], card["outputs_in_arm"], card["unprimed_assignments"], card["revealed_assignments"]) == (
        1.0, 3, 3, 3)
    assert card["estimates"] == [_approx(EXPECTED)]
    assert "arXiv 2406.12419" in card["design"] and "seen both ways" in card["reading"]


def test_labeled_set_addition_after_the_reveal_is_revealed(make_user):
    from analytics.exports.labeled import labeled_records
    from annotator.services.added_spans import added_span_create
    from annotator.services.control_arm import assignment_reveal

    made = build_study([make_user("ann1"), make_user("ann2")])
    a = Assignment.objects.select_related("campaign", "item").get(campaign=made.campaign, item=made.items[2],
                                                                  in_control_arm=True)
    added_span_create(assignment=a, user=a.annotator, start=10, end=14)
    assignment_reveal(assignment=a, user=a.annotator)
    added_span_create(assignment=a, user=a.annotator, start=0, end=4)
    record = next(r for r in labeled_records(made.campaign) if r["item_id"] == "o3")
    arms = {s["text"]: s["arm"] for s in _all_spans(record) if s["origin"] == "added"}
    assert arms == {"llll": "unprimed", "jjjj": "revealed"}


def test_labeled_set_of_a_campaign_without_control_arm_is_all_primed(make_user):
    from analytics.exports.labeled import labeled_card, labeled_records

    plain = build_study([make_user("ann1"), make_user("ann2")], control_arm=0.0)
    work_study(plain)
    spans = [s for r in labeled_records(plain.campaign) for s in _all_spans(r)]
    assert spans and {(s["arm"], s["found_unprimed"]) for s in spans} == {("primed", None)}
    assert labeled_card(plain.campaign, fmt="jsonl")["control_arm"] is None


def test_dataset_export_card_holds_the_campaigns_control_arm(study):
    from analytics.exports.card import data_card
    from annotator.services.exporting import ExportFilter

    card = data_card(study.campaign.dataset, ExportFilter(), fmt="jsonl")
    (entry,) = card["campaigns"]
    assert entry["control_arm"]["share"] == 1.0 and entry["control_arm"]["estimates"] == [_approx(EXPECTED)]


def test_report_of_a_control_arm_campaign_prints_the_priming_figures(study):
    files = report_files(study.campaign, "markdown")
    table = files["tables/priming.md"].decode()
    recall = EXPECTED["recall"]
    assert f"| {100 * recall['value']:.1f} |" in table.replace("†", "")
    assert f"| {recall['n']} |" in table
    main = files["report.md"].decode()
    assert "## Priming: the control arm" in main
    assert "bounds the priming effect from above" in main


def test_report_of_a_campaign_without_control_arm_has_no_priming_section(make_user):
    campaign = build_study([make_user("ann1"), make_user("ann2")]).campaign
    campaign.control_arm = 0
    campaign.save(update_fields=["control_arm"])
    Assignment.objects.filter(campaign=campaign).update(in_control_arm=False, phase="judging", revealed_at=None)
    assert "tables/priming.md" not in report_files(campaign, "markdown")
