"""Benchmark: coverage of the designed sample's 95% interval, and the estimator's bias, on synthetic populations.

For each scenario (strata sizes, the known share of OK spans in each, judged spans per stratum) it draws many
stratified samples without replacement and reports how often the interval of
`stats.sampling` covers the population's true share, beside the target of 93-97%, and the mean
error of the estimate beside its Monte Carlo standard error (unbiased: |bias| within ~2-3 of those).

- "normal" scenarios: every judged stratum holds >= 10 spans, so the interval is p +- 1.96 se; a sample is
  one hypergeometric draw per stratum (exactly sampling without replacement), so 20,000 samples take a second.
- "draw" scenario: the same through the product's own `draw_stratified` on an explicit list of spans.
- "bootstrap" scenarios: small cells switch the interval to the rescaled within-stratum bootstrap.

    python bench/sample_coverage.py [--samples 20000] [--seed 1]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from stats.sampling import (  # noqa: E402
    Stratum,
    draw_stratified,
    stratified_estimate,
    stratified_normal,
)

TARGET = (0.93, 0.97)
# name: (strata sizes, OK spans per stratum, judged per stratum)
NORMAL = {
    "3 strata, p 0.30-0.82": ([1500, 700, 300], [1230, 385, 90], [60, 40, 30]),
    "4 strata, Table-4-like": ([1200, 600, 400, 150], [1000, 380, 160, 30], [50, 40, 30, 20]),
    "1 stratum, p 0.63, n 100": ([2000], [1260], [100]),
    "2 strata, heavy fpc": ([80, 60], [50, 20], [50, 40]),
}
BOOTSTRAP = {
    "small cells 30/8/6": ([400, 200, 100], [300, 100, 40], [30, 8, 6]),
}


def _report(name: str, hits: np.ndarray, points: np.ndarray, truth: float, seconds: float) -> None:
    coverage = float(hits.mean())
    bias = float(points.mean() - truth)
    mc_se = float(points.std() / np.sqrt(len(points)))
    ok = TARGET[0] <= coverage <= TARGET[1]
    print(f"{name:32s} coverage {coverage:6.2%}  target {TARGET[0]:.0%}-{TARGET[1]:.0%} {'ok ' if ok else 'OUT'}  "
          f"bias {bias:+.5f} (MC se {mc_se:.5f}, {abs(bias) / mc_se if mc_se else 0:.1f} se)  "
          f"{len(points)} samples in {seconds:.2f}s")


def normal(samples: int, rng: np.random.Generator) -> None:
    for name, (sizes, ok, judged) in NORMAL.items():
        start = time.perf_counter()
        big_n, k_pop, n = np.array(sizes), np.array(ok), np.array(judged)
        truth = k_pop.sum() / big_n.sum()
        k = np.stack([rng.hypergeometric(k_pop[h], big_n[h] - k_pop[h], n[h], size=samples)
                      for h in range(len(sizes))], axis=1)
        point, _, low, high = stratified_normal(np.broadcast_to(big_n, k.shape), np.broadcast_to(n, k.shape), k)
        _report(name, (low <= truth) & (truth <= high), point, truth, time.perf_counter() - start)


def through_draw(samples: int, seed: int) -> None:
    """The product's draw on an explicit population of 1,200 spans in 3 strata (40 judged each)."""
    start = time.perf_counter()
    sizes, ok = [600, 400, 200], [480, 200, 60]
    units, outcome = [], {}
    for h, (size, good) in enumerate(zip(sizes, ok, strict=True)):
        for i in range(size):
            key = h * 10_000 + i
            units.append((key, f"s{h}"))
            outcome[key] = i < good
    truth = sum(ok) / sum(sizes)
    hits, points = [], []
    for r in range(samples):
        drawn = draw_stratified(units, per_stratum=40, seed=seed * 100_003 + r)
        strata = [Stratum(f"s{h}", sizes[h], 40, sum(outcome[k] for k in drawn if k // 10_000 == h))
                  for h in range(3)]
        est = stratified_estimate(strata)
        hits.append(est.low <= truth <= est.high)
        points.append(est.point)
    _report("via draw_stratified", np.array(hits), np.array(points), truth, time.perf_counter() - start)


def bootstrap(samples: int, rng: np.random.Generator) -> None:
    for name, (sizes, ok, judged) in BOOTSTRAP.items():
        start = time.perf_counter()
        truth = sum(ok) / sum(sizes)
        hits, points = [], []
        for r in range(samples):
            strata = [Stratum(str(h), sizes[h], judged[h],
                              int(rng.hypergeometric(ok[h], sizes[h] - ok[h], judged[h]))) for h in range(len(sizes))]
            est = stratified_estimate(strata, resamples=2000, seed=r)
            hits.append(est.low <= truth <= est.high)
            points.append(est.point)
        _report(name + " (bootstrap)", np.array(hits), np.array(points), truth, time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    normal(args.samples, rng)
    through_draw(max(500, args.samples // 10), args.seed)
    bootstrap(max(500, args.samples // 20), rng)


if __name__ == "__main__":
    main()
