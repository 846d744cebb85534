"""The report's design paragraph, the campaign page and the data card speak the campaign's protocol: an MQM
campaign without runs has no machine spans, no priming and no verdict telemetry in any of them."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from analytics.report.build import report_files
from analytics.selectors.design import design_paragraph, study_design
from annotator.services.added_spans import added_span_create
from annotator.services.assignments import assignment_finish
from corpus.protocols import mqm
from tests.esa_study import build_esa_study, work_esa_study
from tests.mqm_study import build_mqm_study

pytestmark = pytest.mark.django_db
VERDICT_WORDS = ("saw the machine's spans from the start", "Every machine span", "Judges every machine span",
                 "Categories for added errors", "Median ms to a verdict", "Confirmed by fifth", "Decoys rejected",
                 "Rubber-stamp rule", "Table 4", "Span verdicts right")


@pytest.fixture
def mqm_campaign(tmp_path, make_user):
    """Two annotators finish all six outputs; sysB gets a Major error from each."""
    made = build_mqm_study(tmp_path, [make_user("ma"), make_user("mb")], per_item=2, name="MQM words")
    for user in made.annotators:
        for a in made.assignments(user):
            if a.item.system == "sysB":
                added_span_create(assignment=a, user=user, start=0, end=3, category="Accuracy/Mistranslation",
                                  severity=mqm.SEVERITY_CODES["major"])
            assignment_finish(assignment=a, user=user)
    return made


def test_the_mqm_design_paragraph_has_no_machine_spans(mqm_campaign):
    text = design_paragraph(study_design(mqm_campaign.campaign))
    assert "6 outputs went to the judges: 6 outputs had 2 judges" in text
    assert "In all 12 finished judgments the judges marked every error themselves." in text
    for words in VERDICT_WORDS:
        assert words not in text, words


def test_the_mqm_report_tells_the_mqm_story(mqm_campaign):
    md = report_files(mqm_campaign.campaign, "markdown")["report.md"].decode()
    assert "MQM scores by system" in md and "Protocol: MQM" in md
    for words in (*VERDICT_WORDS, "figures appear with the first verdicts", "Consensus rule"):
        assert words not in md, words


def test_the_esa_design_paragraph_says_pre_filled_and_the_arm_without_it(make_user):
    study = build_esa_study([make_user("wa"), make_user("wb")], name="ESA words", control_arm=1.0)
    work_esa_study(study)
    text = design_paragraph(study_design(study.campaign))
    assert ("Of 12 finished judgments, 6 opened pre-filled with the machine's spans (primed) and 6 opened empty "
            "and marked every error themselves (unprimed, the control arm); 6 outputs were judged both ways.") in text
    assert "only pre-filled the screens" in text
    assert "saw the machine's spans from the start" not in text and "Every machine span" not in text


def test_the_mqm_campaign_page_speaks_mqm(client, mqm_campaign, make_user):
    client.force_login(make_user("rita-words", role="researcher"))
    page = client.get(reverse("campaign_entry", args=[mqm_campaign.campaign.pk])).content.decode()
    assert "Its annotators mark the errors themselves." in page
    assert "Planted found" in page and "Active time" in page  # the checks MQM has stay
    for words in VERDICT_WORDS:
        assert words not in page, words


def test_the_mqm_data_card_has_its_figures_and_no_verdict_counts(client, mqm_campaign, make_user):
    client.force_login(make_user("rita-card", role="researcher"))
    card = json.loads(client.get(reverse("labeled_card", args=[mqm_campaign.campaign.pk])).content)
    assert card["campaign"]["protocol"] == "mqm"
    assert "machine_spans" not in card["counts"] and "rejected" not in card["counts"]
    assert "alpha_explanation" not in card["agreement_before_adjudication"]
    scores = {row["system"]: row["score"] for row in card["figures"]["mqm_scores"]}
    assert scores == {"sysA": 0.0, "sysB": 5.0}
    annotator = card["quality_control"]["annotators"][0]
    assert "planted" in annotator and "median_ms_to_verdict" not in annotator and "decoys" not in annotator
    assert "rubber_stamp" not in card["quality_control"]["rules"]


def test_the_esa_data_card_carries_its_figures_and_arms(client, make_user):
    study = build_esa_study([make_user("ca"), make_user("cb")], name="ESA card", control_arm=1.0)
    work_esa_study(study)
    client.force_login(make_user("rita-esa-card", role="researcher"))
    card = json.loads(client.get(reverse("labeled_card", args=[study.campaign.pk])).content)
    assert card["campaign"]["protocol"] == "esa"
    scores = {row["system"]: row["score"] for row in card["figures"]["esa_scores"]}
    assert scores["sysB"] == pytest.approx(35.0)
    arms = {row["arm"]: row["score"] for row in card["figures"]["esa_arms"]}
    assert list(arms.values()) == [pytest.approx(280 / 6), pytest.approx(340 / 6)]  # ESA, then ESA^AI
    assert "machine_spans" not in card["counts"]
