"""Ensemble confidence per span and its calibration against experts, exact against a hand-computed fixture."""

from __future__ import annotations

import json
import math
import re

import pytest
from django.test import Client

from analytics.report.build import report_files
from analytics.selectors.confidence import campaign_confidence
from corpus.models import AnnotationKind, ParseStatus
from evaluation.engine.confidence import ADDED, KEPT, NO_SUPERVISOR, Mark, span_confidence
from evaluation.models import Evaluator, SpanConfidence
from evaluation.runs.writes import SUPERVISOR_UNUSABLE
from evaluation.services.confidence import confidence_store
from stats.confidence import calibration
from stats.errors import StatsError
from tests import factories as make

OUT_1 = "Alpha scored 30 points. Beta had 12 rebounds. Gamma missed 5 shots. Delta won."
OUT_2 = "Echo made 7 steals. Fox had 9 blocks. Golf played 40 minutes."
Z = 1.959963984540054


def wilson_by_hand(k: int, n: int) -> tuple[float, float]:
    """The Wilson score interval written out (not scipy's)."""
    p = k / n
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z / (1 + Z * Z / n) * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


# --- the engine -----------------------------------------------------------------------------------------------


def test_span_confidence_counts_overlapping_models_and_agreement():
    machine = Mark(13, 22, "30 points", severity=4, category="NUMBER")
    answers = {
        "m1": [Mark(0, 5, "Alpha"), Mark(13, 22, "30 points", severity=4, category="NUMBER")],
        "m2": [Mark(20, 29, "ts. Beta", severity=3, category="NAME")],  # two characters in common
        "m3": [Mark(6, 13, "scored ", severity=4)],  # ends where the span starts: no overlap
        "m4": [Mark(16, 22, "points", severity=4), Mark(13, 16, "30 ", severity=1)],  # its larger overlap counts
    }
    found = span_confidence(machine, answers, supervisor=KEPT)
    assert (found.k, found.n, found.flagged_by, found.supervisor) == (3, 4, ("m1", "m2", "m4"), KEPT)
    assert found.severity_agreement == pytest.approx(2 / 3)
    assert found.category_agreement == pytest.approx(1 / 2)  # m4 gave no category
    nobody = span_confidence(Mark(0, 5, "Alpha"), {"m2": answers["m2"]}, supervisor=KEPT)
    assert (nobody.k, nobody.supervisor, nobody.severity_agreement) == (0, ADDED, None)
    # locations not in the text match by their normalized text; errors without any location by explanation
    quoted = span_confidence(Mark(None, None, '"Serves French food."'),
                             {"a": [Mark(None, None, "serves french food")], "b": [Mark(3, 9, "French")]},
                             supervisor=NO_SUPERVISOR)
    assert (quoted.k, quoted.n) == (1, 2)
    omitted = span_confidence(Mark(None, None, "", explanation="The score is missing."),
                              {"a": [Mark(None, None, "", explanation="the score is missing")]},
                              supervisor=NO_SUPERVISOR)
    assert omitted.k == 1


def test_calibration_levels_wilson_and_ece_by_hand():
    result = calibration([(3, 3, True), (3, 3, True), (3, 3, False), (1, 3, False), (0, 3, False)])
    assert [(lv.k, lv.n, lv.spans, lv.confirmed) for lv in result.levels] == [(0, 3, 1, 0), (1, 3, 1, 0),
                                                                               (3, 3, 3, 2)]
    top = result.levels[-1]
    assert top.share == pytest.approx(2 / 3)
    assert (top.ci_low, top.ci_high) == pytest.approx(wilson_by_hand(2, 3), abs=1e-9)
    # (1/5)|0 - 0| + (1/5)|1/3 - 0| + (3/5)|1 - 2/3|
    assert result.ece == pytest.approx(1 / 15 + 1 / 5)
    assert calibration([]).ece is None
    with pytest.raises(StatsError):
        calibration([(4, 3, True)])


# --- the campaign ---------------------------------------------------------------------------------------------


@pytest.fixture
def ensemble(db):
    """One ensemble run (models m1, m2, m3) on two outputs, and a single-model run on the first.

    Output 1, all three models usable: S1 '30 points' flagged by m1, m2, m3; S2 '12 rebounds' by m1, m2 (m2 only
    '12 reb'; m3's 'Beta had ' ends where it starts); S3 '5 shots' by m1; S4 'Delta won' by nobody (the
    supervisor added it). Output 2, m3's answer unparseable (n = 2) and the supervisor's too (fallback merge):
    T1 '7 steals' and T2 '9 blocks' by m1 and m2, T3 '40 minutes' by m1."""
    data = make.dataset("Confidence data")
    item1, item2 = make.item(data, "c1", OUT_1), make.item(data, "c2", OUT_2)
    run = make.run(data, "ens-run", evaluator_kind=Evaluator.Kind.ENSEMBLE)
    single = make.run(data, "single-run", evaluator_kind=Evaluator.Kind.SINGLE)

    def model(item, name, marks, **fields):
        a = make.annotation(item, run, kind=AnnotationKind.ANNOTATOR, model=name, **fields)
        for i, (text, extra) in enumerate(marks):
            make.span_at(a, i, text, **extra)

    model(item1, "m1", [("30 points", {"severity": 4, "category": "NUMBER"}), ("12 rebounds", {}),
                        ("5 shots", {})], parse_status=ParseStatus.OK)
    model(item1, "m2", [("30 points", {"severity": 3, "category": "NAME"}), ("12 reb", {})],
          parse_status=ParseStatus.OK)
    model(item1, "m3", [("30 points", {"severity": 4}), ("Beta had ", {})], parse_status=ParseStatus.PARTIAL)
    model(item2, "m1", [("7 steals", {}), ("9 blocks", {}), ("40 minutes", {})], parse_status=ParseStatus.OK)
    model(item2, "m2", [("7 steals", {}), ("9 blocks", {})], parse_status=ParseStatus.OK)
    model(item2, "m3", [("Echo", {})], parse_status=ParseStatus.FAILED)
    make.annotation(item1, run, kind=AnnotationKind.SUPERVISOR, model="sup")
    make.annotation(item2, run, kind=AnnotationKind.SUPERVISOR, model="sup", parse_status=ParseStatus.FAILED)
    merged1 = make.annotation(item1, run, kind=AnnotationKind.ENSEMBLE, model="sup")
    merged2 = make.annotation(item2, run, kind=AnnotationKind.ENSEMBLE, model="",
                              parse_problems=[SUPERVISOR_UNUSABLE])
    spans = {
        "S1": make.span_at(merged1, 0, "30 points", severity=4, category="NUMBER"),
        "S2": make.span_at(merged1, 1, "12 rebounds"),
        "S3": make.span_at(merged1, 2, "5 shots"),
        "S4": make.span_at(merged1, 3, "Delta won"),
        "T1": make.span_at(merged2, 0, "7 steals", category="NUMBER"),
        "T2": make.span_at(merged2, 1, "9 blocks"),
        "T3": make.span_at(merged2, 2, "40 minutes"),
    }
    lone = make.annotation(item1, single, kind=AnnotationKind.ANNOTATOR, model="solo")
    spans["U1"] = make.span_at(lone, 0, "Gamma missed")
    return data, run, single, spans, (item1, item2)


def test_confidence_store_writes_each_span_once(ensemble):
    _, run, single, spans, _ = ensemble
    assert confidence_store(run_ids=[run.pk, single.pk]) == 8
    assert confidence_store(run_ids=[run.pk, single.pk]) == 0
    got = {name: SpanConfidence.objects.get(span=s) for name, s in spans.items()}
    assert {name: (c.k, c.n, c.supervisor) for name, c in got.items()} == {
        "S1": (3, 3, "kept"), "S2": (2, 3, "kept"), "S3": (1, 3, "kept"), "S4": (0, 3, "added"),
        "T1": (2, 2, "fallback"), "T2": (2, 2, "fallback"), "T3": (1, 2, "fallback"), "U1": (1, 1, "none"),
    }
    assert got["S1"].flagged_by == ["m1", "m2", "m3"]
    assert got["S1"].severity_agreement == pytest.approx(2 / 3)  # m1 4, m2 3, m3 4
    assert got["S1"].category_agreement == pytest.approx(1 / 2)  # m1 NUMBER, m2 NAME, m3 none
    assert got["S2"].severity_agreement is None  # the span has no severity
    # the per-model spans are inputs to the merge, never rows of their own
    assert SpanConfidence.objects.count() == 8


def test_confidence_api_is_exact_against_the_hand_computed_table(ensemble, researcher):
    data, run, single, spans, items = ensemble
    judges = [make.user("jo"), make.user("kim")]
    campaign = make.campaign("Confidence study", data, [run, single], judges)
    a = [make.assignment(campaign, judges[0], item, n) for n, item in enumerate(items, start=1)]
    b = make.assignment(campaign, judges[1], items[0], 1)
    verdicts = {"S1": "error", "S2": "error", "S3": "not_error", "S4": "not_error",
                "T1": "error", "T2": "not_error", "T3": "error"}
    for name, verdict in verdicts.items():
        make.judgment(spans[name], a[0] if name.startswith("S") else a[1], verdict, "correct")
    make.judgment(spans["U1"], a[0], "error", "correct")
    make.judgment(spans["U1"], b, "not_error", "not_error")  # a 1-1 tie: unresolved, left out
    client = Client()
    client.force_login(researcher)
    body = client.get(f"/api/analytics/campaigns/{campaign.pk}/confidence").json()
    rows = {e["evaluator"]: e for e in body["evaluators"]}
    ens = rows[run.label]
    expected = [(1, 2, 1, 1), (2, 2, 2, 1), (0, 3, 1, 0), (1, 3, 1, 0), (2, 3, 1, 1), (3, 3, 1, 1)]
    assert [(lv["k"], lv["n"], lv["spans"], lv["confirmed"]) for lv in ens["levels"]] == expected
    for lv in ens["levels"]:
        assert set(lv) == {"k", "n", "spans", "confirmed", "share", "ci_low", "ci_high"}
        assert lv["share"] == pytest.approx(lv["confirmed"] / lv["spans"])
        assert (lv["ci_low"], lv["ci_high"]) == pytest.approx(wilson_by_hand(lv["confirmed"], lv["spans"]), abs=1e-9)
    # (1/7)|1/2 - 1| + (2/7)|1 - 1/2| + (1/7)|0 - 0| + (1/7)|1/3 - 0| + (1/7)|2/3 - 1| + (1/7)|1 - 1| = 13/42
    assert ens["ece"] == pytest.approx(13 / 42)
    assert ens["spans"] == 7
    assert ens["supervisor"] == {"added": 1, "fallback": 3, "kept": 3}
    assert ens["predictor"] is None  # 7 labelled spans are too few to fit and check a predictor
    numbers = next(c for c in ens["by_category"] if c["category"] == "NUMBER")
    assert [(lv["k"], lv["n"], lv["confirmed"]) for lv in numbers["levels"]] == [(2, 2, 1), (3, 3, 1)]
    assert numbers["ece"] == pytest.approx(0.0)
    assert rows[single.label]["levels"] == [] and rows[single.label]["ece"] is None
    # the page shows the table and the plot; the report has the section
    page = client.get(f"/analytics/campaigns/{campaign.pk}/").content.decode()
    assert "Confidence calibration" in page and "confidence calibration chart" in page
    assert "30.95" in page  # the ECE, 13/42, in points
    report = report_files(campaign, "markdown")
    assert "figures/confidence.svg" in report and b"Confidence calibration" in report["report.md"]


def test_confidence_counts_only_spans_with_a_consensus_verdict(ensemble):
    _, run, _, spans, items = ensemble
    judge = make.user("lee")
    campaign = make.campaign("Only some", ensemble[0], [run], [judge])
    a = make.assignment(campaign, judge, items[0], 1)
    make.judgment(spans["S1"], a, "error", "correct")
    make.judgment(spans["S2"], a, "", "")  # opened, never decided: no label
    rows = campaign_confidence(campaign)
    assert [(lv.k, lv.n, lv.spans) for lv in rows[0].calibration.levels] == [(3, 3, 1)]


def test_confidence_table_on_a_rotowire_summary_is_exact(rotowire_file, researcher):
    """A RotoWire summary with its gold errors: gold error j is flagged by the first 3 - (j mod 3) of three
    models, three words the gold does not mark by the first model alone; the scripted expert follows the gold."""
    row = json.loads(rotowire_file.read_text(encoding="utf-8").splitlines()[0])
    output = row["outputs"]["Summary"]
    gold = sorted((s["start"], s["end"]) for s in row["spans"])
    data = make.dataset("RotoWire confidence", input_headers=["Data"], output_header="Summary")
    item = make.item(data, row["id"], output, inputs={"Data": row["inputs"]["Data"]})
    run = make.run(data, "rotowire-ensemble")
    free = [m.span() for m in re.finditer(r"\b[A-Z][a-z]+\b", output)
            if not any(m.start() < e and s < m.end() for s, e in gold)][:3]
    marks = [(s, e, 3 - j % 3) for j, (s, e) in enumerate(gold)] + [(s, e, 1) for s, e in free]
    for m, name in enumerate(("m1", "m2", "m3")):
        own = make.annotation(item, run, kind=AnnotationKind.ANNOTATOR, model=name)
        for position, (s, e, _) in enumerate(x for x in marks if m < x[2]):
            make.span(own, position, s, e, text=output[s:e])
    merged = make.annotation(item, run, kind=AnnotationKind.ENSEMBLE, model="sup")
    make.annotation(item, run, kind=AnnotationKind.SUPERVISOR, model="sup")
    judge = make.user("rw-judge")
    campaign = make.campaign("RotoWire calibration", data, [run], [judge])
    assignment = make.assignment(campaign, judge, item, 1)
    for position, (s, e, _) in enumerate(marks):
        span = make.span(merged, position, s, e, text=output[s:e])
        real = (s, e) in gold
        make.judgment(span, assignment, "error" if real else "not_error", "correct" if real else "not_error")
    client = Client()
    client.force_login(researcher)
    levels = client.get(f"/api/analytics/campaigns/{campaign.pk}/confidence").json()["evaluators"][0]["levels"]
    n_gold = len(gold)
    by_k = {k: sum(1 for j in range(n_gold) if 3 - j % 3 == k) for k in (1, 2, 3)}
    expected = [(1, 3, by_k[1] + 3, by_k[1]), (2, 3, by_k[2], by_k[2]), (3, 3, by_k[3], by_k[3])]
    assert [(lv["k"], lv["n"], lv["spans"], lv["confirmed"]) for lv in levels] == expected
    spans = n_gold + 3
    ece = (by_k[1] + 3) / spans * abs(1 / 3 - by_k[1] / (by_k[1] + 3)) + by_k[2] / spans * (1 - 2 / 3)
    body = client.get(f"/api/analytics/campaigns/{campaign.pk}/confidence").json()["evaluators"][0]
    assert body["ece"] == pytest.approx(ece)


def test_confidence_api_checks_the_cross_fitted_predictor(researcher):
    """30 spans: the 15 all three models flagged are errors, the 15 one model flagged are not; the predictor's
    out-of-fold predictions fall on the right side of one half, and its bins account for every labelled span."""
    words = [f"word{i:02d}" for i in range(30)]
    output = " ".join(words)
    data = make.dataset("Predictor check", input_headers=["Data"], output_header="Summary")
    item = make.item(data, "p1", output, inputs={"Data": "x"})
    run = make.run(data, "predictor-ensemble")
    places = [(output.index(w), output.index(w) + len(w)) for w in words]
    real = [i % 2 == 0 for i in range(30)]
    for m, name in enumerate(("m1", "m2", "m3")):
        own = make.annotation(item, run, kind=AnnotationKind.ANNOTATOR, model=name)
        for position, (s, e) in enumerate(p for p, r in zip(places, real, strict=True) if r or m == 0):
            make.span(own, position, s, e, text=output[s:e])
    merged = make.annotation(item, run, kind=AnnotationKind.ENSEMBLE, model="sup")
    make.annotation(item, run, kind=AnnotationKind.SUPERVISOR, model="sup")
    judge = make.user("predictor-judge")
    campaign = make.campaign("Predictor calibration", data, [run], [judge])
    assignment = make.assignment(campaign, judge, item, 1)
    for position, ((s, e), r) in enumerate(zip(places, real, strict=True)):
        span = make.span(merged, position, s, e, text=output[s:e])
        make.judgment(span, assignment, "error" if r else "not_error", "correct" if r else "not_error")
    client = Client()
    client.force_login(researcher)
    body = client.get(f"/api/analytics/campaigns/{campaign.pk}/confidence").json()["evaluators"][0]
    predictor = body["predictor"]
    assert predictor["spans"] == 30 and sum(b["spans"] for b in predictor["bins"]) == 30
    assert {b["share"] for b in predictor["bins"] if b["mean_prediction"] >= 0.5} == {1.0}
    assert {b["share"] for b in predictor["bins"] if b["mean_prediction"] < 0.5} == {0.0}
    ece = sum(b["spans"] * abs(b["mean_prediction"] - b["share"]) for b in predictor["bins"]) / 30
    assert predictor["ece"] == pytest.approx(ece) and predictor["ece"] < 0.5
    page = client.get(f"/analytics/campaigns/{campaign.pk}/").content.decode()
    assert "Predictor ECE (points)" in page and f"{100 * predictor['ece']:.2f}" in page
