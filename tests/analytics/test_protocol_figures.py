"""A campaign's own figures for each protocol: `mqm_scores --campaign`, GET /api/analytics/campaigns/ID/mqm, and
the analytics page of an MQM and an ESA campaign showing their protocol's figures and none of OpeNLGauge's."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from ninja.testing import TestClient

from analytics.selectors.mqm import campaign_scores
from annotator.services.added_spans import added_span_create
from annotator.services.assignments import assignment_finish
from config.api import api
from corpus.protocols import mqm
from errors import UserError
from quality.models import Qualification
from tests.esa_study import build_esa_study, work_esa_study
from tests.mqm_study import build_mqm_study

pytestmark = pytest.mark.django_db
MAJOR, MINOR = mqm.SEVERITY_CODES["major"], mqm.SEVERITY_CODES["minor"]
OPENNLGAUGE_WORDS = ("figures appear with the first verdicts", "Table 4", "Span OK", "Evaluators ranked",
                     "No output of the control arm is finished yet", "Reference spans")


@pytest.fixture
def mqm_campaign(tmp_path, make_user):
    """mia and max rate all six outputs, zed only sysA's (he fails the qualification, so he is flagged).
    mia: Major Accuracy/Mistranslation on every sysB output. max: Minor Style/Awkward on every sysB output and
    Minor Fluency/Punctuation on sysA talk:1. zed: Major on every sysA output he rates.

    Everyone counted: sysA (0.1 + 3 x 5) / 9 rated pairs = 15.1 / 9, sysB (3 x 5 + 3 x 1) / 6 = 3.
    zed left out: sysA 0.1 / 6, sysB 3."""
    mia, max_, zed = make_user("mia"), make_user("max"), make_user("zed")
    made = build_mqm_study(tmp_path, [mia, max_, zed], per_item=3, name="MQM figures")
    for user in (mia, max_, zed):
        for a in made.assignments(user):
            system, place = a.item.system, a.item.external_id
            if user == zed and system == "sysB":
                continue  # zed leaves sysB unfinished
            if user == mia and system == "sysB":
                added_span_create(assignment=a, user=user, start=0, end=3, category="Accuracy/Mistranslation",
                                  severity=MAJOR)
            if user == max_ and system == "sysB":
                added_span_create(assignment=a, user=user, start=0, end=3, category="Style/Awkward", severity=MINOR)
            if user == max_ and system == "sysA" and place == "talk:1":
                dot = a.item.output.index(".")
                added_span_create(assignment=a, user=user, start=dot, end=dot + 1, category="Fluency/Punctuation",
                                  severity=MINOR)
            if user == zed:
                added_span_create(assignment=a, user=user, start=0, end=4, category="Accuracy/Mistranslation",
                                  severity=MAJOR)
            assignment_finish(assignment=a, user=user)
    Qualification.objects.create(campaign=made.campaign, annotator=zed, score=0.2, passed=False)
    return made


def _scores(result: dict) -> dict[str, tuple[float, int]]:
    return {row["system"]: (row["score"], row["segments"]) for row in result["systems"]}


def test_campaign_scores_by_hand_and_with_the_flagged_left_out(mqm_campaign):
    counted = campaign_scores(mqm_campaign.campaign, exclude_flagged=False, n_resamples=100)
    assert counted["exclude_flagged"] is False and counted["excluded"] == []
    assert [row["system"] for row in counted["systems"]] == ["sysA", "sysB"]  # lower is better
    assert _scores(counted)["sysA"][0] == pytest.approx(15.1 / 9)
    assert _scores(counted)["sysB"] == (pytest.approx(3.0), 3)  # distinct source segments
    assert {row["system"]: row["ratings"] for row in counted["systems"]}["sysB"] == 6  # (segment, rater) pairs
    left_out = campaign_scores(mqm_campaign.campaign, exclude_flagged=True, n_resamples=100)
    assert left_out["excluded"] == ["zed"]
    assert _scores(left_out)["sysA"][0] == pytest.approx(0.1 / 6)
    assert _scores(left_out)["sysB"][0] == pytest.approx(3.0)
    assert all(set(row) == {"system", "score", "ratings", "segments", "ci_low", "ci_high", "rank_range"}
               for row in left_out["systems"])


def test_the_campaigns_own_weights_score_it(tmp_path, make_user):
    ann = make_user("weighed")
    made = build_mqm_study(tmp_path, [ann], name="MQM weighed",
                           protocol_options={"weights": {"*": {"Major": 10, "Minor": 2, "Neutral": 0}}})
    for a in made.assignments(ann):
        if a.item.system == "sysB":
            added_span_create(assignment=a, user=ann, start=0, end=3, category="Style/Awkward", severity=MAJOR)
        assignment_finish(assignment=a, user=ann)
    assert _scores(campaign_scores(made.campaign, n_resamples=50))["sysB"][0] == pytest.approx(10.0)


def test_api_and_command_give_the_same_json(mqm_campaign, make_user):
    pk = mqm_campaign.campaign.pk
    expected = json.loads(json.dumps(campaign_scores(mqm_campaign.campaign)))
    client = TestClient(api)
    rita = make_user("rita-mqm", role="researcher")
    answer = client.get(f"/analytics/campaigns/{pk}/mqm", user=rita)
    assert answer.status_code == 200 and answer.json() == expected
    out = io.StringIO()
    call_command("mqm_scores", "--campaign", str(pk), stdout=out)
    assert json.loads(out.getvalue()) == expected
    out, err = io.StringIO(), io.StringIO()
    call_command("mqm_scores", "--campaign", str(pk), "--format", "csv", "--exclude-flagged", stdout=out, stderr=err)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert [r["system"] for r in rows] == ["sysA", "sysB"] and float(rows[1]["score"]) == 3.0
    assert "excluded: zed" in err.getvalue()
    left_out = client.get(f"/analytics/campaigns/{pk}/mqm?exclude_flagged=1", user=rita).json()
    assert left_out["excluded"] == ["zed"]
    assert left_out["systems"][0]["score"] == pytest.approx(0.1 / 6) != expected["systems"][0]["score"]
    # the dataset form still scores the imported raters
    out = io.StringIO()
    call_command("mqm_scores", "--dataset", mqm_campaign.dataset.name, "--source", "google", stdout=out)
    assert set(json.loads(out.getvalue())) == {"systems"}


def test_bad_campaign_requests_are_refused_naming_the_field(mqm_campaign, make_user):
    pk = mqm_campaign.campaign.pk
    client = TestClient(api)
    rita = make_user("rita-bad", role="researcher")
    for query, field in (("resamples=0", "resamples"), ("seed=-1", "seed"), ("exclude_flagged=yes", "exclude_flagged")):
        answer = client.get(f"/analytics/campaigns/{pk}/mqm?{query}", user=rita)
        assert answer.status_code == 422 and field in answer.json()["detail"], query
    assert client.get("/analytics/campaigns/999999/mqm", user=rita).status_code == 404
    assert client.get(f"/analytics/campaigns/{pk}/mqm", user=mqm_campaign.annotators[0]).status_code == 403
    for args, message in ((["--campaign", str(pk), "--source", "google"], "--source"),
                          (["--campaign", "999999"], "no campaign"),
                          (["--dataset", mqm_campaign.dataset.name, "--include-flagged"], "only with --campaign")):
        with pytest.raises(CommandError, match=message):
            call_command("mqm_scores", *args, stdout=io.StringIO(), stderr=io.StringIO())
    with pytest.raises(CommandError):  # one of --dataset and --campaign, not both
        call_command("mqm_scores", "--campaign", str(pk), "--dataset", "x", stdout=io.StringIO())


def test_a_campaign_without_mqm_scores_is_refused(make_user):
    esa = build_esa_study([make_user("e1"), make_user("e2")], name="ESA not MQM", control_arm=0.0)
    answer = TestClient(api).get(f"/analytics/campaigns/{esa.campaign.pk}/mqm",
                                 user=make_user("rita-esa", role="researcher"))
    assert answer.status_code == 422 and answer.json()["field"] == "campaign"
    with pytest.raises((CommandError, UserError), match="no MQM scores"):
        call_command("mqm_scores", "--campaign", str(esa.campaign.pk), stdout=io.StringIO())


def test_the_verdict_dashboard_of_an_mqm_or_esa_campaign_points_to_its_own_figures(mqm_campaign, make_user):
    rita = make_user("rita-dash", role="researcher")
    esa = build_esa_study([make_user("e3"), make_user("e4")], name="ESA dashboard", control_arm=0.0)
    client = TestClient(api)
    for campaign, own in ((mqm_campaign.campaign, "mqm"), (esa.campaign, "esa")):
        for path in (f"/analytics/campaigns/{campaign.pk}", f"/analytics/campaigns/{campaign.pk}/tables/table4"):
            answer = client.get(path, user=rita)
            assert answer.status_code == 422 and answer.json()["field"] == "campaign", path
            assert f"/api/analytics/campaigns/{campaign.pk}/{own}" in answer.json()["detail"]
        assert client.get(f"/analytics/campaigns/{campaign.pk}/{own}", user=rita).status_code == 200


def _page(client, user, campaign, query: str = "") -> str:
    client.force_login(user)
    answer = client.get(reverse("analytics_campaign", args=[campaign.pk]) + query)
    assert answer.status_code == 200
    return answer.content.decode()


def test_the_mqm_campaigns_page_shows_its_figures_and_none_of_opennlgauges(client, mqm_campaign, make_user):
    page = _page(client, make_user("rita-page", role="researcher"), mqm_campaign.campaign, "?exclude_flagged=1")
    section = page[page.index('id="figures-mqm"'):]
    assert "MQM scores by system" in section and "MQM errors by top-level category" in section
    assert "Agreement between raters" in section
    sys_a = next(line for line in section.split("<tr>") if "<td>sysA</td>" in line)
    assert "0.017" in sys_a  # 0.1 / 6 with zed left out, as the API says it
    assert f"/api/analytics/campaigns/{mqm_campaign.campaign.pk}/mqm?exclude_flagged=1" in page
    assert "8 of 18 assigned items finished" not in page and "15 of 18 assigned items finished" in page
    for words in OPENNLGAUGE_WORDS:
        assert words not in page, words


def test_the_esa_campaigns_page_shows_its_figures_and_arms(client, make_user):
    study = build_esa_study([make_user("pa"), make_user("pb")], name="ESA page", control_arm=1.0)
    work_esa_study(study)
    page = _page(client, make_user("rita-esa-page", role="researcher"), study.campaign)
    section = page[page.index('id="figures-esa"'):]
    assert "ESA scores by system" in section and "ESA (control arm) against ESA^AI" in section
    assert "ESA^AI: what became of the pre-filled spans" in section
    sys_b = next(line for line in section.split("<tr>") if "<td>sysB</td>" in line)
    assert "35.0" in sys_b  # sysB's mean ESA score, (30+50+40+40+20+30) / 6
    assert "<img" in section  # the scores chart
    for words in OPENNLGAUGE_WORDS:
        assert words not in page, words


def test_an_empty_mqm_campaigns_page_says_figures_come_with_finished_items(client, tmp_path, make_user):
    made = build_mqm_study(tmp_path, [make_user("idle")], name="MQM idle")
    page = _page(client, make_user("rita-idle", role="researcher"), made.campaign)
    assert "figures appear with the first finished item" in page
    assert "0 of 6 assigned items finished" in page
    assert "figures appear with the first verdicts" not in page
