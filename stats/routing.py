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
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

import numpy as np

from stats.sampling import SamplingError

CONFIDENT = "confident"
UNCERTAIN = "uncertain"


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
