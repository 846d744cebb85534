"""Prediction-powered estimates of a share over all spans, from a calibrated predictor and an expert sample.

Django-free. The pieces, each a plain function:

1. **A calibrated predictor** (`cross_fit`): an L2-penalised logistic regression on what the ensemble says
   about a span (`SpanSignals`), fitted on the judged spans with K-fold cross-fitting, so that no judged span's
   prediction comes from a fit that saw its label; an unjudged span gets the mean of the K folds' predictions.
   `reliability` checks it (reliability curve and ECE).
2. **Active inclusion probabilities** (`inclusion_probabilities`): pi_i proportional to sqrt(f_i (1 - f_i)),
   the predicted standard deviation of the expert's verdict (the variance-optimal choice of active inference,
   Zrnic and Candes 2024), scaled to an expected budget and never below a floor, so every span can be drawn and
   no estimate depends on the predictor being right. Without a predictor the draw is uniform.
3. **The PPI++ estimate** (`ppi_mean`): under Poisson sampling with known pi_i, units with pi_i = 1 (judged
   before the last draw, or drawn for sure) are known exactly and the others are estimated as

       theta = (1/N) [ sum_certain y_i + lambda sum_rest f_i + N_rest * R ],
       R = sum_S (y_i - lambda f_i) / pi_i  /  sum_S 1 / pi_i

   (the inverse-probability-weighted rectifier, normalised as Hajek's ratio so that lambda = 0 is the
   human-sample-only estimate). Its linearised design variance is
   (N_rest/N)^2 sum_S (1 - pi_i)/pi_i^2 (r_i - R)^2 / (sum_S 1/pi_i)^2 with r_i = y_i - lambda f_i, and lambda is
   power-tuned: the weighted slope that minimises that variance (PPI++, Angelopoulos, Duchi and Zrnic 2023), so
   the estimate never has more estimated variance than the human sample alone. With the predictions known on
   every span this is the regression estimator of survey sampling (Cochran, Sampling Techniques, ch. 7); the
   target is the finite population of the campaign's spans, the share full judging would give.
4. **Batches** (`combine`: span accuracy by inverse variance, the rare error rate by units) and **the
   labeled set's error rate** (`labeled_error`), both built on `ppi_mean`;
   `active_estimate` is the whole active design's figure from its batches, the one function the bench and the
   product both call.
5. **Top-ups** (`first_batch_budget`, `top_up_budget`): the first batch is uniform, half the budget (or half of
   what a human-only sample needs for the target width at p = 0.5); each later batch is the smallest whose
   predicted variance, pooled with the batch estimates so far as `combine` pools them, reaches the target
   width (or the rest of the budget).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from stats.sampling import SamplingError

FOLDS = 5
FIRST_BATCH = 0.5  # share of the budget (or of the width's human-only plan) drawn uniformly before any label
HT, PPI = "ht", "ppi++"  # the `estimator` a figure names
EXPERT, MODEL = "expert", "model"  # who decided a span's label in the labeled set (`decided_by`)


class PPIError(SamplingError):
    """An expert sample or a design that cannot give a prediction-powered estimate (the user can put it right)."""


@dataclass(frozen=True)
class SpanSignals:
    """What the ensemble says about one span, the predictor's input (agreements None when no model gave one)."""

    k: int
    n: int
    supervisor: str
    severity_agreement: float | None
    category_agreement: float | None
    evaluator: str
    length: int
    category: str


def design_matrix(signals: Sequence[SpanSignals]) -> np.ndarray:
    """Return one row of numeric features per span: k/n, k, n = 0, an indicator per supervisor decision seen, the
    two agreements (0 with an indicator when missing), log length, and indicators of the evaluator and the
    category (the first of each left out: the intercept carries it)."""
    decisions = sorted({s.supervisor for s in signals})
    evaluators = sorted({s.evaluator for s in signals})
    categories = sorted({s.category for s in signals})
    rows = []
    for s in signals:
        row = [s.k / s.n if s.n else 0.0, float(s.k), float(s.n == 0)]
        row += [float(s.supervisor == d) for d in decisions]
        for agreement in (s.severity_agreement, s.category_agreement):
            row += [0.0, 1.0] if agreement is None else [float(agreement), 0.0]
        row.append(math.log1p(max(s.length, 0)))
        row += [float(s.evaluator == e) for e in evaluators[1:]]
        row += [float(s.category == c) for c in categories[1:]]
        rows.append(row)
    return np.asarray(rows, dtype=float).reshape(len(signals), -1)


def logistic_fit(x: np.ndarray, y: np.ndarray, *, penalty: float = 1.0, iterations: int = 50) -> np.ndarray:
    """Return the coefficients (intercept first) of an L2-penalised logistic regression by Newton's method.

    The same objective as scikit-learn's LogisticRegression(C=1/penalty) (intercept unpenalised); written out
    because a bench fits thousands of small models and the library's set-up costs more than the fit."""
    design = np.column_stack([np.ones(len(x)), x])
    beta = np.zeros(design.shape[1])
    ridge = np.full(design.shape[1], penalty)
    ridge[0] = 0.0
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-np.clip(design @ beta, -30, 30)))
        gradient = design.T @ (p - y) + ridge * beta
        hessian = (design * (p * (1 - p))[:, None]).T @ design + np.diag(ridge + 1e-9)
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.abs(step).max() < 1e-10:
            break
    return beta


def _fit_predict(x_train: np.ndarray, y_train: np.ndarray, x_new: np.ndarray) -> np.ndarray:
    """Probability of an error for `x_new` from a fit on the training rows (features standardised on them); one
    class only gives its smoothed share (a regression needs both)."""
    if len(np.unique(y_train)) < 2:
        return np.full(len(x_new), (y_train.sum() + 1) / (len(y_train) + 2))
    mean, scale = x_train.mean(axis=0), x_train.std(axis=0)
    scale[scale == 0] = 1.0
    beta = logistic_fit((x_train - mean) / scale, y_train)
    return 1 / (1 + np.exp(-np.clip(beta[0] + ((x_new - mean) / scale) @ beta[1:], -30, 30)))


def cross_fit(x: np.ndarray, labels: dict[int, bool], *, folds: int = FOLDS, seed: int = 0) -> np.ndarray | None:
    """Return every row's predicted probability that an expert calls it an error, or None before any label.

    `labels` maps row index -> the expert's verdict. The judged rows are split into `folds` seeded folds; a judged
    row is predicted by the fit on the other folds, an unjudged row by the mean of all folds' fits."""
    if not labels:
        return None
    judged = np.array(sorted(labels))
    y = np.array([labels[i] for i in judged], dtype=float)
    out = np.zeros(len(x))
    rest = np.setdiff1d(np.arange(len(x)), judged)
    k = min(folds, len(judged))
    if k < 2:
        out[:] = (y.sum() + 1) / (len(y) + 2)
        return out
    fold = np.random.default_rng(seed).permutation(len(judged)) % k
    for j in range(k):
        train, held = fold != j, fold == j
        both = np.concatenate([judged[held], rest])
        predicted = _fit_predict(x[judged[train]], y[train], x[both])
        out[judged[held]] = predicted[:held.sum()]
        out[rest] += predicted[held.sum():] / k
    return out


def inclusion_probabilities(prediction: np.ndarray | None, *, size: int, budget: float,
                            floor: float) -> np.ndarray:
    """Return each unit's inclusion probability, summing to `budget` (in expectation that many are drawn), each
    in [floor, 1]: uniform without a prediction, else proportional to sqrt(f (1 - f)) capped and floored by
    bisection. A budget below floor x size gives every unit the floor: the floor is what keeps estimates valid."""
    if not 0 < floor <= 1:
        raise PPIError(f"routing.min_probability: {floor!r} must be above 0 and at most 1",
                       field="routing.min_probability")
    if size == 0:
        return np.zeros(0)
    target = min(max(budget, floor * size), float(size))
    if prediction is None:
        return np.full(size, target / size)
    f = np.clip(np.asarray(prediction, dtype=float), 0.0, 1.0)
    # a sure prediction (0 or 1) keeps a tiny score, so a budget the others cannot fill still reaches it
    score = np.maximum(np.sqrt(f * (1 - f)), 1e-9)
    low, high = 0.0, size / score.min()  # at `high` every unit is capped at 1
    for _ in range(200):
        scale = (low + high) / 2
        if np.clip(scale * score, floor, 1.0).sum() < target:
            low = scale
        else:
            high = scale
    return np.clip(high * score, floor, 1.0)


def poisson_draw(probability: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Return which units are drawn, each independently with its probability (Poisson sampling)."""
    return rng.random(len(probability)) < probability


@dataclass(frozen=True)
class Interval:
    point: float | None
    low: float | None
    high: float | None
    se: float | None


@dataclass(frozen=True)
class PPIEstimate:
    """A prediction-powered share over all units with its interval, beside the human-sample-only one."""

    estimate: Interval
    classical: Interval
    lam: float
    judged: int
    population: int

    @property
    def estimator(self) -> str:
        return PPI


def _rectified(y: np.ndarray, f: np.ndarray, w: np.ndarray, pi: np.ndarray, lam: float) -> tuple[float, float]:
    """Hajek-normalised IPW mean of r = y - lam f over the sample and its linearised variance (as a mean)."""
    r = y - lam * f
    total = w.sum()
    mean = float((w * r).sum() / total)
    var = float(((1 - pi) * w ** 2 * (r - mean) ** 2).sum() / total ** 2)
    return mean, var


def ppi_mean(*, prediction: np.ndarray, probability: np.ndarray, sampled: np.ndarray, outcome: np.ndarray,
             confidence: float = 0.95, lam: float | None = None) -> PPIEstimate:
    """Return the PPI++ estimate of the mean outcome over all units (see the module's docstring).

    `outcome` holds the experts' 0/1 on sampled units (anything elsewhere); a unit with probability 1 must be
    sampled. `lam` None power-tunes lambda; 0 gives the classical estimate, 1 plain PPI."""
    f = np.asarray(prediction, dtype=float)
    pi = np.asarray(probability, dtype=float)
    drawn = np.asarray(sampled, dtype=bool)
    y = np.where(drawn, np.asarray(outcome, dtype=float), 0.0)
    size = len(f)
    if not (len(pi) == len(drawn) == len(y) == size) or size == 0:
        raise PPIError("the design needs a prediction, a probability and a draw for every unit", field="routing")
    if np.any((pi <= 0) | (pi > 1)):
        raise PPIError("every inclusion probability must be above 0 and at most 1", field="routing.min_probability")
    certain = pi >= 1
    if np.any(certain & ~drawn):
        raise PPIError("a unit drawn for sure was not judged", field="routing")
    rest = ~certain
    in_sample = drawn & rest
    z = float(norm.ppf(0.5 + confidence / 2))
    known = float(y[certain].sum())
    n_rest = int(rest.sum())
    if n_rest and not in_sample.any():
        empty = Interval(None, None, None, None)
        return PPIEstimate(empty, empty, 0.0, int(drawn.sum()), size)
    ys, fs, ps = y[in_sample], f[in_sample], pi[in_sample]
    w = 1 / ps
    if lam is None:
        total = w.sum()
        a = ys - (w * ys).sum() / total
        b = fs - (w * fs).sum() / total
        v = (1 - ps) * w ** 2
        den = float((v * b * b).sum())
        lam = float((v * a * b).sum() / den) if den > 1e-12 else 0.0

    def interval(weight: float) -> Interval:
        if not n_rest:
            point = known / size
            return Interval(point, point, point, 0.0)
        mean, var = _rectified(ys, fs, w, ps, weight)
        point = (known + weight * f[rest].sum() + n_rest * mean) / size
        se = n_rest / size * math.sqrt(max(var, 0.0))
        return Interval(point, max(0.0, point - z * se), min(1.0, point + z * se), se)

    return PPIEstimate(interval(lam), interval(0.0), lam, int(drawn.sum()), size)


VARIANCE, UNITS = "variance", "units"  # how `combine` weights batches


def combine(batches: Sequence[PPIEstimate], confidence: float = 0.95, *, by: str = VARIANCE) -> PPIEstimate:
    """Return the weighted mean of per-batch estimates of the same share: by inverse estimated variance (the
    default, for span accuracy), or `by` UNITS, each weighted by the units it rests on (`judged`: drawn by the
    end of its batch), fixed by the design (for the labeled set's error rate).

    Batch t's estimate is unbiased given the batches before it (its predictor and probabilities come from
    them, and the spans they judged count as known), so the batch estimates are uncorrelated and a weighted mean
    has variance sum w_t^2 V_t (1 / sum 1 / V_t for inverse-variance weights, as in the batched design of active
    inference). An estimated variance is noisy and tied to its estimate, which matters for a rare outcome: a
    batch that saw few of them has a small one, inverse-variance weights lean toward it, and the interval
    undercovers (bench/routing.py, the labeled set's error rate, about 3% of spans: 92.6% by variance, 94.9% by
    units); for span accuracy, a share near 0.7, they cost nothing measurable and save judgments. A batch with
    no estimate is left out; one with no variance (a census) decides alone."""
    z = float(norm.ppf(0.5 + confidence / 2))
    sizes = [b.judged for b in batches]

    def pooled(parts: list[Interval]) -> Interval:
        kept = [(p, n) for p, n in zip(parts, sizes, strict=True) if p.point is not None and p.se is not None]
        if not kept:
            return Interval(None, None, None, None)
        exact = [p for p, _ in kept if p.se == 0]
        if exact:
            return exact[-1]
        variance = pooled_variance([(n, p.se ** 2) for p, n in kept], by=by)  # type: ignore[operator]
        if by == VARIANCE:
            weights = np.array([1 / p.se ** 2 for p, _ in kept])  # type: ignore[operator]
        else:
            weights = np.array([max(n, 1) for _, n in kept], dtype=float)
        weights /= weights.sum()
        point = float(sum(w * p.point for w, (p, _) in zip(weights, kept, strict=True)))  # type: ignore[operator]
        se = math.sqrt(variance)
        return Interval(point, max(0.0, point - z * se), min(1.0, point + z * se), se)

    last = batches[-1]
    return PPIEstimate(pooled([b.estimate for b in batches]), pooled([b.classical for b in batches]), last.lam,
                       last.judged, last.population)


def pooled_variance(parts: Sequence[tuple[int, float]], *, by: str = VARIANCE) -> float:
    """Return the variance of `combine`'s mean of estimates given as (units it rests on, variance); a census
    (variance 0) decides alone."""
    if any(v == 0 for _, v in parts):
        return 0.0
    if by == VARIANCE:
        return float(1 / sum(1 / v for _, v in parts))
    sizes = np.array([max(n, 1) for n, _ in parts], dtype=float)
    weights = sizes / sizes.sum()
    return float(sum(w ** 2 * v for w, (_, v) in zip(weights, parts, strict=True)))


def model_decision(prediction: np.ndarray) -> np.ndarray:
    """Return the label the model gives a span no expert judged: Error when its predicted probability is at
    least one half."""
    return np.asarray(prediction, dtype=float) >= 0.5


def labeled_error(mean_error: PPIEstimate, *, overridden: int, population: int) -> PPIEstimate:
    """Return the labeled set's error rate: the share of all spans whose label is the model's and wrong.

    `mean_error` estimates the share of spans on which the model's decision is wrong (ppi_mean with the outcome
    "decision differs from the expert" and the prediction min(f, 1 - f)); on the `overridden` judged spans where
    it is wrong the expert's verdict is the label, and that count is known exactly, so it only shifts the
    estimate and its interval."""
    shift = overridden / population

    def moved(part: Interval) -> Interval:
        if part.point is None:
            return part
        return Interval(max(0.0, part.point - shift), max(0.0, (part.low or 0.0) - shift),
                        max(0.0, (part.high or 0.0) - shift), part.se)

    return PPIEstimate(moved(mean_error.estimate), moved(mean_error.classical), mean_error.lam, mean_error.judged,
                       mean_error.population)


@dataclass(frozen=True)
class ReliabilityBin:
    low: float
    high: float
    spans: int
    mean_prediction: float
    share: float  # of the bin's spans experts confirmed


@dataclass(frozen=True)
class Reliability:
    """The predictor's reliability curve (equal-width bins of the prediction) and its expected calibration
    error: the spans-weighted mean distance between a bin's mean prediction and its confirmed share."""

    bins: list[ReliabilityBin]
    ece: float | None
    spans: int


def reliability(prediction: np.ndarray, outcome: np.ndarray, *, bins: int = 10) -> Reliability:
    """Return the reliability curve of predictions against 0/1 outcomes (empty bins left out)."""
    f = np.asarray(prediction, dtype=float)
    y = np.asarray(outcome, dtype=float)
    which = np.minimum((f * bins).astype(int), bins - 1)
    rows = [ReliabilityBin(b / bins, (b + 1) / bins, int((which == b).sum()), float(f[which == b].mean()),
                           float(y[which == b].mean())) for b in range(bins) if (which == b).any()]
    ece = sum(r.spans * abs(r.mean_prediction - r.share) for r in rows) / len(f) if len(f) else None
    return Reliability(rows, ece, len(f))


@dataclass(frozen=True)
class DrawBatch:
    """One batch of an active design over all of an evaluator's units: each unit's inclusion probability in the
    batch (1 for a unit drawn before it), whether it has been drawn by the end of the batch, and the prediction
    the batch's estimate uses (made without the batch's own labels, or cross-fitted)."""

    probability: np.ndarray
    drawn: np.ndarray
    prediction: np.ndarray


def _batch_parts(batches: Sequence[DrawBatch], *, labeled: np.ndarray, outcome: np.ndarray,
                 decision: np.ndarray, confidence: float) -> tuple[list[PPIEstimate], list[PPIEstimate], np.ndarray]:
    """Each estimable batch's (share, mean decision error) estimates, and where the decision is wrong."""
    known = np.asarray(labeled, dtype=bool)
    y = np.where(known, np.asarray(outcome, dtype=bool), False)
    decided = np.asarray(decision, dtype=bool)
    wrong = decided != y
    shares, errors = [], []
    for batch in batches:
        pi = np.asarray(batch.probability, dtype=float)
        sampled = np.asarray(batch.drawn, dtype=bool) & known
        f = np.clip(np.asarray(batch.prediction, dtype=float), 0.0, 1.0)
        if np.any((pi >= 1) & ~sampled):
            continue  # a unit sure to be drawn was not: nothing about this batch is a design estimate
        shares.append(ppi_mean(prediction=f, probability=pi, sampled=sampled, outcome=y, confidence=confidence))
        errors.append(ppi_mean(prediction=np.where(decided, 1 - f, f), probability=pi, sampled=sampled,
                               outcome=wrong, confidence=confidence))
    return shares, errors, wrong


def batch_shares(batches: Sequence[DrawBatch], *, labeled: np.ndarray, outcome: np.ndarray,
                 confidence: float = 0.95) -> list[PPIEstimate]:
    """Return each estimable batch's own estimate of the share (what `combine` pools; the planner reads them)."""
    size = len(np.asarray(outcome))
    return _batch_parts(batches, labeled=labeled, outcome=outcome, decision=np.ones(size, dtype=bool),
                        confidence=confidence)[0]


def active_estimate(batches: Sequence[DrawBatch], *, labeled: np.ndarray, outcome: np.ndarray,
                    decision: np.ndarray, confidence: float = 0.95) -> tuple[PPIEstimate, PPIEstimate]:
    """Return the active design's (share of units experts call errors, the labeled set's error rate).

    Each batch is estimated by `ppi_mean` and the batches are combined (`combine`). A drawn unit without a label
    yet counts as not drawn (missing at random within its batch), but one drawn in an earlier batch is known for
    sure there, so a batch after an unlabelled earlier draw is left out. The labeled set labels a unit no expert
    judged with `decision` (True: error); its error rate is the share of units whose label is that decision and
    wrong, estimated with the predicted chance of it being wrong."""
    known = np.asarray(labeled, dtype=bool)
    shares, errors, wrong = _batch_parts(batches, labeled=known, outcome=outcome, decision=decision,
                                         confidence=confidence)
    size = len(known)
    if not shares:
        empty = Interval(None, None, None, None)
        nothing = PPIEstimate(empty, empty, 0.0, int(known.sum()), size)
        return nothing, nothing
    final = np.asarray(batches[-1].drawn, dtype=bool)
    error = labeled_error(combine(errors, confidence, by=UNITS), overridden=int((wrong & final & known).sum()),
                          population=size)
    return combine(shares, confidence), error


def _z(confidence: float) -> float:
    return float(norm.ppf(0.5 + confidence / 2))


def first_batch_budget(size: int, *, budget_spans: int | None = None, target_ci_width: float | None = None,
                       confidence: float = 0.95) -> float:
    """Return the expected judgments of the first, uniform batch among `size` units: FIRST_BATCH of the budget,
    or of what a human-only uniform sample needs for the target width at the widest share (p = 0.5, with the
    finite population correction), since before any label nothing narrower can be planned."""
    if budget_spans is not None:
        return float(min(size, FIRST_BATCH * budget_spans))
    if target_ci_width is None:
        raise PPIError("the active design needs target_ci_width or budget_spans",
                       field=("routing.target_ci_width", "routing.budget_spans"))
    unlimited = _z(confidence) ** 2 * 0.25 / (target_ci_width / 2) ** 2
    return float(min(size, FIRST_BATCH * unlimited / (1 + unlimited / max(size, 1))))


def batch_variance(prediction: np.ndarray, probability: np.ndarray, *, population: int) -> float:
    """Return the variance a batch's estimate (a share of all `population` units) is predicted to have if the
    predictor is calibrated: sum (1 - pi) / pi f (1 - f) / population^2, the rectifier's design variance at
    lambda = 1 with E[(y - f)^2 | f] = f (1 - f)."""
    f = np.clip(np.asarray(prediction, dtype=float), 0.0, 1.0)
    pi = np.asarray(probability, dtype=float)
    return float(((1 - pi) / pi * f * (1 - f)).sum() / population ** 2) if population else 0.0


def top_up_budget(prediction: np.ndarray, *, population: int, drawn: int, estimates: Sequence[PPIEstimate],
                  target_ci_width: float, floor: float, confidence: float = 0.95) -> float:
    """Return the expected judgments the next batch needs among the units not judged yet (their `prediction`;
    `drawn` were) for its combination with the batch `estimates` so far (as `combine` pools span accuracy) to
    reach the full width `target_ci_width`; 0 when they already do. The smallest such budget by bisection (at
    most all of them: a census has no variance)."""
    rest = len(prediction)
    goal = (target_ci_width / (2 * _z(confidence))) ** 2
    known = [(e.judged, e.estimate.se ** 2) for e in estimates if e.estimate.point is not None
             and e.estimate.se is not None]
    if rest == 0 or (known and pooled_variance(known) <= goal):
        return 0.0

    def enough(budget: float) -> bool:
        pi = inclusion_probabilities(prediction, size=rest, budget=budget, floor=floor)
        own = batch_variance(prediction, pi, population=population)
        return pooled_variance([*known, (int(round(drawn + budget)), own)]) <= goal

    low, high = 0.0, float(rest)  # at `rest` every unit is drawn for sure: no variance
    for _ in range(40):
        middle = (low + high) / 2
        if enough(middle):
            high = middle
        else:
            low = middle
    return high


def next_batch_budget(prediction_rest: np.ndarray, *, population: int, drawn: int,
                      estimates: Sequence[PPIEstimate], floor: float, budget_spans: int | None = None,
                      target_ci_width: float | None = None) -> tuple[float, str]:
    """Return the expected judgments an evaluator's next batch needs among its `prediction_rest` spans not drawn
    yet (`drawn` were), and, when none, why: the rest of `budget_spans`, or what `top_up_budget` plans for the
    target width given the batch `estimates` so far (`batch_shares`)."""
    if not len(prediction_rest):
        return 0.0, "every span is judged"
    if budget_spans is not None:
        left = budget_spans - drawn
        return (float(left), "") if left > 0 else (0.0, "the budget is spent")
    if target_ci_width is None:
        raise PPIError("the active design needs target_ci_width or budget_spans",
                       field=("routing.target_ci_width", "routing.budget_spans"))
    budget = top_up_budget(prediction_rest, population=population, drawn=drawn, estimates=estimates,
                           target_ci_width=target_ci_width, floor=floor)
    return (budget, "") if budget > 0 else (0.0, "the target width is reached")
