"""The prediction-powered engine: predictor with cross-fitting, active probabilities, the PPI++ estimate."""

from __future__ import annotations

import numpy as np
import pytest

from errors import UserError
from stats.ppi import (
    UNITS,
    DrawBatch,
    Interval,
    PPIError,
    PPIEstimate,
    SpanSignals,
    active_estimate,
    batch_variance,
    combine,
    cross_fit,
    design_matrix,
    first_batch_budget,
    inclusion_probabilities,
    labeled_error,
    logistic_fit,
    model_decision,
    next_batch_budget,
    poisson_draw,
    pooled_variance,
    ppi_mean,
    reliability,
    top_up_budget,
)

HALF = np.full(4, 0.5)
DRAWN = np.array([True, True, False, False])
Y = np.array([1.0, 0.0, np.nan, np.nan])
F = np.array([0.8, 0.4, 0.6, 0.2])


def test_ppi_mean_plain_ppi_by_hand() -> None:
    # r = y - f on the sample = 0.2, -0.4; Hajek mean -0.1; point (sum f + 4 * -0.1) / 4 = (2.0 - 0.4) / 4
    # variance (1 - 0.5) * 2^2 * (0.3^2 + 0.3^2) / 4^2 = 0.0225
    est = ppi_mean(prediction=F, probability=HALF, sampled=DRAWN, outcome=Y, lam=1.0)
    assert est.estimate.point == pytest.approx(0.4)
    assert est.estimate.se == pytest.approx(0.15)
    assert est.estimate.low == pytest.approx(0.4 - 1.959964 * 0.15, abs=1e-6)


def test_ppi_mean_lambda_zero_is_the_human_only_estimate() -> None:
    # Hajek mean of y = 0.5; variance 0.5 * 4 * (0.25 + 0.25) / 16 = 1/16
    est = ppi_mean(prediction=F, probability=HALF, sampled=DRAWN, outcome=Y, lam=0.0)
    assert (est.estimate.point, est.estimate.se) == (pytest.approx(0.5), pytest.approx(0.25))
    assert est.classical == est.estimate


def test_ppi_mean_power_tuning_picks_the_variance_minimising_slope() -> None:
    # centred y = 0.5, -0.5; centred f = 0.2, -0.2: slope 0.2 / 0.08 = 2.5, residuals y - 2.5 f = -1, -1 (no
    # spread), point (2.5 * 2.0 + 4 * -1) / 4 = 0.25
    est = ppi_mean(prediction=F, probability=HALF, sampled=DRAWN, outcome=Y)
    assert est.lam == pytest.approx(2.5)
    assert est.estimate.point == pytest.approx(0.25)
    assert est.estimate.se == pytest.approx(0.0, abs=1e-12)
    assert est.classical.point == pytest.approx(0.5)


def test_ppi_mean_counts_certain_units_exactly() -> None:
    # a unit with probability 1 and y = 1 joins the four above: (1 + 2.0 - 0.4) / 5; se 4/5 * 0.15
    est = ppi_mean(prediction=np.r_[0.9, F], probability=np.r_[1.0, HALF], sampled=np.r_[True, DRAWN],
                   outcome=np.r_[1.0, Y], lam=1.0)
    assert est.estimate.point == pytest.approx(0.52)
    assert est.estimate.se == pytest.approx(0.12)
    assert est.judged == 3 and est.population == 5


def test_ppi_mean_refuses_an_unjudged_sure_unit() -> None:
    with pytest.raises(PPIError) as caught:
        ppi_mean(prediction=F, probability=np.r_[1.0, 0.5, 0.5, 0.5], sampled=np.array([False, True, True, False]),
                 outcome=Y)
    assert isinstance(caught.value, UserError) and caught.value.field == "routing"


def test_ppi_mean_without_a_sample_of_the_rest_has_no_estimate() -> None:
    est = ppi_mean(prediction=F, probability=HALF, sampled=np.zeros(4, bool), outcome=Y)
    assert est.estimate.point is None and est.classical.point is None


def test_ppi_mean_matches_ppi_python_point_and_interval() -> None:
    ppi_py = pytest.importorskip("ppi_py")
    rng = np.random.default_rng(3)
    size = 200_000
    f = rng.uniform(0.05, 0.95, size)
    y = (rng.random(size) < f).astype(float)
    pi = np.where(f > 0.5, 0.001, 0.002)  # unequal probabilities, a tiny sampling fraction
    drawn = poisson_draw(pi, rng)
    lam = 0.8
    ours = ppi_mean(prediction=f, probability=pi, sampled=drawn, outcome=y, lam=lam)
    theirs = ppi_py.ppi_mean_pointestimate(y[drawn], f[drawn], f, lam=lam, w=1 / pi[drawn])
    assert ours.estimate.point == pytest.approx(float(np.ravel(theirs)[0]), abs=1e-12)
    # uniform probabilities: ppi-python's (superpopulation) interval and ours agree when the fraction is tiny
    pi = np.full(size, 0.002)
    drawn = poisson_draw(pi, rng)
    ours = ppi_mean(prediction=f, probability=pi, sampled=drawn, outcome=y, lam=lam)
    low, high = ppi_py.ppi_mean_ci(y[drawn], f[drawn], f, alpha=0.05, lam=lam)
    assert ours.estimate.high - ours.estimate.low == pytest.approx(float(np.ravel(high - low)[0]), rel=0.01)


def test_inclusion_probabilities_follow_the_uncertainty_with_a_floor() -> None:
    # scores sqrt(f(1-f)) = 0.5, 0.3, 0.3, 0; the last takes the floor 0.05, the others share 1.05 as 5:3:3
    pi = inclusion_probabilities(np.array([0.5, 0.1, 0.9, 0.0]), size=4, budget=1.1, floor=0.05)
    assert pi == pytest.approx([0.5 * 1.05 / 1.1, 0.3 * 1.05 / 1.1, 0.3 * 1.05 / 1.1, 0.05], abs=1e-9)
    assert pi.sum() == pytest.approx(1.1)


def test_inclusion_probabilities_cap_at_one_and_floor_before_budget() -> None:
    pi = inclusion_probabilities(np.array([0.5, 0.02, 0.02, 0.02]), size=4, budget=2.0, floor=0.1)
    assert pi[0] == 1.0 and pi[1:] == pytest.approx([1 / 3] * 3)
    assert inclusion_probabilities(np.array([0.5, 0.2]), size=2, budget=0.1, floor=0.3) == pytest.approx([0.3, 0.3])
    assert inclusion_probabilities(None, size=5, budget=2.0, floor=0.1) == pytest.approx([0.4] * 5)
    # a sure prediction is still drawn when the budget needs it: the uncertain span caps at 1, the sure one 0.8
    assert inclusion_probabilities(np.array([0.5, 0.0]), size=2, budget=1.8, floor=0.1) == pytest.approx([1.0, 0.8])


def test_inclusion_probabilities_refuse_a_floor_outside_zero_one() -> None:
    with pytest.raises(PPIError) as caught:
        inclusion_probabilities(None, size=3, budget=1, floor=0.0)
    assert caught.value.field == "routing.min_probability"


def _signals(count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    k = rng.integers(0, 6, count)
    truth = rng.random(count) < (k + 0.5) / 6
    signals = [SpanSignals(int(k_), 5, "kept" if k_ else "added", float(t) if k_ else None, None,
                           "run-a" if i % 2 else "run-b", int(rng.integers(1, 30)), "NUMBER")
               for i, (k_, t) in enumerate(zip(k, truth, strict=True))]
    return design_matrix(signals), truth


def test_cross_fit_never_predicts_a_judged_span_from_its_own_label() -> None:
    rng = np.random.default_rng(0)
    x, truth = _signals(300, rng)
    labels = {i: bool(truth[i]) for i in range(0, 300, 2)}
    before = cross_fit(x, labels, seed=4)
    flipped = dict(labels)
    flipped[10] = not flipped[10]
    after = cross_fit(x, flipped, seed=4)
    assert before is not None and after is not None
    assert after[10] == before[10]  # its own label is not in the fit that predicts it
    assert not np.allclose(after[11], before[11])  # an unjudged span's mean of folds sees every label


def test_cross_fit_separates_errors_and_is_none_before_labels() -> None:
    rng = np.random.default_rng(1)
    x, truth = _signals(600, rng)
    predicted = cross_fit(x, {i: bool(truth[i]) for i in range(300)})
    assert predicted is not None
    assert predicted[truth].mean() > predicted[~truth].mean() + 0.2
    assert cross_fit(x, {}) is None


def test_design_matrix_marks_missing_agreement() -> None:
    rows = design_matrix([SpanSignals(2, 4, "kept", 0.5, None, "a", 3, "X"),
                          SpanSignals(0, 4, "added", None, 1.0, "b", 0, "Y")])
    # k/n, k, n==0, decisions added and kept, severity (value, missing), category (value, missing), log1p length,
    # evaluator b, category Y
    assert rows.tolist()[0] == pytest.approx([0.5, 2, 0, 0, 1, 0.5, 0, 0, 1, np.log(4), 0, 0])
    assert rows.tolist()[1] == pytest.approx([0.0, 0, 0, 1, 0, 0, 1, 1.0, 0, 0, 1, 1])


def test_logistic_fit_matches_scikit_learn() -> None:
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(5)
    x = rng.normal(size=(400, 3))
    y = (rng.random(400) < 1 / (1 + np.exp(-(0.5 + x[:, 0] - 2 * x[:, 2])))).astype(float)
    ours = logistic_fit(x, y)
    theirs = LogisticRegression(C=1.0, tol=1e-12, max_iter=5000).fit(x, y)
    assert ours[0] == pytest.approx(theirs.intercept_[0], abs=1e-6)
    assert ours[1:] == pytest.approx(theirs.coef_[0], abs=1e-6)


def _batch(point: float, se: float, judged: int = 10) -> PPIEstimate:
    part = Interval(point, point - se, point + se, se)
    return PPIEstimate(part, part, 1.0, judged, 100)


def test_combine_weights_batches_by_inverse_variance_or_by_units() -> None:
    # by variance: weights 1/0.01 and 1/0.04, (100 * 0.6 + 25 * 0.4) / 125 = 0.56, se 1/sqrt(125)
    both = combine([_batch(0.6, 0.1, 10), _batch(0.4, 0.2, 30)])
    assert both.estimate.point == pytest.approx(0.56)
    assert both.estimate.se == pytest.approx(1 / np.sqrt(125))
    # by units: weights 10 and 30 of 40, 0.25 * 0.6 + 0.75 * 0.4, se sqrt(0.25^2 0.1^2 + 0.75^2 0.2^2)
    units = combine([_batch(0.6, 0.1, 10), _batch(0.4, 0.2, 30)], by=UNITS)
    assert units.estimate.point == pytest.approx(0.45)
    assert units.estimate.se == pytest.approx(np.sqrt(0.25 ** 2 * 0.01 + 0.75 ** 2 * 0.04))
    assert combine([_batch(0.6, 0.1), _batch(0.5, 0.0)]).estimate.point == 0.5  # a census decides
    nothing = PPIEstimate(Interval(None, None, None, None), Interval(None, None, None, None), 0.0, 5, 100)
    assert combine([nothing, _batch(0.3, 0.1, 20)], by=UNITS).estimate.point == pytest.approx(0.3)


def test_labeled_error_subtracts_the_overridden_judged_spans() -> None:
    # decisions (f >= 0.5): error, not, error, not; experts on the two judged: 1, 0 -> the model is right on both
    f = F
    wrong = model_decision(f) != np.array([True, False, False, False])
    assert wrong.tolist() == [False, False, True, False]
    # a mean-error estimate of 0.30 (se 0.05) over 10 spans, 1 judged span the expert overrode: 0.30 - 0.1
    part = Interval(0.3, 0.2, 0.4, 0.05)
    shifted = labeled_error(PPIEstimate(part, part, 1.0, 4, 10), overridden=1, population=10)
    assert (shifted.estimate.point, shifted.estimate.low, shifted.estimate.high) == pytest.approx((0.2, 0.1, 0.3))
    assert shifted.estimate.se == 0.05
    floor = labeled_error(PPIEstimate(part, part, 1.0, 4, 10), overridden=3, population=10)
    assert floor.estimate.low == 0.0 and floor.estimate.point == pytest.approx(0.0)


def test_reliability_bins_and_ece_by_hand() -> None:
    # bin 0.1-0.2: predictions 0.1, 0.15 (mean 0.125), outcomes 0, 1 (0.5); bin 0.9-1.0: 0.9, 1.0 (0.95), 1, 1
    curve = reliability(np.array([0.1, 0.15, 0.9, 1.0]), np.array([0, 1, 1, 1]))
    assert [(b.low, b.spans) for b in curve.bins] == [(0.1, 2), (0.9, 2)]
    assert [b.mean_prediction for b in curve.bins] == pytest.approx([0.125, 0.95])
    assert [b.share for b in curve.bins] == [0.5, 1.0]
    assert curve.ece == pytest.approx((2 * 0.375 + 2 * 0.05) / 4)
    assert reliability(np.array([]), np.array([])).ece is None


def test_active_estimate_of_one_uniform_batch_is_ppi_mean() -> None:
    # the hand case above as a design's only batch: the power-tuned point 0.25 with no spread
    y = np.array([True, False, False, False])
    share, _ = active_estimate([DrawBatch(HALF, DRAWN, F)], labeled=DRAWN, outcome=y, decision=model_decision(F))
    assert share.estimate.point == pytest.approx(0.25) and share.classical.point == pytest.approx(0.5)
    assert share.estimator == "ppi++"


def test_active_estimate_combines_batches_and_counts_the_overridden_spans() -> None:
    y = np.array([True, False, True, False])
    f = np.array([0.8, 0.6, 0.3, 0.2])  # decisions: error, error, not, not
    decision = model_decision(f)
    first = DrawBatch(HALF, np.array([True, True, False, False]), f)
    # the second batch: the first's two drawn for sure, the others at 0.5, unit 2 drawn
    second = DrawBatch(np.array([1.0, 1.0, 0.5, 0.5]), np.array([True, True, True, False]), f)
    labeled = np.array([True, True, True, False])
    share, error = active_estimate([first, second], labeled=labeled, outcome=y, decision=decision)
    parts = [ppi_mean(prediction=f, probability=b.probability, sampled=b.drawn & labeled, outcome=y)
             for b in (first, second)]
    assert share.estimate.point == pytest.approx(combine(parts).estimate.point)
    wrong = decision != y  # unit 1 (model: error, expert: not) and unit 2 (model: not, expert: error)
    mean_wrong = combine([ppi_mean(prediction=np.where(decision, 1 - f, f), probability=b.probability,
                                   sampled=b.drawn & labeled, outcome=wrong) for b in (first, second)], by=UNITS)
    # both wrong units were judged, so 2 of 4 labels are the experts' and only the rest's errors remain
    assert error.estimate.point == pytest.approx(max(0.0, mean_wrong.estimate.point - 2 / 4))
    assert error.estimate.high == pytest.approx(max(0.0, mean_wrong.estimate.high - 2 / 4))


def test_active_estimate_leaves_out_a_batch_after_an_unlabelled_earlier_draw() -> None:
    y = np.array([True, False, False, False])
    first = DrawBatch(HALF, DRAWN, F)
    second = DrawBatch(np.array([1.0, 1.0, 0.5, 0.5]), np.array([True, True, True, False]), F)
    labeled = np.array([True, False, True, False])  # unit 1 was drawn first and has lost its verdict
    share, _ = active_estimate([first, second], labeled=labeled, outcome=y, decision=model_decision(F))
    alone = ppi_mean(prediction=F, probability=HALF, sampled=DRAWN & labeled, outcome=y)
    assert share.estimate.point == pytest.approx(alone.estimate.point)
    nothing, _ = active_estimate([second], labeled=labeled, outcome=y, decision=model_decision(F))
    assert nothing.estimate.point is None


def test_first_batch_is_half_the_budget_or_half_the_widths_plan() -> None:
    assert first_batch_budget(1000, budget_spans=100) == 50
    assert first_batch_budget(60, budget_spans=400) == 60
    # width 0.1 at p = 0.5: 1.96^2 / 4 / 0.05^2 = 384.15, with the correction for 1000 spans 277.5, half 138.8
    assert first_batch_budget(1000, target_ci_width=0.1) == pytest.approx(138.77, abs=0.05)
    with pytest.raises(PPIError):
        first_batch_budget(10)


def _prior(judged: int, variance: float) -> PPIEstimate:
    part = Interval(0.5, 0.4, 0.6, float(np.sqrt(variance)))
    return PPIEstimate(part, part, 1.0, judged, 200)


def test_top_up_budget_reaches_the_target_variance_by_hand() -> None:
    f = np.full(100, 0.5)
    # uniform pi over 100 spans of f = 0.5: variance 100 (1 - pi) / pi 0.25 / 100^2; the goal 1/1200 needs
    # (1 - pi) / pi = 1/3, pi = 0.75: 75 judgments
    width = 2 * 1.959964 * np.sqrt(1 / 1200)
    assert top_up_budget(f, population=100, drawn=0, estimates=[], target_ci_width=width,
                         floor=0.05) == pytest.approx(75, abs=0.01)
    pi = inclusion_probabilities(f, size=100, budget=75, floor=0.05)
    assert batch_variance(f, pi, population=100) == pytest.approx(1 / 1200)
    # 100 of 200 spans judged before, that batch's variance 1/1600. A batch of b = 50 (pi 0.5 on the other 100)
    # has variance 100 (1 - 0.5)/0.5 0.25 / 200^2 = 1/1600; pooled by inverse variance 1/3200
    before = [_prior(100, 1 / 1600)]
    width = 2 * 1.959964 * np.sqrt(1 / 3200)
    assert top_up_budget(f, population=200, drawn=100, estimates=before, target_ci_width=width,
                         floor=0.05) == pytest.approx(50, abs=0.01)
    assert pooled_variance([(100, 1 / 1600), (150, 1 / 1600)]) == pytest.approx(1 / 3200)
    # by units, weights 0.4 and 0.6: 0.16/1600 + 0.36/1600
    assert pooled_variance([(100, 1 / 1600), (150, 1 / 1600)], by=UNITS) == pytest.approx(0.52 / 1600)
    # estimates already that narrow need nothing
    assert top_up_budget(f, population=200, drawn=100, estimates=[_prior(100, 1e-9)], target_ci_width=width,
                         floor=0.05) == 0


def test_next_batch_budget_spends_the_rest_of_a_budget_or_plans_the_width() -> None:
    f = np.full(100, 0.5)
    assert next_batch_budget(f, population=130, drawn=30, estimates=[], floor=0.05, budget_spans=80) == (50.0, "")
    assert next_batch_budget(f, population=130, drawn=80, estimates=[], floor=0.05, budget_spans=80) == (
        0.0, "the budget is spent")
    assert next_batch_budget(f[:0], population=130, drawn=130, estimates=[], floor=0.05, budget_spans=200) == (
        0.0, "every span is judged")
    width = 2 * 1.959964 * np.sqrt(1 / 1200)
    planned, why = next_batch_budget(f, population=100, drawn=0, estimates=[], floor=0.05, target_ci_width=width)
    assert planned == pytest.approx(75, abs=0.01) and why == ""  # as top_up_budget's hand case
    narrow = [_prior(100, 1e-9)]
    assert next_batch_budget(f, population=100, drawn=0, estimates=narrow, floor=0.05,
                             target_ci_width=width) == (0.0, "the target width is reached")
    with pytest.raises(PPIError):
        next_batch_budget(f, population=100, drawn=0, estimates=[], floor=0.05)
