"""Plan a study from a pilot: expert time, the interval width of span accuracy, and the power to separate two
evaluators, for N outputs each judged by K experts.

Django-free. The pilot is given per evaluator as its outputs, each an array of one row per judge: (spans that
judge marked Error, spans that judge judged). A planned campaign is simulated by drawing N outputs with
replacement from the pilot's and, for each, K judges' rows with replacement from the judges of that output (a
pilot output with one judge repeats that judge: more judges then add no information, so the plan is not
optimistic there). Span accuracy (Span OK) is Table 4's ratio of sums over all judgments.

- `ci_width`: the width of the central 95% of the simulated accuracies, what the percentile bootstrap over
  outputs of the finished campaign reports (Efron and Tibshirani 1993, ch. 13), times sqrt(m / (m - 1)) for a
  pilot of m outputs: drawing with replacement from m outputs has (m - 1)/m of their population variance, a
  bias that matters for the small pilots a plan starts from.
- `power`: two evaluators of the pilot's quality that differ by d, judged on the same outputs. Per drawn
  output, evaluator A takes one of the evaluators the pilot judged on that output (at random) and its judges'
  rows as above; B takes another of them (the same one when the pilot has only one there), so that the two are
  paired by output as strongly as the pilot's evaluators are, no more. Each span B's judges marked Error turns
  into a miss with probability d / p (p the pilot's pooled accuracy; binomial thinning), so that B's accuracy is
  p - d. Each simulated campaign is tested as the ranking tests a pair (stats.ranking.paired_randomization,
  two-sided), and power is the share of simulations with p < alpha and A ahead. With two evaluators Holm's
  correction changes nothing.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from stats.ranking import ALPHA, paired_randomization
from stats.sampling import SamplingError

SIMULATIONS = 2000  # simulated campaigns for an interval width
POWER_SIMULATIONS = 400  # simulated campaigns for the power
POWER_RESAMPLES = 2000  # randomization resamples per simulated test
MAX_CELLS = 20_000_000  # draws x outputs x judges held at once


class PlanningError(SamplingError):
    """A plan that cannot be made as asked (sizes, a difference the pilot cannot show); the user can fix it."""


@dataclass(frozen=True)
class Times:
    seconds_per_span: float | None
    seconds_per_output: float | None


def times(active_seconds: float, outputs: int, spans: int) -> Times:
    """Active seconds per judged span and per finished output of the pilot (None when it has none)."""
    return Times(active_seconds / spans if spans else None, active_seconds / outputs if outputs else None)


def expert_hours(seconds_per_output: float | None, outputs: int, judges: int) -> float | None:
    return None if seconds_per_output is None else seconds_per_output * outputs * judges / 3600


class _Pool:
    """One evaluator's pilot rows, flattened so that many campaigns can be drawn at once."""

    def __init__(self, outputs: Sequence[np.ndarray]) -> None:
        rows = [np.asarray(o, dtype=float).reshape(-1, 2) for o in outputs]
        rows = [r for r in rows if len(r) and r[:, 1].sum() > 0]
        if not rows:
            raise PlanningError("the pilot has no judged span for this evaluator")
        self.counts = np.array([len(r) for r in rows])
        self.starts = np.concatenate([[0], np.cumsum(self.counts)[:-1]])
        flat = np.concatenate(rows)
        self.ok, self.judged = flat[:, 0], flat[:, 1]
        self.accuracy = float(self.ok.sum() / self.judged.sum())

    def draw(self, rng: np.random.Generator, draws: int, outputs: int, judges: int,
             chosen: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return (chosen outputs, OK, judged), the last two of shape (draws, outputs) summed over judges."""
        if chosen is None:
            chosen = rng.integers(0, len(self.counts), size=(draws, outputs))
        picks = self.starts[chosen][..., None] + (rng.random((draws, outputs, judges))
                                                  * self.counts[chosen][..., None]).astype(int)
        return chosen, self.ok[picks].sum(axis=2), self.judged[picks].sum(axis=2)


def _check_sizes(outputs: int, judges: int) -> None:
    if not isinstance(outputs, int) or not 1 <= outputs <= 1_000_000:
        raise PlanningError(f"outputs: {outputs!r} must be from 1 to 1000000", field="outputs")
    if not isinstance(judges, int) or not 1 <= judges <= 50:
        raise PlanningError(f"judges: {judges!r} must be from 1 to 50", field="judges")


def ci_width(outputs_rows: Sequence[np.ndarray], *, outputs: int, judges: int, simulations: int = SIMULATIONS,
             seed: int = 0) -> float:
    """The predicted width of the 95% interval of one evaluator's span accuracy (module docstring)."""
    _check_sizes(outputs, judges)
    pool = _Pool(outputs_rows)
    rng = np.random.default_rng(seed)
    per_chunk = max(1, MAX_CELLS // (outputs * judges))
    values = []
    for begin in range(0, simulations, per_chunk):
        _, ok, judged = pool.draw(rng, min(per_chunk, simulations - begin), outputs, judges)
        values.append(ok.sum(axis=1) / judged.sum(axis=1))
    low, high = np.quantile(np.concatenate(values), [0.025, 0.975])
    m = len(pool.counts)
    return float(high - low) * (math.sqrt(m / (m - 1)) if m > 1 else 1.0)


def _pick(rng: np.random.Generator, counts: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """A uniform index below each of `counts` (broadcast to `shape`)."""
    return (rng.random(shape) * counts).astype(int)


def power(outputs_rows: Sequence[Sequence[np.ndarray]], *, outputs: int, judges: int, difference: float,
          simulations: int = POWER_SIMULATIONS, resamples: int = POWER_RESAMPLES, alpha: float = ALPHA,
          seed: int = 0) -> float:
    """The probability that the ranking's test separates two evaluators whose accuracy differs by `difference`
    on a campaign of this size (module docstring). `outputs_rows[o]` holds one (judges, 2) array per evaluator
    the pilot judged on output o."""
    _check_sizes(outputs, judges)
    if not (isinstance(difference, int | float) and math.isfinite(difference) and 0 < difference < 1):
        raise PlanningError(f"difference: {difference!r} must be a share between 0 and 1 (0.05 = 5 points)",
                            field="difference")
    cells = [[np.asarray(c, dtype=float).reshape(-1, 2) for c in output] for output in outputs_rows]
    cells = [[c for c in output if len(c) and c[:, 1].sum() > 0] for output in cells]
    cells = [output for output in cells if output]
    if not cells:
        raise PlanningError("the pilot has no judged span: no power can be simulated")
    per_output = np.array([len(output) for output in cells])  # evaluators per output
    output_start = np.concatenate([[0], np.cumsum(per_output)[:-1]])
    flat_cells = [c for output in cells for c in output]
    pool = _Pool(flat_cells)  # one group of judge rows per (output, evaluator) cell
    if difference > pool.accuracy:
        raise PlanningError(f"difference: {difference} exceeds the pilot's span accuracy {pool.accuracy:.3f}",
                            field="difference")
    rng = np.random.default_rng(seed)
    keep = 1 - difference / pool.accuracy
    per_chunk = max(1, min(simulations, MAX_CELLS // (outputs * judges * 2)))
    hits = 0
    for begin in range(0, simulations, per_chunk):
        size = min(per_chunk, simulations - begin)
        chosen = rng.integers(0, len(cells), size=(size, outputs))
        n_eval = per_output[chosen]
        first = _pick(rng, n_eval, chosen.shape)
        # another evaluator of the same output: a shift of 1 .. n-1 places, none where there is only one
        other = np.where(n_eval > 1, (first + 1 + _pick(rng, np.maximum(n_eval - 1, 1), chosen.shape)) % n_eval,
                         first)
        _, ok_a, judged_a = pool.draw(rng, size, outputs, judges, output_start[chosen] + first)
        _, ok_b, judged_b = pool.draw(rng, size, outputs, judges, output_start[chosen] + other)
        ok_b = rng.binomial(ok_b.astype(np.int64), keep)
        pairs = [(np.stack([ok_a[s], judged_a[s]], axis=1), np.stack([ok_b[s], judged_b[s]], axis=1))
                 for s in range(size)]
        tests = paired_randomization(pairs, n_resamples=resamples, seed=seed + begin)
        hits += sum(1 for t in tests if t.p is not None and t.p < alpha and (t.difference or 0) > 0)
    return hits / simulations


@dataclass(frozen=True)
class StudyPlan:
    outputs: int
    judges: int
    seconds_per_span: float | None
    seconds_per_output: float | None
    expert_hours: float | None
    ci_width: dict[str, float | None]
    difference: float | None
    power: float | None
    pilot_accuracy: float | None  # pooled over the evaluators: the base of the power simulation


def study_plan(evaluators: Mapping[str, Mapping[Hashable, np.ndarray]], *, active_seconds: float,
               pilot_outputs: int, pilot_spans: int, outputs: int, judges: int, difference: float | None = None,
               seed: int = 0) -> StudyPlan:
    """The whole plan: times from the pilot's active seconds, widths per evaluator, power over the pilot's outputs
    (`evaluators`: evaluator -> output -> its (judges, 2) rows)."""
    _check_sizes(outputs, judges)
    t = times(active_seconds, pilot_outputs, pilot_spans)
    widths: dict[str, float | None] = {}
    for name, by_output in evaluators.items():
        try:
            widths[name] = ci_width(list(by_output.values()), outputs=outputs, judges=judges, seed=seed)
        except PlanningError:
            widths[name] = None  # an evaluator the pilot never judged has no width to predict
    by_output: dict[Hashable, list[np.ndarray]] = {}
    for rows in evaluators.values():
        for output, cell in rows.items():
            by_output.setdefault(output, []).append(cell)
    flat = [np.asarray(c, dtype=float).reshape(-1, 2) for cells in by_output.values() for c in cells]
    judged = sum(c[:, 1].sum() for c in flat)
    accuracy = float(sum(c[:, 0].sum() for c in flat) / judged) if judged else None
    chance = None
    if difference is not None:
        chance = power([by_output[o] for o in sorted(by_output, key=repr)], outputs=outputs, judges=judges,
                       difference=difference, seed=seed)
    return StudyPlan(outputs, judges, t.seconds_per_span, t.seconds_per_output,
                     expert_hours(t.seconds_per_output, outputs, judges), widths, difference, chance, accuracy)
