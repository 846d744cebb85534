"""Means equal to within 1e-9 (relative) are ties in every rank: correlations and ranking similarity."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from comparison.engine.baselines import output_length
from comparison.engine.checklist import aspect_level, system_level
from stats.metric_correlation import Points, coefficients, correlate, resampled_coefficients, system_means
from stats.ties import snap_ties


def test_snap_ties_joins_float_noise_and_keeps_real_differences() -> None:
    noisy = 0.1 + 0.2 + 0.3  # 0.6000000000000001
    values = np.array([0.6, 2.0, noisy, 0.6000001, np.nan])
    snapped = snap_ties(values)
    assert snapped[0] == snapped[2] == 0.6
    assert snapped[3] == 0.6000001 and snapped[1] == 2.0 and np.isnan(snapped[4])
    rows = snap_ties(np.array([[1.0, 1.0 + 1e-12, 3.0], [5.0, 4.0, 5.0 * (1 + 1e-10)]]))
    assert rows[0, 0] == rows[0, 1] and rows[1, 0] == rows[1, 2] and rows[1, 1] == 4.0


def _noisy_tie_points() -> Points:
    # five systems, three inputs; a's and b's human scores are one mean reached by two roundings
    # (0.1 + 0.2 against 0.3), so their means differ only in the last bits
    noisy = 0.1 + 0.2  # 0.30000000000000004
    human = {"a": [0.3, 0.3, 0.3], "b": [noisy, noisy, noisy], "c": [0.5, 0.5, 0.5], "d": [0.9, 0.8, 0.7],
             "e": [0, 0, 0]}
    metric = {"a": [9, 9, 9], "b": [1, 1, 1], "c": [5, 5, 5], "d": [7, 7, 7], "e": [2, 2, 2]}
    systems = [s for s in human for _ in range(3)]
    groups = [i for _ in human for i in range(3)]
    return Points.build([v for s in human for v in metric[s]], [v for s in human for v in human[s]], groups, systems)


def test_system_level_rank_correlations_treat_noisy_means_as_ties() -> None:
    points = _noisy_tie_points()
    _, hx = system_means(points)
    assert hx[0][0] != hx[0][1] and abs(hx[0][0] - hx[0][1]) < 1e-15  # the noise is really there
    result = correlate(points, n_boot=0)["system"].values
    exact_human = [0.3, 0.3, 0.5, 0.8, 0.0]  # the same means, tied exactly
    metric_means = [9, 1, 5, 7, 2]
    assert result["spearman"] == pytest.approx(sps.spearmanr(metric_means, exact_human).statistic, abs=1e-12)
    assert result["kendall"] == pytest.approx(sps.kendalltau(metric_means, exact_human).statistic, abs=1e-12)
    assert result["spearman"] != pytest.approx(sps.spearmanr(metric_means, hx[0]).statistic, abs=1e-6)


def test_resampled_and_plain_coefficients_agree_on_noisy_ties() -> None:
    x = np.array([0.1 + 0.2, 0.3, 0.5, 0.2, 0.9])
    y = np.array([1.0, 2.0, 2.0, 0.5, 3.0])
    idx = np.arange(5)[None, :]
    plain = coefficients(x, y)
    resampled = resampled_coefficients(x, y, idx)
    for name in ("spearman", "kendall"):
        assert resampled[name][0] == pytest.approx(plain[name], abs=1e-6)
    assert plain["spearman"] == pytest.approx(sps.spearmanr([0.3, 0.3, 0.5, 0.2, 0.9], y).statistic)


def test_ranking_similarity_is_not_decided_by_float_noise() -> None:
    # humans tie a and b (noise only); the metric ties them too: the rankings must agree fully
    human = [0.1, 0.2, 0.3, 0.3, 0.2, 0.1, 1.0, 1.0, 1.0]
    metric = [0.3, 0.2, 0.1, 0.1, 0.2, 0.3, 5.0, 5.0, 5.0]
    systems = ["b", "b", "b", "a", "a", "a", "c", "c", "c"]
    result = system_level(metric, human, systems)
    assert result is not None
    assert result["human_ranking"] == result["metric_ranking"] == ["a", "b", "c"]
    assert result["ranking_similarity"] == 1.0


def test_hanna_complexity_system_spearman_of_length_is_tie_aware(meta_eval_dir: Path) -> None:
    records = json.loads((meta_eval_dir / "hanna.json").read_text(encoding="utf-8"))
    metric = [output_length(" ".join(r["outputs"].values())) for r in records]
    human = [r["score"]["complexity"] for r in records]
    points = Points.build(metric, human, [r["id"] for r in records], [r["system"] for r in records])
    mx, hx = system_means(points)
    assert sps.spearmanr(mx[0], hx[0]).statistic == pytest.approx(0.7426, abs=1e-4)  # ties broken by noise
    assert correlate(points, n_boot=0)["system"].values["spearman"] == pytest.approx(0.7123, abs=1e-4)


def test_quality_levels_whose_metric_means_differ_by_noise_keep_their_natural_order() -> None:
    # the metric gives "low" and "moderate" outputs the same mean, reached by two roundings
    metric = [0.1, 0.2, 0.3, 0.3, 0.2, 0.1, 0.9]
    human = [1, 1, 1, 3, 3, 3, 5]
    assert np.mean(metric[:3]) != np.mean(metric[3:6])
    assert aspect_level(metric, human)["level_order"] == ["low", "moderate", "high"]
