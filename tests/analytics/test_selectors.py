"""Analytics selectors on the hand-built study of conftest.py; the arithmetic is in the comments."""

from __future__ import annotations

import math

import numpy as np
import pytest

from analytics import selectors, tables
from analytics.selectors import Reference, Scope
from corpus.models import ErrorSpan
from stats.accuracy import SPAN_COLUMNS
from stats.bootstrap import bootstrap_ratio_cis_grouped

approx = pytest.approx


def _scope(study, **extra) -> Scope:
    return Scope(campaign_id=study.campaign.pk, **extra)


def test_accuracy_report_table4_per_run(study):
    report = selectors.accuracy_report(_scope(study), n_resamples=200)
    r1 = report.by_run[study.runs["ens-run"].pk].matrix
    # R1, nine complete judgments:
    #   correct: s1 a1, s1 a2, s3 a1 -> Error 3      partially: s2 a1 -> Error 1   incomplete: s3 a2 -> Error 1
    #   vague: s4 a1, s4 a2 -> No span 2            incorrect: s5 a1 -> Hallucination 1
    #   not_error: s2 a2 -> Not an error 1
    assert r1.counts["correct"] == {"error": 3, "no_span": 0, "not_error": 0, "hallucination": 0}
    assert r1.counts["vague"]["no_span"] == 2
    assert r1.counts["incorrect"]["hallucination"] == 1
    assert r1.counts["not_error"]["not_error"] == 1
    assert [r1.column_total(s) for s in SPAN_COLUMNS] == [5, 2, 1, 1]
    assert r1.total == 9
    # Span OK 5/9 = 55.6 %, Exp. correct 3/9 = 33.3 %
    assert r1.span_ok == approx(5 / 9) and r1.exp_correct == approx(3 / 9)
    r2 = report.by_run[study.runs["single-run"].pk].matrix
    # R2: s6 a1 (E, C), s6 a2 (E, I), s7 a1 (NE, NE), s7 a2 (NE, I): Span OK 2/4, Exp. correct 1/4
    assert r2.total == 4
    assert r2.counts["incorrect"] == {"error": 1, "no_span": 0, "not_error": 1, "hallucination": 0}
    assert (r2.span_ok, r2.exp_correct) == (0.5, 0.25)
    # the run without spans has no judgments at all
    assert study.runs["silent-run"].pk not in report.by_run
    # pooled: 13 judged, 7 Error (53.8 %), 4 Correct (30.8 %); the s8 judgment lacks a span verdict
    assert report.pooled.matrix.total == 13
    assert report.pooled.matrix.span_ok == approx(7 / 13)
    assert report.pooled.matrix.exp_correct == approx(4 / 13)
    assert report.incomplete == 1


def test_accuracy_report_per_annotator_and_pair(study):
    report = selectors.accuracy_report(_scope(study), n_resamples=0)
    ann1 = report.by_annotator[study.ann1.pk].matrix
    ann2 = report.by_annotator[study.ann2.pk].matrix
    # ann1: s1 E/C, s2 E/PC, s3 E/C, s4 NS/V, s5 H/I, s6 E/C, s7 NE/NE -> 7 judged, 4 Error, 3 Correct
    assert (ann1.total, ann1.column_total("error"), ann1.row_total("correct")) == (7, 4, 3)
    # ann2: s1 E/C, s2 NE/NE, s3 E/Inc, s4 NS/V, s6 E/I, s7 NE/I -> 6 judged, 3 Error, 1 Correct
    assert (ann2.total, ann2.column_total("error"), ann2.row_total("correct")) == (6, 3, 1)
    r1 = study.runs["ens-run"].pk
    # R1 x ann1: s1..s5 -> Span OK 3/5, Exp. correct 2/5; R1 x ann2: s1..s4 -> 2/4 and 1/4
    pair1 = report.by_run_annotator[(r1, study.ann1.pk)].matrix
    pair2 = report.by_run_annotator[(r1, study.ann2.pk)].matrix
    assert (pair1.span_ok, pair1.exp_correct) == (approx(3 / 5), approx(2 / 5))
    assert (pair2.span_ok, pair2.exp_correct) == (0.5, 0.25)
    assert report.annotators == {study.ann1.pk: "ann1", study.ann2.pk: "ann2"}


def test_accuracy_report_bootstrap_resamples_the_items(study):
    report = selectors.accuracy_report(_scope(study), n_resamples=500, seed=11)
    group = report.by_run[study.runs["ens-run"].pk]
    # R1's per-item vectors (judged, Error, Correct): i1 = s1 x2, s2 x2 -> (4, 3, 2); i2 = s3 x2, s4 x2 ->
    # (4, 2, 1); i3 = s5 -> (1, 0, 0). The report must bootstrap exactly these, in item order.
    expected = bootstrap_ratio_cis_grouped(
        np.array([[[4, 3, 2]], [[4, 2, 1]], [[1, 0, 0]]]), {"span_ok": (1, 0), "exp_correct": (2, 0)},
        n_resamples=500, seed=11,
    )[0]
    assert group.n_items == 3
    assert group.span_ok_ci == expected["span_ok"]
    assert group.exp_correct_ci == expected["exp_correct"]
    # the interval holds the estimate and lies within what resamples can give: all-i3 = 0, all-i1 = 3/4
    assert 0 <= group.span_ok_ci.low <= 5 / 9 <= group.span_ok_ci.high <= 0.75
    again = selectors.accuracy_report(_scope(study), n_resamples=500, seed=11)
    assert again.by_run[study.runs["ens-run"].pk].span_ok_ci == group.span_ok_ci


def test_accuracy_report_flags_and_rates(study):
    report = selectors.accuracy_report(_scope(study), n_resamples=0)
    r1 = report.by_run[study.runs["ens-run"].pk]
    # R1: too_strict (s2 a2) and implicit_span (s4 a1), each 1 of 9 judged = 11.1 %
    assert r1.flags == {
        "too_strict": 1, "not_aspect_related": 0, "repeated": 0, "hard_to_parse": 0, "implicit_span": 1,
    }
    assert r1.flag_rates()["too_strict"] == approx(1 / 9)
    r2 = report.by_run[study.runs["single-run"].pk]
    # R2: hard_to_parse (s6 a2), not_aspect_related (s7 a1), repeated (s7 a2), each 1 of 4 = 25 %
    assert r2.flag_rates() == {
        "too_strict": 0.0, "not_aspect_related": 0.25, "repeated": 0.25, "hard_to_parse": 0.25, "implicit_span": 0.0,
    }


def test_accuracy_report_filters_by_system_and_aspect(study):
    # only i3 is system sysB: R1's s5 (Hallucination, Incorrect) -> Span OK 0/1, Exp. correct 0/1
    report = selectors.accuracy_report(_scope(study, system="sysB"), n_resamples=0)
    assert list(report.by_run) == [study.runs["ens-run"].pk]
    assert report.pooled.matrix.total == 1 and report.pooled.matrix.span_ok == 0.0
    assert selectors.accuracy_report(_scope(study, aspect="fluency"), n_resamples=0).pooled.matrix.total == 0
    assert selectors.accuracy_report(_scope(study, aspect="accuracy"), n_resamples=0).pooled.matrix.total == 13


def test_agreement_report_alpha_and_pairwise(study):
    report = selectors.agreement_report(_scope(study))
    # Units = spans with >= 2 complete judgments: s1, s2, s3, s4, s6, s7 (s5 has one annotator, s8 is
    # incomplete). Span verdicts: s1 EE, s2 E/NE, s3 EE, s4 NS NS, s6 EE, s7 NE NE.
    #   o_EE = 6, o_E,NE = o_NE,E = 1, o_NE,NE = 2, o_NS,NS = 2; n = 12; n_E = 7, n_NE = 3, n_NS = 2
    #   D_o = 2/12;  D_e = (n^2 - sum n_c^2) / (n (n-1)) = (144 - 62) / 132 = 82/132
    #   alpha = 1 - (2/12) / (82/132) = 1 - 22/82 = 30/41 = 0.7317
    assert report.pooled.n_units == 6
    assert report.pooled.alpha_span == approx(30 / 41)
    # Explanations: s1 C C, s2 PC/NE, s3 C/Inc, s4 V V, s6 C/I, s7 NE/I
    #   counts C 4, PC 1, NE 2, Inc 1, V 2, I 2 (n = 12, sum n_c^2 = 30); agreeing pairs s1, s4 -> D_o = 8/12
    #   D_e = (144 - 30) / 132 = 114/132;  alpha = 1 - (8/12) / (114/132) = 1 - 264/342 = 13/57 = 0.2281
    assert report.pooled.alpha_explanation == approx(13 / 57)
    # pairwise: 5 of 6 pairs agree on the span verdict, 2 of 6 on the explanation
    assert report.pooled.observed_span == approx(5 / 6)
    assert report.pooled.observed_explanation == approx(2 / 6)
    assert len(report.pairs) == 1
    pair = report.pairs[0]
    assert {pair.annotator_a, pair.annotator_b} == {study.ann1.pk, study.ann2.pk}
    assert (pair.n, pair.span_agree, pair.explanation_agree) == (6, 5, 2)


def test_agreement_report_per_run(study):
    report = selectors.agreement_report(_scope(study))
    r1 = report.by_run[study.runs["ens-run"].pk]
    # R1 units s1 EE, s2 E/NE, s3 EE, s4 NS NS: n = 8, n_E = 5, n_NE = 1, n_NS = 2
    #   D_o = 2/8;  D_e = (64 - 30) / 56 = 34/56;  alpha = 1 - (1/4) (56/34) = 1 - 14/34 = 10/17
    assert r1.n_units == 4
    assert r1.alpha_span == approx(10 / 17)
    # R2 units s6 EE, s7 NE NE: perfect agreement
    assert report.by_run[study.runs["single-run"].pk].alpha_span == approx(1.0)


def test_agreement_report_single_annotator_scope_has_no_alpha(study):
    # i3 (sysB) was judged by ann1 only: no unit, no pair, alpha undefined
    report = selectors.agreement_report(_scope(study, system="sysB"))
    assert report.pooled.n_units == 0
    assert report.pooled.alpha_span is None and report.pooled.observed_span is None
    assert report.pairs == []


def test_calibration_report_per_run_and_pooled(study):
    per_run, pooled = selectors.calibration_report(_scope(study))
    r1 = per_run[study.runs["ens-run"].pk]
    # R1: s3 machine 2 -> human 3 (-1), s5 machine 5 -> human 4 (+1): mean 0, MAE 1, no exact hit, n = 2
    assert (r1.n, r1.mean_signed_difference, r1.mean_absolute_error, r1.exact_share) == (2, 0.0, 1.0, 0.0)
    assert r1.spearman is None
    r2 = per_run[study.runs["single-run"].pk]
    assert (r2.n, r2.mean_absolute_error, r2.exact_share) == (1, 0.0, 1.0)
    # pooled (2,3), (5,4), (2,2): MAE 2/3; Spearman: machine ranks [1.5, 3, 1.5], human [2, 3, 1];
    # dx = [-.5, 1, -.5], dy = [0, 1, -1]; sum dx dy = 1.5, sum dx^2 = 1.5, sum dy^2 = 2 -> 1.5 / sqrt(3)
    assert pooled.n == 3
    assert pooled.mean_signed_difference == approx(0.0)
    assert pooled.mean_absolute_error == approx(2 / 3)
    assert pooled.spearman == approx(1.5 / math.sqrt(3))
    assert pooled.confusion[1][2] == 1 and pooled.confusion[4][3] == 1 and pooled.confusion[1][1] == 1


def test_final_kinds_prefers_the_ensemble_annotation(study):
    kinds = selectors.final_kinds([r.pk for r in study.runs.values()])
    assert kinds == {
        study.runs["ens-run"].pk: "ensemble", study.runs["single-run"].pk: "annotator",
        study.runs["silent-run"].pk: "annotator",
    }


def _overlap(study, reference: Reference):
    scope = _scope(study)
    rows = selectors.overlap_report(runs=selectors.runs_in_scope(scope), reference=reference, scope=scope)
    by_label = {study.runs[name].pk: name for name in study.runs}
    return {by_label[r.run_id]: r for r in rows}


def test_overlap_report_against_gold(study):
    rows = _overlap(study, Reference(kind="gold"))
    r1 = rows["ens-run"]
    # Items i1, i2, i3 (i4 has gold but no run answered it; the annotator-kind span (40,45) is not final).
    # R1 predicted i1 (0,9) (10,20); i2 (5,10) + one without offsets; i3 (0,4) -> 5 predictions
    # gold i1 (0,9) (10,18) (25,28); i2 (5,10); i3 none -> 4 reference spans
    assert (r1.n_items, r1.unlocated) == (3, 1)
    # exact: (0,9), (5,10) -> P 2/5, R 2/4, F1 4/9
    assert (r1.exact.matched, r1.exact.n_predicted, r1.exact.n_reference) == (2, 5, 4)
    assert r1.exact.f1 == approx(4 / 9)
    # overlap: + (10,20)~(10,18) -> P 3/5, R 3/4, F1 6/9; (25,28) missed
    assert (r1.overlap.precision, r1.overlap.recall, r1.overlap.f1) == (0.6, 0.75, approx(2 / 3))
    assert r1.overlap.missed == 1
    # characters: i1 predicted 9 + 10 = 19, gold 9 + 8 + 3 = 20, both 9 + 8 = 17; i2 5 / 5 / 5; i3 4 / 0 / 0
    # -> both 22, predicted 28, gold 25: P 22/28, R 22/25, F1 44/53
    assert (r1.chars.matched, r1.chars.n_predicted, r1.chars.n_reference) == (22, 28, 25)
    assert r1.chars.f1 == approx(44 / 53)
    r2 = rows["single-run"]
    # R2 i1 (0,9) (30,35); i2 (20,30); i3 none: exact = overlap = 1 match, P 1/3, R 1/4, F1 2/7
    assert (r2.overlap.matched, r2.overlap.n_predicted, r2.overlap.n_reference) == (1, 3, 4)
    assert r2.exact.f1 == approx(2 / 7)
    # characters: i1 predicted 14, both 9; i2 predicted 10, both 0 -> P 9/24, R 9/25, F1 18/49
    assert r2.chars.f1 == approx(18 / 49)
    r3 = rows["silent-run"]
    # no spans at all: precision undefined, recall 0 of 4, F1 0, all 4 gold errors missed
    assert r3.overlap.precision is None
    assert (r3.overlap.recall, r3.overlap.f1, r3.overlap.missed) == (0.0, 0.0, 4)
    assert r3.chars.recall == 0.0


def test_overlap_with_gold_follows_the_experts_picked_occurrence(study):
    """s2 (10,20) on i1: both judges pick another place for it; the overlap counts it there, a tie moves nothing."""
    from annotator.models import SpanJudgment

    judgments = SpanJudgment.objects.filter(span=study.spans["s2"])
    assert judgments.count() == 2
    judgments.update(picked_start=25, picked_end=28)  # the gold's third error on i1
    r1 = _overlap(study, Reference(kind="gold"))["ens-run"]
    # exact now also matches (25,28): P 3/5, R 3/4 (was 2/5, 2/4); the machine's own offsets stay in the record
    assert (r1.exact.matched, r1.exact.n_predicted, r1.exact.n_reference) == (3, 5, 4)
    assert ErrorSpan.objects.get(pk=study.spans["s2"].pk).start == 10
    first = judgments.order_by("pk").first()
    SpanJudgment.objects.filter(pk=first.pk).update(picked_start=None, picked_end=None, picked_none=True)
    tied = _overlap(study, Reference(kind="gold"))["ens-run"]
    assert (tied.exact.matched, tied.unlocated) == (2, 1)  # one says "not in the output", one (25,28): no move
    from annotator.models import Adjudication

    decided = Adjudication.objects.create(campaign=study.campaign, span=study.spans["s2"], occurrence="25-28")
    settled = _overlap(study, Reference(kind="gold"))["ens-run"]
    assert settled.exact.matched == 3  # the reviewer's decision settles the tie
    decided.delete()
    judgments.update(picked_start=None, picked_end=None, picked_none=True)
    gone = _overlap(study, Reference(kind="gold"))["ens-run"]
    assert (gone.exact.matched, gone.unlocated) == (2, 2)  # both say it is not in the output: it matches nothing


def test_alignment_report_counts_ambiguous_spans_per_evaluator(study):
    ErrorSpan.objects.filter(pk__in=[study.spans["s2"].pk, study.spans["s7"].pk]).update(ambiguous=True)
    ErrorSpan.objects.filter(pk=study.spans["s3"].pk).update(match="fuzzy")
    scope = _scope(study)
    rows = {r.run_id: r for r in selectors.alignment_report(runs=selectors.runs_in_scope(scope), scope=scope)}
    r1, r2, r3 = (rows[study.runs[name].pk] for name in ("ens-run", "single-run", "silent-run"))
    # R1's final spans: s1 s2 s3 s4 s5 (the annotator-kind span is not final); s4 has no offsets
    assert (r1.spans, r1.ambiguous) == (5, 1)
    assert r1.by_match == {"exact": 3, "normalized": 0, "fuzzy": 1, "none": 1}
    assert r1.ambiguous_share == approx(1 / 4)
    assert (r2.spans, r2.ambiguous, r2.ambiguous_share) == (3, 1, approx(1 / 3))
    assert (r3.spans, r3.ambiguous, r3.ambiguous_share) == (0, 0, None)
    table = next(t for t in tables.dashboard_tables(selectors.dashboard_data(scope, n_resamples=10))
                 if t.key == "alignment")
    by_run = {row["run"]: row for row in table.rows}
    assert by_run["ens-run"]["ambiguous"] == 1 and by_run["ens-run"]["ambiguous_pct"] == approx(25.0)


def test_overlap_report_against_the_campaign_humans(study):
    rows = _overlap(study, Reference(kind="human", campaign_id=study.campaign.pk))
    # Reference = added (25,28) on i1 + machine spans a strict majority called Error: s1 (0,9), s3 (5,10),
    # s6 (0,9) = s1's offsets, counted once. s2 (1 of 2) is not a majority. -> i1 {(0,9), (25,28)}, i2 {(5,10)}
    r1 = rows["ens-run"]
    # R1: matches (0,9), (5,10): P 2/5, R 2/3, F1 4/8
    assert (r1.exact.matched, r1.exact.n_predicted, r1.exact.n_reference) == (2, 5, 3)
    assert r1.exact.f1 == approx(0.5)
    r2 = rows["single-run"]
    # R2: (0,9) only: P = R = F1 = 1/3
    assert (r2.exact.precision, r2.exact.recall) == (approx(1 / 3), approx(1 / 3))
    added_only = _overlap(study, Reference(kind="human", campaign_id=study.campaign.pk, include_confirmed=False))
    # only (25,28): nobody found it
    assert added_only["ens-run"].overlap.n_reference == 1
    assert added_only["ens-run"].overlap.matched == 0


def test_score_report_correlations(study):
    scope = _scope(study)
    rows = {r.run_id: r for r in selectors.score_report(runs=selectors.runs_in_scope(scope), scope=scope)}
    r1 = rows[study.runs["ens-run"].pk]
    # R1 (ensemble; the annotator-kind score 1 on i1 is ignored): machine [4, 2, 3], human [5, 1, 4]
    # dx = [1, -1, 0], dy = [5/3, -7/3, 2/3]: sum dx dy = 4, sum dx^2 = 2, sum dy^2 = 78/9 -> r = 4 / sqrt(156/9)
    assert r1.kind == "ensemble" and r1.human_key == "accuracy"
    assert r1.correlation.n == 3
    assert r1.correlation.pearson == approx(4 / math.sqrt(156 / 9))
    assert r1.correlation.spearman == approx(1.0) and r1.correlation.kendall == approx(1.0)
    r2 = rows[study.runs["single-run"].pk]
    # R2 (single model): machine [3, 3, 2] (a tie), human [5, 1, 4]
    #   Pearson: dx = [1/3, 1/3, -2/3], sum dx dy = 5/9 - 7/9 - 4/9 = -2/3, sum dx^2 = 6/9 -> -6 / sqrt(468)
    #   Spearman: ranks [2.5, 2.5, 1] vs [3, 1, 2]: sum dx dy = .5 - .5 + 0 = 0 -> 0
    #   Kendall tau-b: (i1,i2) tie in x, (i1,i3) concordant, (i2,i3) discordant -> 0
    assert r2.correlation.pearson == approx(-6 / math.sqrt(468))
    assert r2.correlation.spearman == approx(0.0, abs=1e-12)
    assert r2.correlation.kendall == approx(0.0, abs=1e-12)
    assert rows[study.runs["silent-run"].pk].correlation.n == 0


def test_dashboard_data_defaults_to_the_gold_reference(study):
    data = selectors.dashboard_data(_scope(study), n_resamples=50)
    assert data.references[0] == ("gold:gold", "gold (gold)")
    assert data.reference == Reference(kind="gold", source="gold")
    assert [r.neutral_label for r in data.runs] == ["Evaluator A", "Evaluator B", "Evaluator C"]
    assert len(data.overlap) == 3


def test_each_campaign_counts_its_own_judgments(study):
    """A second study of the same spans changes neither the first campaign's numbers nor the units and pairs of
    agreement at dataset level: one expert judging a span in two campaigns is not two annotators agreeing."""
    from annotator.models import Assignment, Campaign, CampaignRun, SpanJudgment

    before = selectors.accuracy_report(_scope(study), n_resamples=0)
    dataset_before = selectors.agreement_report(Scope(dataset_id=study.dataset.pk))
    second = Campaign.objects.create(name="second study", dataset=study.dataset, status="open")
    CampaignRun.objects.create(campaign=second, run=study.runs["ens-run"], label="Evaluator A")
    work = Assignment.objects.create(campaign=second, item=study.items["i1"], annotator=study.ann1, order=1)
    SpanJudgment.objects.create(span=study.spans["s1"], annotator=study.ann1, assignment=work,
                                span_verdict="not_error", explanation_verdict="not_error")

    after = selectors.accuracy_report(_scope(study), n_resamples=0)
    assert after.pooled.matrix.counts == before.pooled.matrix.counts
    own = selectors.accuracy_report(Scope(campaign_id=second.pk), n_resamples=0)
    assert own.pooled.matrix.total == 1 and own.pooled.matrix.counts["not_error"]["not_error"] == 1

    dataset_after = selectors.agreement_report(Scope(dataset_id=study.dataset.pk))
    assert dataset_after.pooled.n_units == dataset_before.pooled.n_units
    assert dataset_after.pooled.alpha_span == approx(dataset_before.pooled.alpha_span)
    assert [(p.annotator_a, p.annotator_b, p.n) for p in dataset_after.pairs] == [
        (p.annotator_a, p.annotator_b, p.n) for p in dataset_before.pairs
    ]


@pytest.mark.django_db(transaction=True)
def test_dashboard_numbers_are_the_same_computed_side_by_side(study):
    """Outside a transaction the report groups run in two threads on two connections; inside one, in turn.
    Both give the same numbers (the study's rows are committed here, so the second connection sees them)."""
    from django.db import connection, transaction

    assert not connection.in_atomic_block
    parallel = selectors.dashboard_data(_scope(study), n_resamples=200, seed=5)
    with transaction.atomic():
        in_turn = selectors.dashboard_data(_scope(study), n_resamples=200, seed=5)
    assert parallel.accuracy.pooled.matrix.counts == in_turn.accuracy.pooled.matrix.counts
    assert parallel.accuracy.pooled.span_ok_ci == in_turn.accuracy.pooled.span_ok_ci
    assert parallel.agreement.pooled == in_turn.agreement.pooled
    assert parallel.agreement.pairs == in_turn.agreement.pairs
    assert parallel.overlap == in_turn.overlap and len(parallel.overlap) == 3
    assert parallel.scores == in_turn.scores
    assert parallel.calibration_pooled == in_turn.calibration_pooled
