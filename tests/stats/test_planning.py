"""The study planner: time arithmetic, predicted interval widths against the analytic ratio variance, power."""

from __future__ import annotations

import math

import numpy as np
import pytest

from stats.planning import PlanningError, ci_width, expert_hours, power, study_plan, times


def _pilot(accuracy: float, outputs: int = 40, spans: int = 5, judges: int = 1, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [np.array([[rng.binomial(spans, accuracy), spans] for _ in range(judges)], dtype=float)
            for _ in range(outputs)]


def _analytic_width(rows: list[np.ndarray], n: int) -> float:
    """2 x 1.96 x the linearized standard error of a ratio of sums over n outputs drawn like the pilot's."""
    ok = np.array([r[:, 0].sum() for r in rows])
    judged = np.array([r[:, 1].sum() for r in rows])
    ratio = ok.sum() / judged.sum()
    residual = ok - ratio * judged
    return 2 * 1.959964 * math.sqrt(residual.var() / n) / judged.mean()


def test_times_and_hours_are_plain_arithmetic():
    t = times(900.0, outputs=10, spans=30)
    assert (t.seconds_per_span, t.seconds_per_output) == (30.0, 90.0)
    assert expert_hours(90.0, 200, 3) == pytest.approx(90 * 200 * 3 / 3600)
    assert times(0.0, 0, 0).seconds_per_span is None and expert_hours(None, 5, 1) is None


def test_ci_width_matches_the_ratio_variance_and_shrinks_with_outputs():
    rows = _pilot(0.7, outputs=60)
    for n in (50, 400):
        assert ci_width(rows, outputs=n, judges=1, simulations=4000) == pytest.approx(_analytic_width(rows, n),
                                                                                    rel=0.08)
    # one judge per pilot output: more judges repeat that judge and buy no width
    assert ci_width(rows, outputs=100, judges=3, simulations=4000) == pytest.approx(
        ci_width(rows, outputs=100, judges=1, simulations=4000), rel=0.08)
    # two judges who disagree per output: four judges per output narrow the interval
    noisy = _pilot(0.6, outputs=60, judges=2, seed=3)
    assert ci_width(noisy, outputs=100, judges=4) < ci_width(noisy, outputs=100, judges=1)


def _paired_pilot(outputs: int = 60, spans: int = 5, seed: int = 0) -> list[list[np.ndarray]]:
    """Two evaluators judged on the same outputs; an output's difficulty moves both."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(outputs):
        p = rng.uniform(0.4, 0.95)
        rows.append([np.array([[rng.binomial(spans, p), spans]], dtype=float) for _ in range(2)])
    return rows


def test_power_grows_with_the_difference_and_the_size():
    rows = _paired_pilot()
    kw = {"judges": 1, "simulations": 200, "resamples": 500}
    small = power(rows, outputs=40, difference=0.02, **kw)
    large = power(rows, outputs=40, difference=0.3, **kw)
    medium = power(rows, outputs=40, difference=0.1, **kw)
    assert small < 0.2 and large > 0.95
    assert small < medium < power(rows, outputs=400, difference=0.1, **kw)
    # paired by output as strongly as the pilot's two evaluators are: a pilot whose evaluators always agree on
    # an output's share has more power at the same size
    twins = [[cells[0], cells[0]] for cells in rows]
    assert power(twins, outputs=40, difference=0.1, **kw) > medium
    with pytest.raises(PlanningError, match="difference"):
        power(rows, outputs=40, judges=1, difference=0.9)
    with pytest.raises(PlanningError, match="outputs"):
        power(rows, outputs=0, judges=1, difference=0.1)


def test_study_plan_names_each_evaluator_and_skips_the_unjudged():
    def by_output(rows: list[np.ndarray]) -> dict[int, np.ndarray]:
        return dict(enumerate(rows))

    plan = study_plan({"A": by_output(_pilot(0.8)), "B": by_output(_pilot(0.5, seed=1)), "C": {}},
                      active_seconds=1200.0,
                      pilot_outputs=40, pilot_spans=400, outputs=200, judges=2, difference=None)
    assert set(plan.ci_width) == {"A", "B", "C"} and plan.ci_width["C"] is None
    assert plan.ci_width["B"] > plan.ci_width["A"]  # a share near 1/2 varies most
    assert (plan.seconds_per_span, plan.seconds_per_output) == (3.0, 30.0)
    assert plan.expert_hours == pytest.approx(30 * 200 * 2 / 3600)
    assert plan.power is None and plan.pilot_accuracy == pytest.approx(
        sum(r[0, 0] for r in _pilot(0.8) + _pilot(0.5, seed=1)) / (80 * 5))
