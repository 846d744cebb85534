"""Routed judging: which machine spans experts judge and which the ensemble resolves, with an audit.

Django-free. Within one evaluator, a span that at least `min_k` of the ensemble's models flagged is
*confident*; the others are *uncertain*. Experts judge every uncertain span and a simple random sample (without
replacement) of ceil(audit_rate * N_c) of the N_c confident ones, the audit; the rest of the confident spans
are resolved without an expert. Each span's inclusion probability is therefore known (1 for an uncertain span,
n_c / N_c for a confident one), and the Horvitz-Thompson estimate of a share over all spans,

    p = (1/N) sum over judged spans i of y_i / pi_i = (N_u p_u + N_c p_c) / N,

is the stratified estimator of stats.sampling with the two routes as strata (the uncertain stratum a census,
so it adds no variance); its interval is stats.sampling's too. Stratification and Horvitz-Thompson: Cochran,
Sampling Techniques, 3rd ed., ch. 5 and 9A; Horvitz and Thompson (1952).

That is the `threshold` design, the default. The `active` design (stats.ppi) draws the spans experts judge in
batches with probabilities that follow a calibrated predictor's uncertainty, none below `min_probability`, until
each evaluator's figure reaches `target_ci_width` (the full 95% width) or its `budget_spans` judgments are spent;
its figures are prediction-powered (`ppi++`). `check_settings` is the one check of the routing object.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

import numpy as np

from stats.sampling import SamplingError

CONFIDENT = "confident"
UNCERTAIN = "uncertain"
ACTIVE_STRATUM = "active"  # the one stratum name of the active design's drawn spans

THRESHOLD, ACTIVE = "threshold", "active"
DESIGNS = (THRESHOLD, ACTIVE)
DEFAULT_MIN_PROBABILITY = 0.05
MIN_CI_WIDTH, MAX_CI_WIDTH = 0.002, 1.0  # a full 95% width from a fifth of a point to below 100 points
MAX_BUDGET_SPANS = 10_000_000
THRESHOLD_ONLY = ("min_k", "audit_rate")
ACTIVE_ONLY = ("min_probability", "target_ci_width", "budget_spans")


class RoutingError(SamplingError):
    """Routing settings that cannot be used (the user can put them right)."""


def check_routing(min_k: object, audit_rate: object) -> None:
    """Refuse settings that leave no unbiased figure or no meaning, naming the field."""
    if not isinstance(min_k, int) or isinstance(min_k, bool) or not 1 <= min_k <= 1000:
        raise RoutingError(f"routing.min_k: {min_k!r} must be a whole number of models from 1 to 1000",
                           field="routing.min_k")
    if not (isinstance(audit_rate, int | float) and not isinstance(audit_rate, bool) and math.isfinite(audit_rate)
            and 0 < audit_rate <= 1):
        raise RoutingError(f"routing.audit_rate: {audit_rate!r} must be a share above 0 and at most 1 (without an "
                           "audit no figure about the confident spans can be estimated)", field="routing.audit_rate")


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def check_settings(*, design: object, min_k: object = None, audit_rate: object = None,
                   min_probability: object = None, target_ci_width: object = None,
                   budget_spans: object = None) -> None:
    """Refuse a routing object that cannot be used, naming the field: an unknown design, a setting of the other
    design (silently ignoring it would run a design the researcher did not ask for), or a value out of range."""
    given = {"min_k": min_k, "audit_rate": audit_rate, "min_probability": min_probability,
             "target_ci_width": target_ci_width, "budget_spans": budget_spans}
    if design not in DESIGNS:
        raise RoutingError(f"routing.design: {design!r} must be one of {', '.join(DESIGNS)}", field="routing.design")
    if design == THRESHOLD:
        for name in ACTIVE_ONLY:
            if given[name] is not None:
                raise RoutingError(f"routing.{name}: a setting of the active design; the threshold design routes by "
                                   "min_k and audit_rate (set design to \"active\" or leave it out)",
                                   field=f"routing.{name}")
        for name in THRESHOLD_ONLY:
            if given[name] is None:
                raise RoutingError(f"routing.{name}: required by the threshold design", field=f"routing.{name}")
        check_routing(min_k, audit_rate)
        return
    for name in THRESHOLD_ONLY:
        if given[name] is not None:
            raise RoutingError(f"routing.{name}: a setting of the threshold design; the active design draws by the "
                               "predicted uncertainty, none below min_probability (leave it out)",
                               field=f"routing.{name}")
    if min_probability is not None and not (_number(min_probability) and 0 < min_probability <= 1):
        raise RoutingError(f"routing.min_probability: {min_probability!r} must be a probability above 0 and at most "
                           "1 (every span must be drawable, or no estimate is valid without the model being right)",
                           field="routing.min_probability")
    if (target_ci_width is None) == (budget_spans is None):
        raise RoutingError("routing.target_ci_width, routing.budget_spans: the active design needs exactly one of "
                           "them, a full 95% width to reach or the expert judgments to spend per evaluator",
                           field=("routing.target_ci_width", "routing.budget_spans"))
    if target_ci_width is not None and not (_number(target_ci_width)
                                            and MIN_CI_WIDTH <= target_ci_width < MAX_CI_WIDTH):
        raise RoutingError(f"routing.target_ci_width: {target_ci_width!r} must be a full 95% width from "
                           f"{MIN_CI_WIDTH} to below {MAX_CI_WIDTH} (0.06 = 6 points)", field="routing.target_ci_width")
    if budget_spans is not None and not (isinstance(budget_spans, int) and not isinstance(budget_spans, bool)
                                         and 1 <= budget_spans <= MAX_BUDGET_SPANS):
        raise RoutingError(f"routing.budget_spans: {budget_spans!r} must be a whole number of spans from 1 to "
                           f"{MAX_BUDGET_SPANS:,}", field="routing.budget_spans")


def audit_size(confident: int, audit_rate: float) -> int:
    """How many of `confident` spans experts audit: ceil(rate * N), so a non-empty stratum is never unaudited."""
    return min(confident, math.ceil(audit_rate * confident - 1e-9))


@dataclass
class Routes:
    """Where each span of one evaluator goes; `stratum` names the route each judged or resolved span was in."""

    expert: list[Hashable] = field(default_factory=list)  # uncertain spans: all judged
    audit: list[Hashable] = field(default_factory=list)  # confident spans drawn for experts
    auto: list[Hashable] = field(default_factory=list)  # confident spans resolved by the ensemble
    population: dict[str, int] = field(default_factory=dict)


def route(units: Sequence[tuple[Hashable, int]], *, min_k: int, audit_rate: float, seed: int = 0) -> Routes:
    """Route one evaluator's spans, given as (key, k models that flagged it). The same units, settings and seed
    give the same routes whatever order the units come in."""
    check_routing(min_k, audit_rate)
    confident = sorted((key for key, k in units if k >= min_k), key=repr)
    uncertain = sorted((key for key, k in units if k < min_k), key=repr)
    rng = np.random.default_rng(seed)
    picks = set(rng.choice(len(confident), size=audit_size(len(confident), audit_rate), replace=False).tolist())
    population = {name: size for name, size in ((CONFIDENT, len(confident)), (UNCERTAIN, len(uncertain))) if size}
    return Routes(expert=uncertain, audit=[key for i, key in enumerate(confident) if i in picks],
                  auto=[key for i, key in enumerate(confident) if i not in picks], population=population)
