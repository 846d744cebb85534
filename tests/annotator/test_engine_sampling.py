"""The designed sample: allocation, seeded draws, the stratified estimator against a simulation, the planner."""

from __future__ import annotations

import numpy as np
import pytest

from stats.sampling import (
    SMALL_CELL,
    SamplingError,
    Stratum,
    allocate,
    draw_stratified,
    judgments_needed,
    stratified_estimate,
    stratified_normal,
)


def test_allocate_total_is_proportional_and_exact():
    sizes = allocate({"a": 600, "b": 300, "c": 100}, total=50)
    assert sizes == {"a": 30, "b": 15, "c": 5}
    odd = allocate({"a": 7, "b": 2, "c": 1}, total=4)
    assert sum(odd.values()) == 4 and all(odd[h] >= 1 for h in odd)
    assert allocate({"a": 3, "b": 40}, per_stratum=5) == {"a": 3, "b": 5}
    with pytest.raises(SamplingError):
        allocate({"a": 3}, per_stratum=2, total=2)


def test_draw_stratified_is_seeded_order_free_and_respects_sizes():
    units = [(i, "A" if i % 3 else "B") for i in range(300)]
    first = draw_stratified(units, per_stratum=20, seed=7)
    again = draw_stratified(list(reversed(units)), per_stratum=20, seed=7)
    other = draw_stratified(units, per_stratum=20, seed=8)
    assert first == again and first != other
    assert len(first) == 40 and len(set(first)) == 40
    assert sum(1 for i in first if i % 3 == 0) == 20


def test_stratified_estimate_hand_computed():
    strata = [Stratum("x", 100, 20, 10), Stratum("y", 300, 20, 18)]
    est = stratified_estimate(strata)
    assert est.point == pytest.approx(0.25 * 0.5 + 0.75 * 0.9)
    var = 0.25**2 * 0.8 * (0.5 * 0.5 * 20 / 19) / 20 + 0.75**2 * (1 - 20 / 300) * (0.9 * 0.1 * 20 / 19) / 20
    assert est.se == pytest.approx(var**0.5)
    assert est.method == "normal" and est.low == pytest.approx(est.point - 1.959964 * est.se, abs=1e-5)


def test_stratified_estimate_whole_population_judged_has_no_width():
    est = stratified_estimate([Stratum("x", 30, 30, 12), Stratum("y", 20, 20, 5)])
    assert est.point == pytest.approx(17 / 50)
    assert est.low == pytest.approx(est.high)


def test_stratified_estimate_small_cells_use_the_bootstrap_and_unjudged_strata_are_left_out():
    est = stratified_estimate([Stratum("x", 500, SMALL_CELL - 5, 3), Stratum("y", 500, 40, 30),
                               Stratum("z", 100, 0, 0)])
    assert est.method == "bootstrap"
    assert est.covered == 1000 and est.population == 1100
    assert est.low < est.point < est.high


def test_stratified_interval_covers_truth_93_to_97_percent_and_is_unbiased():
    """Many seeded samples of a synthetic population with known precision: sampling without replacement
    within each stratum is a hypergeometric draw of the OK count, so a whole simulation is a few arrays."""
    rng = np.random.default_rng(20261124)
    population = np.array([1500, 700, 300, 120])
    ok = np.array([1230, 385, 90, 60])  # the known precision of each stratum
    truth = ok.sum() / population.sum()
    judged = np.array([60, 40, 30, 20])
    reps = 20000
    successes = np.stack([rng.hypergeometric(ok[h], population[h] - ok[h], judged[h], size=reps)
                          for h in range(len(population))], axis=1)
    point, se, low, high = stratified_normal(np.broadcast_to(population, successes.shape),
                                             np.broadcast_to(judged, successes.shape), successes)
    coverage = float(((low <= truth) & (truth <= high)).mean())
    print(f"coverage of the 95% interval over {reps} samples: {coverage:.4f} (target 0.93-0.97)")
    assert 0.93 <= coverage <= 0.97
    bias = point.mean() - truth
    assert abs(bias) <= 3 * point.std() / np.sqrt(reps)
    # The standard error the estimator reports matches the spread of its estimates.
    assert se.mean() == pytest.approx(point.std(), rel=0.05)


def test_bootstrap_interval_coverage_with_small_cells():
    """The bootstrap path (small cells) on the same kind of population; fewer samples, each resampled."""
    rng = np.random.default_rng(5)
    population = np.array([400, 200, 100])
    ok = np.array([300, 100, 40])
    truth = ok.sum() / population.sum()
    judged = np.array([30, 8, 6])
    hits = 0
    reps = 400
    for r in range(reps):
        k = [int(rng.hypergeometric(ok[h], population[h] - ok[h], judged[h])) for h in range(3)]
        est = stratified_estimate([Stratum(str(h), int(population[h]), int(judged[h]), k[h]) for h in range(3)],
                                  resamples=1000, seed=r)
        assert est.method == "bootstrap"
        hits += est.low <= truth <= est.high
    print(f"bootstrap coverage over {reps} samples: {hits / reps:.3f}")
    assert 0.88 <= hits / reps <= 0.99


def test_judgments_needed_shrinks_as_judgments_come_and_grows_with_precision():
    strata = [Stratum("x", 2000, 0, 0)]
    plan = judgments_needed(strata, half_width=0.05)
    # Worst case p = 0.5: n0 = 1.96^2 * 0.25 / 0.05^2 = 384.1; with the fpc, 384.1 / (1 + 384.1/2000) = 322.3.
    assert plan.needed == 323 and plan.more == 323
    judged = [Stratum("x", 2000, 100, 90)]
    better = judgments_needed(judged, half_width=0.05)
    assert better.needed < plan.needed and better.more == better.needed - 100
    assert judgments_needed(judged, half_width=0.02).needed > better.needed
    with pytest.raises(SamplingError):
        judgments_needed(strata, half_width=5)
