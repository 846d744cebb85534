"""A small hand-built campaign whose every analytics number is worked out in tests/analytics/test_selectors.py."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from accounts.models import User
from annotator.models import Campaign
from corpus.models import Annotation, Dataset, ErrorSpan, Item
from evaluation.models import EvaluatorRun
from tests import factories as make


@dataclass
class Study:
    dataset: Dataset
    campaign: Campaign
    items: dict[str, Item]
    runs: dict[str, EvaluatorRun]
    spans: dict[str, ErrorSpan]
    ann1: User
    ann2: User


# Every span of the study has the same placeholder text and explanation; only offsets and severities count.
SPAN = {"text": "x", "explanation": "because"}


@pytest.fixture
def study(db) -> Study:
    """Three runs on four items, two annotators.

    Runs (final annotation kind):
      R1 "ens-run"    ensemble: i1 s1 (0,9) sev 3, s2 (10,20) sev 4; i2 s3 (5,10) sev 2, s4 no offsets sev 1;
                      i3 s5 (0,4) sev 5. Also an annotator-kind answer on i1 (score 1, span (40,45)) that
                      is not the run's final annotation and must be ignored.
      R2 "single-run" single model (kind annotator): i1 s6 (0,9) sev 2, s8 (30,35) sev 1; i2 s7 (20,30) sev 3;
                      i3 no spans.
      R3 "silent-run" single model: i1, i2, i3 with no spans at all.
    Assignments: i1 and i2 to both annotators, i3 to ann1 only (an item judged by one annotator).
    Judgments (span verdict, explanation verdict, flags, corrected severity):
      s1 ann1 (error, correct)                ann2 (error, correct)
      s2 ann1 (error, partially_correct)      ann2 (not_error, not_error) too_strict
      s3 ann1 (error, correct) sev->3         ann2 (error, incomplete)
      s4 ann1 (no_span, vague) implicit_span  ann2 (no_span, vague)
      s5 ann1 (hallucination, incorrect) sev->4
      s6 ann1 (error, correct) sev->2         ann2 (error, incorrect) hard_to_parse
      s7 ann1 (not_error, not_error) not_aspect_related   ann2 (not_error, incorrect) repeated
      s8 ann1 ("", vague): incomplete, left out everywhere
    Gold (source "gold", aspect blank): i1 (0,9) (10,18) (25,28); i2 (5,10); i3 none; i4 (0,5).
    Human-added in the campaign: i1 (25,28) by ann1.
    Human scores "accuracy": i1 5, i2 1, i3 4, i4 2. Scores: R1 4, 2, 3; R2 3, 3, 2; R3 none.
    """
    dataset = make.dataset("tiny-study", score_aspects=["accuracy"])
    texts = {
        "i1": ("The Hawks beat the Nets 102-98 on Monday night at home.", "sysA", 5),
        "i2": ("Trae Young scored 30 points and 9 assists today.", "sysA", 1),
        "i3": ("Atlanta led by ten points at the half.", "sysB", 4),
        "i4": ("Brooklyn lost again on the road.", "sysB", 2),
    }
    items = {
        key: make.item(dataset, key, output, position=n, system=system, human_scores={"accuracy": score})
        for n, (key, (output, system, score)) in enumerate(texts.items())
    }
    runs = {
        name: make.run(dataset, name, evaluator_kind=kind)
        for name, kind in (("ens-run", "ensemble"), ("single-run", "single"), ("silent-run", "single"))
    }

    def annotation(run: str, item: str, kind: str, score: float | None, model: str = "") -> Annotation:
        return make.annotation(items[item], runs[run], kind=kind, model=model, score=score)

    def span(annotation: Annotation, position: int, start: int | None, end: int | None, severity: int) -> ErrorSpan:
        return make.span(annotation, position, start, end, severity=severity, **SPAN)

    spans: dict[str, ErrorSpan] = {}
    a = annotation("ens-run", "i1", "ensemble", 4.0)
    spans["s1"] = span(a, 0, 0, 9, 3)
    spans["s2"] = span(a, 1, 10, 20, 4)
    a = annotation("ens-run", "i2", "ensemble", 2.0)
    spans["s3"] = span(a, 0, 5, 10, 2)
    spans["s4"] = span(a, 1, None, None, 1)
    a = annotation("ens-run", "i3", "ensemble", 3.0)
    spans["s5"] = span(a, 0, 0, 4, 5)
    ignored = annotation("ens-run", "i1", "annotator", 1.0, model="m1")
    span(ignored, 0, 40, 45, 2)
    a = annotation("single-run", "i1", "annotator", 3.0, model="m2")
    spans["s6"] = span(a, 0, 0, 9, 2)
    spans["s8"] = span(a, 1, 30, 35, 1)
    a = annotation("single-run", "i2", "annotator", 3.0, model="m2")
    spans["s7"] = span(a, 0, 20, 30, 3)
    annotation("single-run", "i3", "annotator", 2.0, model="m2")
    for item in ("i1", "i2", "i3"):
        annotation("silent-run", item, "annotator", None, model="m3")

    gold = {"i1": [(0, 9), (10, 18), (25, 28)], "i2": [(5, 10)], "i3": [], "i4": [(0, 5)]}
    for key, offsets in gold.items():
        make.gold(items[key], offsets, severity=3, **SPAN)

    ann1, ann2 = make.user("ann1"), make.user("ann2")
    campaign = make.campaign("tiny-campaign", dataset, list(runs.values()), [ann1, ann2], per_item=2)
    assignments = {
        (user.pk, item): make.assignment(campaign, user, items[item], order, status="done", phase="done")
        for order, (user, item) in enumerate(
            [(ann1, "i1"), (ann1, "i2"), (ann1, "i3"), (ann2, "i1"), (ann2, "i2")], start=1
        )
    }
    make.added_error(campaign, ann1, items["i1"], 25, 28, severity=3, **SPAN)

    item_of = {"s1": "i1", "s2": "i1", "s3": "i2", "s4": "i2", "s5": "i3", "s6": "i1", "s7": "i2", "s8": "i1"}
    judgments = [
        ("s1", ann1, "error", "correct", {}, None), ("s1", ann2, "error", "correct", {}, None),
        ("s2", ann1, "error", "partially_correct", {}, None),
        ("s2", ann2, "not_error", "not_error", {"too_strict": True}, None),
        ("s3", ann1, "error", "correct", {}, 3), ("s3", ann2, "error", "incomplete", {}, None),
        ("s4", ann1, "no_span", "vague", {"implicit_span": True}, None), ("s4", ann2, "no_span", "vague", {}, None),
        ("s5", ann1, "hallucination", "incorrect", {}, 4),
        ("s6", ann1, "error", "correct", {}, 2), ("s6", ann2, "error", "incorrect", {"hard_to_parse": True}, None),
        ("s7", ann1, "not_error", "not_error", {"not_aspect_related": True}, None),
        ("s7", ann2, "not_error", "incorrect", {"repeated": True}, None),
        ("s8", ann1, "", "vague", {}, None),
    ]
    for name, user, span_verdict, exp_verdict, flags, severity in judgments:
        make.judgment(spans[name], assignments[(user.pk, item_of[name])], span_verdict, exp_verdict,
                      corrected_severity=severity, **flags)
    return Study(dataset=dataset, campaign=campaign, items=items, runs=runs, spans=spans, ann1=ann1, ann2=ann2)
