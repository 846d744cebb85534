"""The comparison engine's statistics against independent computations: scipy, hand-worked cases, the paper."""

from __future__ import annotations

import math
import socket

import numpy as np
import pytest
import sacrebleu
from scipy import stats

from comparison.engine import checklist
from comparison.engine.baselines import baseline_scores, output_length, overlap_score, semantic_similarities
from comparison.engine.errors import ComparisonError
from comparison.engine.gptscore import gptscore_context
from comparison.engine.metrics import Family, parse_metric, parse_metrics
from stats.metric_correlation import (
    Points,
    _average_ranks,
    _pairwise_kendall,
    coefficients,
    correlate,
    paired_bootstrap_p,
    sample_values,
    system_means,
    williams_p,
)


def _synthetic(seed: int = 3, n_inputs: int = 12, n_systems: int = 5):
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=n_systems)
    rows = []
    for g in range(n_inputs):
        for s in range(n_systems):
            human = round(float(np.clip(3 + quality[s] + rng.normal(scale=0.8), 1, 5)) * 3) / 3
            metric = round(human + rng.normal(scale=1.0), 1)
            rows.append((metric, human, f"in{g}", f"sys{s}"))
    m, h, g, s = zip(*rows, strict=True)
    return Points.build(m, h, g, s)


# ------------------------------------------------------------------------------------------ correlations


def test_coefficients_match_scipy_with_ties():
    x = [1, 2, 2, 3, 5, 5, 4, 1]
    y = [2, 1, 2, 4, 5, 4, 4, 2]
    got = coefficients(x, y)
    assert got["pearson"] == pytest.approx(stats.pearsonr(x, y).statistic)
    assert got["spearman"] == pytest.approx(stats.spearmanr(x, y).statistic)
    assert got["kendall"] == pytest.approx(stats.kendalltau(x, y).statistic)


def test_coefficients_are_none_for_constant_or_tiny_input():
    assert coefficients([1, 1, 1, 1], [1, 2, 3, 4])["pearson"] is None
    assert coefficients([1, 2], [1, 2]) == {"pearson": None, "spearman": None, "kendall": None}


def test_average_ranks_match_scipy_rankdata():
    x = np.random.default_rng(1).integers(0, 4, size=(40, 25)).astype(float)
    assert np.allclose(_average_ranks(x), stats.rankdata(x, axis=1))


def test_pairwise_kendall_matches_scipy_tau_b_with_ties():
    rng = np.random.default_rng(2)
    x, y = rng.integers(0, 3, size=(30, 9)).astype(float), rng.integers(0, 3, size=(30, 9)).astype(float)
    expected = [stats.kendalltau(a, b).statistic for a, b in zip(x, y, strict=True)]
    assert np.allclose(_pairwise_kendall(x, y), expected, equal_nan=True)


def test_sample_level_is_the_mean_of_per_input_correlations_hand_worked():
    # input A: metric rises with human (r = 1); input B: metric falls as human rises (r = -1); C has 2 outputs
    points = Points.build([1, 2, 3, 3, 2, 1, 5, 6], [1, 2, 3, 1, 2, 3, 1, 2], list("AAABBBCC"),
                          ["s1", "s2", "s3", "s1", "s2", "s3", "s1", "s2"])
    used, per = sample_values(points)
    assert len(used) == 2  # C has fewer than three outputs and is left out
    assert sorted(per["pearson"]) == pytest.approx([-1.0, 1.0])
    result = correlate(points, n_boot=0)
    assert result["sample"].values["pearson"] == pytest.approx(0.0)
    assert result["sample"].n == 2


def test_system_level_correlates_system_means():
    points = _synthetic()
    means_m, means_h = system_means(points)
    metric, human = np.asarray(points.metric), np.asarray(points.human)
    by_hand_m = [metric[points.systems == s].mean() for s in range(points.n_systems)]
    by_hand_h = [human[points.systems == s].mean() for s in range(points.n_systems)]
    assert np.allclose(means_m[0], by_hand_m) and np.allclose(means_h[0], by_hand_h)
    result = correlate(points, n_boot=0)["system"]
    assert result.values["spearman"] == pytest.approx(stats.spearmanr(by_hand_m, by_hand_h).statistic)
    assert result.n == 5


def test_dataset_bootstrap_replicates_match_a_plain_scipy_loop_on_the_same_resamples():
    points = _synthetic()
    n_boot, seed = 60, 11
    result = correlate(points, n_boot=n_boot, seed=seed)["dataset"]
    idx = np.random.default_rng(seed).integers(0, len(points.metric), size=(n_boot, len(points.metric)))
    for name, fn in (("pearson", stats.pearsonr), ("spearman", stats.spearmanr), ("kendall", stats.kendalltau)):
        expected = [fn(points.metric[i], points.human[i]).statistic for i in idx]
        assert np.allclose(result.replicates[name], expected), name
        low, high = np.percentile(expected, [2.5, 97.5])
        assert result.ci[name] == pytest.approx([low, high])
        assert low <= result.values[name] <= high


def test_bootstrap_is_seeded():
    points = _synthetic()
    assert correlate(points, n_boot=50, seed=5)["system"].ci == correlate(points, n_boot=50, seed=5)["system"].ci
    assert correlate(points, n_boot=50, seed=5)["system"].ci != correlate(points, n_boot=50, seed=6)["system"].ci


def test_no_systems_means_no_system_level():
    points = Points.build([1, 2, 3, 4], [1, 3, 2, 4], ["a", "b", "c", "d"], ["", "", "", ""])
    result = correlate(points, n_boot=20)
    assert result["system"].n == 0 and result["system"].values["pearson"] is None


def test_paired_bootstrap_p_is_the_share_of_resamples_where_a_is_not_better():
    a = np.array([0.5] * 8 + [0.1, 0.2])
    b = np.array([0.3] * 8 + [0.2, 0.2])
    assert paired_bootstrap_p(a, b) == pytest.approx(0.2)  # 0.1 <= 0.2 and 0.2 <= 0.2
    assert paired_bootstrap_p(a[:5], b[:5]) is None  # too few resamples to say anything


def test_williams_test_hand_worked():
    # r12 = .6, r13 = .4, r23 = .5, n = 50: K = 1 - .36 - .16 - .25 + 2*.6*.4*.5 = .47;
    # t = .2 * sqrt(49 * 1.5) / sqrt(2*.47*49/47 + (1.0**2/4) * .5**3) = 1.70506 with 47 df
    t = 0.2 * math.sqrt(49 * 1.5) / math.sqrt(2 * 0.47 * 49 / 47 + 0.25 * 0.125)
    assert t == pytest.approx(1.70506, abs=1e-4)
    assert williams_p(0.6, 0.4, 0.5, 50) == pytest.approx(stats.t.sf(1.70506, 47), abs=1e-5)
    assert williams_p(0.4, 0.6, 0.5, 50) > 0.9  # the other direction
    assert williams_p(0.5, 0.5, 0.5, 3) is None


# ------------------------------------------------------------------------------------------- checklist


def test_ranking_similarity_reproduces_the_papers_first_example():
    assert checklist.ranking_similarity("cdabe", "abcde") == pytest.approx(0.2)


def test_ranking_similarity_of_the_papers_second_example_is_one_third_with_unit_costs():
    # The paper reports 0.11 (a distance of 4); with unit costs cbed -> abcde takes 3 edits.
    assert checklist.ranking_similarity("cbed", "abcde") == pytest.approx(1 / 3)
    assert checklist.ranking_similarity(["a", "b"], ["b", "a"]) == 0.0  # the paper's a<b vs b<a: distance 2
    assert checklist.ranking_similarity(["x", "y", "z"], ["x", "y", "z"]) == 1.0


def test_ks_distance_hand_worked_and_scipy():
    assert checklist.ks_distance([1, 2, 3], [4, 5, 6]) == 1.0
    # ECDFs of {1,2,3,4} and {3,4,5,6} differ most at x = 2: 0.5 - 0
    assert checklist.ks_distance([1, 2, 3, 4], [3, 4, 5, 6]) == pytest.approx(0.5)
    assert checklist.ks_distance([], [1.0]) is None


def test_quality_levels_follow_the_paper_on_1_to_5_and_rescale_other_scales():
    assert checklist.quality_levels([1, 2, 3, 4, 5]) == ["low", "low", "moderate", "high", "high"]
    assert checklist.quality_levels([0.0, 0.5, 1.0]) == ["low", "moderate", "high"]
    # averaged 1-5 ratings: 2 2/3 rounds to 3 (moderate), 2 1/3 is low
    assert checklist.quality_levels([1, 7 / 3, 8 / 3, 5]) == ["low", "low", "moderate", "high"]


def test_aspect_level_ks_and_level_order():
    human = [1, 1, 3, 3, 5, 5]
    metric = [0.1, 0.2, 0.5, 0.6, 0.9, 0.8]
    panel = checklist.aspect_level(metric, human)
    assert panel["counts"] == {"low": 2, "moderate": 2, "high": 2}
    assert panel["ks"] == {"low-high": 1.0, "low-moderate": 1.0, "moderate-high": 1.0}
    assert panel["level_order"] == ["low", "moderate", "high"] and panel["level_ranking_similarity"] == 1.0
    swapped = checklist.aspect_level([0.9, 0.8, 0.5, 0.6, 0.1, 0.2], human)
    assert swapped["level_order"] == ["high", "moderate", "low"]
    assert swapped["level_ranking_similarity"] == pytest.approx((6 - 2 * 2) / 6)


def test_system_level_easy_and_hard_pairs():
    systems = ["A"] * 3 + ["B"] * 3 + ["C"] * 3
    human = [1, 1, 1, 3, 3, 3, 3.2, 3.2, 3.2]
    metric = [5, 6, 7, 1, 2, 3, 2, 3, 4]  # the metric ranks A best, humans worst
    panel = checklist.system_level(metric, human, systems)
    assert panel["human_ranking"] == ["A", "B", "C"] and panel["metric_ranking"] == ["B", "C", "A"]
    assert panel["easy"]["systems"] == ["A", "C"] and panel["hard"]["systems"] == ["B", "C"]
    assert panel["easy"]["ks_metric"] == pytest.approx(stats.ks_2samp([5, 6, 7], [2, 3, 4]).statistic)
    assert panel["easy"]["similarity"] == 0.0 and panel["hard"]["similarity"] == 1.0
    assert panel["pairwise_similarity_mean"] == pytest.approx(1 / 3)  # only B<C agrees
    assert panel["ranking_similarity"] == pytest.approx((6 - 2 * 2) / 6)  # ABC -> BCA: 2 edits
    assert checklist.system_level([1, 2], [1, 2], ["A", "A"]) is None


# -------------------------------------------------------------------------------------- metric names


def test_metric_names_parse_and_refuse():
    assert parse_metric("bleu@input").against_input and not parse_metric("bleu@input").needs_reference
    assert parse_metric("rougeL").needs_reference
    assert parse_metric("gptscore:opt-125m").model == "opt-125m"
    assert parse_metric("annotator:qwen2.5:7b").model == "qwen2.5:7b"
    assert parse_metric("distilled:m").run_mode == "distilled" and parse_metric("ensemble").family is Family.RUN
    assert parse_metric("wordllama").family is Family.SEMANTIC
    for bad in ("bleu2", "gptscore", "annotator:", "length@input"):
        with pytest.raises(ComparisonError):
            parse_metric(bad)
    with pytest.raises(ComparisonError, match="twice"):
        parse_metrics("length,length")


# ------------------------------------------------------------------------------------------- baselines


def test_baselines_hand_worked():
    assert output_length("a  b\nc") == 3.0
    assert overlap_score("bleu", "the cat sat on the mat", "the cat sat on the mat") == pytest.approx(100.0)
    expected = sacrebleu.sentence_bleu("the cat sat on a mat", ["the cat sat on the mat"]).score
    assert overlap_score("bleu", "the cat sat on a mat", "the cat sat on the mat") == pytest.approx(expected)
    # ROUGE-1: output "the cat" against "the cat sat": P = 1, R = 2/3, F = 0.8
    assert overlap_score("rouge1", "the cat", "the cat sat") == pytest.approx(0.8)
    # ROUGE-2: one shared bigram of one (output) and two (reference): P = 1, R = 1/2, F = 2/3
    assert overlap_score("rouge2", "the cat", "the cat sat") == pytest.approx(2 / 3)
    assert overlap_score("chrf", "abc def", "abc def") == pytest.approx(100.0)
    assert baseline_scores(parse_metric("length"), ["a b", "c"], ["", ""]) == [2.0, 1.0]


def test_wordllama_runs_offline(monkeypatch):
    def no_network(*args, **kwargs):
        raise OSError("network blocked by the test")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    same, related, unrelated = semantic_similarities(
        ["The cat sat on the mat.", "The cat sat on the mat.", "The cat sat on the mat."],
        ["The cat sat on the mat.", "A cat was sitting on a rug.", "Stock markets fell sharply in Tokyo."],
    )
    assert same == pytest.approx(1.0, abs=1e-4)
    assert related > unrelated


def test_gptscore_context_names_the_aspect_and_the_inputs():
    context = gptscore_context(task="Summarize news.", output_noun="summary", aspect="coherence",
                               definition="the summary reads as one whole", inputs={"Article": "Text <b>x</b>."},
                               output_header="Summary")
    assert "excellent in coherence (the summary reads as one whole)" in context
    assert "Article:\nText <b>x</b>.\n" in context and context.endswith("Summary:\n")
