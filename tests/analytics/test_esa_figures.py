"""An ESA^AI campaign's figures worked through the services: scores, pre-fill outcomes and arms by hand, the API
and `manage.py esa_scores` giving the same JSON, and the report's ESA section (and no verdict-based priming)."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from ninja.testing import TestClient

from analytics.report.build import report_files
from analytics.selectors.esa import campaign_esa
from annotator.models import Assignment
from config.api import api
from errors import UserError
from quality.models import Qualification
from tests.esa_study import SCORES, build_esa_study, work_esa_study

pytestmark = pytest.mark.django_db

@pytest.fixture
def study(make_user):
    made = build_esa_study([make_user("esa-a"), make_user("esa-b")], name="ESA figures", control_arm=1.0)
    work_esa_study(made)
    return made


def test_campaign_figures_by_hand(study):
    result = campaign_esa(study.campaign, n_resamples=200)
    systems = {s["system"]: s for s in result["systems"]}
    assert [s["system"] for s in result["systems"]] == ["sysA", "sysB"]
    assert systems["sysA"]["score"] == pytest.approx(410 / 6) and systems["sysB"]["score"] == pytest.approx(35)
    assert systems["sysA"]["ratings"] == 6 and systems["sysA"]["segments"] == 3
    (pair,) = result["pairs"]
    assert (pair["a"], pair["b"], pair["segments"]) == ("sysA", "sysB", 3)
    assert pair["difference"] == pytest.approx(410 / 6 - 35)
    # pre-filled on ESA^AI outputs: bbbb, dddd, ffff ("eeee ffff" left out), llll, nnnn, pppp
    assert result["prefill"] == {"outputs": 6, "prefilled": 6, "kept": 3, "deleted": 1, "resized": 1,
                                 "regraded": 1, "added": 1, "major_from": 4}
    severities = {row["system"]: row for row in result["severities"]}
    # sysA: ESA bbbb Major; ESA^AI bbbb Major, hhhh Minor, nnnn Minor -> 2 minor, 2 major
    assert (severities["sysA"]["minor"], severities["sysA"]["major"]) == (2, 2)
    # sysB: ESA missing Minor; ESA^AI dddd Major, ffff gggg Major, pppp Major -> 1 minor (missing), 3 major
    assert (severities["sysB"]["minor"], severities["sysB"]["major"], severities["sysB"]["missing"]) == (1, 3, 1)
    arms = {a["arm"]: a for a in result["arms"]["arms"]}
    assert arms["esa"]["score"] == pytest.approx(280 / 6) and arms["esa_ai"]["score"] == pytest.approx(340 / 6)
    assert arms["esa"]["spans"] == 2 and arms["esa_ai"]["spans"] == 6
    assert arms["esa"]["seconds_per_span"] == pytest.approx(240 / 2)
    assert arms["esa_ai"]["seconds_per_span"] == pytest.approx(120 / 6)
    assert arms["esa"]["span_phase_seconds_per_span"] == pytest.approx(60 / 2)
    assert result["arms"]["score_difference"]["difference"] == pytest.approx(60 / 6)
    assert result["arms"]["score_difference"]["outputs"] == 6
    machine = result["arms"]["machine"]
    # 6 machine spans as pre-filled; ESA found bbbb only (1 of 6); ESA^AI kept 5 of 6 (llll deleted)
    assert machine == {"machine_spans": 6, "found_unprimed": pytest.approx(1 / 6), "kept_primed": pytest.approx(5 / 6)}
    agreement = result["agreement"]
    assert agreement["scores"]["n"] == 6 and agreement["scores"]["pearson"] is not None


def test_api_and_command_give_the_same_json(study, make_user):
    expected = json.loads(json.dumps(campaign_esa(study.campaign)))
    client = TestClient(api)
    answer = client.get(f"/analytics/campaigns/{study.campaign.pk}/esa", user=make_user("res", role="researcher"))
    assert answer.status_code == 200
    assert answer.json() == expected
    out = io.StringIO()
    call_command("esa_scores", "--campaign", str(study.campaign.pk), stdout=out)
    assert json.loads(out.getvalue()) == expected
    out = io.StringIO()
    call_command("esa_scores", "--campaign", str(study.campaign.pk), "--format", "csv", stdout=out)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert [r["system"] for r in rows] == ["sysA", "sysB"] and float(rows[1]["score"]) == 35
    refused = client.get(f"/analytics/campaigns/{study.campaign.pk}/esa?resamples=0",
                         user=make_user("res2", role="researcher"))
    assert refused.status_code == 422 and "resamples" in refused.json()["detail"]
    assert client.get(f"/analytics/campaigns/{study.campaign.pk}/esa",
                      user=study.annotators[0]).status_code == 403


def _flag(study, user) -> None:
    """A failed qualification is what flags an annotator of an ESA campaign (it has no decoys or planted errors)."""
    Qualification.objects.create(campaign=study.campaign, annotator=user, score=0.1, passed=False)


def _means_of(study, user) -> dict[str, float]:
    """`user`'s mean score per system, from the scores the study gave them (the ESA arm's or ESA^AI's)."""
    where = {it.pk: key for key, it in study.items.items()}
    given: dict[str, list[int]] = {}
    for a in Assignment.objects.filter(campaign=study.campaign, annotator=user):
        key = where[a.item_id]
        given.setdefault(key[0], []).append(SCORES[key][0 if a.in_control_arm else 1])
    return {system: sum(v) / len(v) for system, v in given.items()}


def test_flagged_annotators_are_left_out_as_asked_and_named(study, make_user):
    careful, flagged = study.annotators
    _flag(study, flagged)
    counted = campaign_esa(study.campaign, n_resamples=50)
    assert (counted["exclude_flagged"], counted["excluded"], counted["ratings"]) == (False, [], 12)
    left_out = campaign_esa(study.campaign, n_resamples=50, exclude_flagged=True)
    assert (left_out["exclude_flagged"], left_out["excluded"], left_out["ratings"]) == (True, ["esa-b"], 6)
    assert {s["system"]: s["score"] for s in left_out["systems"]} == pytest.approx(_means_of(study, careful))
    assert next(s for s in left_out["severities"] if s["system"] == "all")["ratings"] == 6
    assert left_out["agreement"]["pairs"] == []  # one rater left: nobody to agree with
    assert sum(a["ratings"] for a in left_out["arms"]["arms"]) == 6
    assert left_out["prefill"]["outputs"] == sum(1 for a in study.assignments(careful) if not a.in_control_arm)
    # the campaign's setting decides when nothing is asked
    study.campaign.exclude_flagged = True
    study.campaign.save(update_fields=["exclude_flagged"])
    assert campaign_esa(study.campaign, n_resamples=50) == left_out
    assert campaign_esa(study.campaign, n_resamples=50, exclude_flagged=False) == counted


def test_the_api_and_the_command_take_the_choice(study, make_user):
    _flag(study, study.annotators[1])
    pk = study.campaign.pk
    client, researcher = TestClient(api), make_user("res-x", role="researcher")
    for value, exclude in (("1", True), ("0", False), ("", None)):
        expected = json.loads(json.dumps(campaign_esa(study.campaign, n_resamples=30, exclude_flagged=exclude)))
        answer = client.get(f"/analytics/campaigns/{pk}/esa?resamples=30&exclude_flagged={value}", user=researcher)
        assert answer.status_code == 200 and answer.json() == expected, value
    assert answer.json()["excluded"] == []  # absent: the campaign's setting, which counts everyone
    refused = client.get(f"/analytics/campaigns/{pk}/esa?exclude_flagged=yes", user=researcher)
    assert refused.status_code == 422 and refused.json()["detail"].startswith("exclude_flagged:")
    for flag, excluded in (("--exclude-flagged", ["esa-b"]), ("--include-flagged", []), (None, [])):
        out = io.StringIO()
        call_command("esa_scores", "--campaign", str(pk), "--resamples", "30", *([flag] if flag else []), stdout=out)
        result = json.loads(out.getvalue())
        assert result["excluded"] == excluded and result["ratings"] == 12 - 6 * len(excluded), flag
    out, err = io.StringIO(), io.StringIO()
    call_command("esa_scores", "--campaign", str(pk), "--resamples", "30", "--format", "csv", "--exclude-flagged",
                 stdout=out, stderr=err)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert sum(int(r["ratings"]) for r in rows) == 6
    assert "exclude_flagged: true; excluded: esa-b" in err.getvalue()
    with pytest.raises(CommandError):
        call_command("esa_scores", "--campaign", str(pk), "--exclude-flagged", "--include-flagged",
                     stdout=io.StringIO(), stderr=io.StringIO())


def test_the_reports_esa_section_leaves_out_whom_the_report_leaves_out(study):
    _flag(study, study.annotators[1])
    left_out = report_files(study.campaign, "markdown", exclude_flagged=True)["report.md"].decode()
    section = left_out[left_out.index("## ESA"):]
    assert "6 scored ratings (the ratings of esa-b, flagged, left out)" in section
    counted = report_files(study.campaign, "markdown", exclude_flagged=False)["report.md"].decode()
    assert "12 scored ratings." in counted[counted.index("## ESA"):]


def test_other_protocols_are_refused_by_name(make_user):
    from tests.factories import build_campaign

    built = build_campaign([make_user("og")])
    answer = TestClient(api).get(f"/analytics/campaigns/{built.campaign.pk}/esa",
                                 user=make_user("res3", role="researcher"))
    assert answer.status_code == 422 and "opennlgauge" in answer.json()["detail"]
    with pytest.raises((CommandError, UserError), match="protocol"):
        call_command("esa_scores", "--campaign", str(built.campaign.pk), stdout=io.StringIO())


def test_the_report_has_the_esa_section_and_not_the_verdict_priming(study):
    files = report_files(study.campaign, "markdown")
    main = files["report.md"].decode()
    assert "## ESA" in main and "## Priming" not in main
    for table in ("esa_scores", "esa_ranking_pairs", "esa_severities", "esa_agreement", "esa_prefill", "esa_arms",
                  "esa_arm_differences"):
        assert f"tables/{table}.md" in files, table
    assert "figures/esa_scores.svg" in files
    scores = files["tables/esa_scores.md"].decode()
    assert "| sysA |" in scores and "68.3" in scores  # 410 / 6
    prefill = files["tables/esa_prefill.md"].decode()
    assert "| 6 | 6 | 3 | 1 | 1 | 1 | 1 |" in prefill


def test_the_scores_figure_draws_system_names_as_text():
    from analytics import plots
    from analytics.report.esa import scores_figure

    result = {"systems": [{"system": "$x^2$ & {y}", "score": 70.0, "ci_low": 60.0, "ci_high": 80.0,
                           "rank_range": [1, 2]},
                          {"system": "b_1", "score": 65.0, "ci_low": None, "ci_high": None, "rank_range": [1, 2]}]}
    figure = scores_figure(result)
    labels = [t.get_text() for t in figure.axes[0].get_xticklabels()]
    assert labels[0] == r"\$x^2\$ & {y} (1-2)"  # a "$" would have started mathtext
    assert plots.render(figure, "pdf").startswith(b"%PDF")
    assert scores_figure({"systems": []}) is None
