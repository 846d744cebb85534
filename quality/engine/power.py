"""The checks' power before launch, Django-free: how many known answers a participant meets, and how likely the
flag rules (quality.engine.figures, the same functions that flag annotators later) are to flag a participant
who accepts everything, one who rejects everything and one who answers at random.

The three kinds of participant are defined on what the checks see: an *accept-all* participant gives every
machine span the verdict Error, a *reject-all* participant Not an error, a *random* one a span verdict drawn
uniformly from the protocol's span verdicts; none of them adds an error, so none finds a planted error. Under a
protocol without verdicts on machine spans all three mark nothing (the planted errors are the only check).
The rubber-stamp rule depends on speed, not on the design, so it is a condition beside the figures.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

from scipy.stats import binom

from corpus.protocols import opennlgauge as protocol
from quality.engine.figures import DECOYS, PLANTED, QUALIFICATION, STAMP_RULE, Figures, flag_reasons
from quality.engine.planting import planted_count
from stats.intervals import wilson

BEHAVIOURS = ("accept_all", "reject_all", "random")
DECOY_CHECK, PLANTED_CHECK, TRAINING_CHECK = "decoys", "planted", "qualification"
# The share of one kind of check each kind of participant passes: a decoy's key is Not an error, a planted
# error is found only by adding an error over it. (Training keys are per span: `training_pass`.)
RANDOM_VERDICT = 1 / len(protocol.SPAN_VERDICT_VALUES)
PASSES: dict[str, dict[str, float]] = {
    DECOY_CHECK: {"accept_all": 0.0, "reject_all": 1.0, "random": RANDOM_VERDICT},
    PLANTED_CHECK: {"accept_all": 0.0, "reject_all": 0.0, "random": 0.0},
}
MAX_SHARE = 0.5  # the largest share of decoys or planted outputs a campaign takes (quality.services)


@dataclass(frozen=True)
class Met:
    """How many checks of one kind a participant meets: `low` or `low + 1`, the latter with probability `frac`
    (the handout keeps everyone within one of the design's rate)."""

    low: int
    frac: float = 0.0

    @classmethod
    def of(cls, mean: float) -> Met:
        low = math.floor(mean + 1e-9)
        return cls(low, round(max(0.0, mean - low), 9))

    @property
    def mean(self) -> float:
        return self.low + self.frac


def vigilance_flags(k: int, n: int, vigilance_min: float) -> bool:
    """Whether k passed checks of n flag under the campaign's vigilance rule (the flag rule itself decides)."""
    return DECOYS in flag_reasons(Figures(decoys=wilson(k, n)), vigilance_min=vigilance_min)


@cache
def flag_limit(n: int, vigilance_min: float) -> int:
    """The most checks of n a participant may pass and still be flagged; -1 when no score of n flags."""
    return max((k for k in range(n + 1) if vigilance_flags(k, n, vigilance_min)), default=-1)


def smallest_met(vigilance_min: float, limit: int = 10_000) -> int | None:
    """The fewest checks at which failing them all flags (0 of 3 at the default 0.6); None if none does."""
    return next((n for n in range(1, limit) if flag_limit(n, vigilance_min) >= 0), None)


def p_vigilance_flag(met: Met, p_pass: float, vigilance_min: float) -> float:
    """P(flagged) when each check met is passed independently with probability p_pass."""
    def at(n: int) -> float:
        top = flag_limit(n, vigilance_min)
        return float(binom.cdf(top, n, p_pass)) if top >= 0 else 0.0

    return (1 - met.frac) * at(met.low) + (met.frac * at(met.low + 1) if met.frac else 0.0)


def p_training_flag(keys: Sequence[str], passes: float, *, behaviour: str) -> float:
    """P(the qualification fails) for one kind of participant, from the span verdicts the training key holds.

    The score is the share of keyed spans answered as keyed, failed below `passes`: an accept-all participant
    scores the share keyed Error, a reject-all one the share keyed Not an error, a random one a binomial share."""
    n = len(keys)
    if n == 0:
        return 0.0
    if behaviour == "random":
        # Fails when fewer than passes x n are right: right answers k with k / n < passes.
        top = math.ceil(passes * n - 1e-9) - 1
        return float(binom.cdf(top, n, RANDOM_VERDICT)) if top >= 0 else 0.0
    answer = protocol.SPAN_OK if behaviour == "accept_all" else protocol.SPAN_NOT_ERROR
    score = sum(k == answer for k in keys) / n
    return 1.0 if score < passes else 0.0


@dataclass(frozen=True)
class Design:
    """What decides the checks' power, as the set-up knows it."""

    vigilance_min: float
    per_participant: int  # real outputs a participant judges
    decoys: float = 0.0  # the share asked
    decoys_met: float = 0.0  # decoys a participant meets on average (as made, on real outputs and copies)
    planted: float = 0.0
    planted_met: float = 0.0
    training_keys: tuple[str, ...] = ()  # the span verdicts of the training key
    training_pass: float = 0.8
    training_items: int = 0
    decoy_rate: float = 0.0  # decoys met per real output (what one more item per participant adds)


@dataclass(frozen=True)
class CheckPower:
    """One check's row of `checks_power`."""

    check: str
    met_per_participant: float
    p_flag: dict[str, float]
    smallest_fix: str | None

    def as_dict(self) -> dict:
        return {"check": self.check, "met_per_participant": self.met_per_participant, "p_flag": dict(self.p_flag),
                "smallest_fix": self.smallest_fix}

    @property
    def p_flag_pct(self) -> dict[str, float]:
        """The chances in percent with one decimal, as pages print them (0.0 only where nobody can be flagged)."""
        return {b: (round(100 * p, 1) or 0.1) if p > 0 else 0.0 for b, p in self.p_flag.items()}

    @property
    def flags_anyone(self) -> bool:
        return any(p > 0 for p in self.p_flag.values())


def _vigilance_row(check: str, met: float, design: Design, fix: str | None) -> CheckPower:
    p = {b: round(p_vigilance_flag(Met.of(met), PASSES[check][b], design.vigilance_min), 6) for b in BEHAVIOURS}
    return CheckPower(check, round(float(met), 3), p, None if p["accept_all"] >= 1 else fix)


def _items_needed(design: Design, met_at: Callable[[int], float], need: int, limit: int = 10_000) -> int | None:
    return next((n for n in range(design.per_participant + 1, limit) if met_at(n) >= need), None)


def _decoy_fix(design: Design, need: int | None) -> str | None:
    if need is None:
        return "raise vigilance_min: no number of decoys flags under this minimum"
    options = []
    if design.decoys_met > 0 and design.decoys:
        share = _share_for(design.decoys, design.decoys_met, need)
        if share is not None:
            options.append(f"decoys {share:g}")
    if design.decoy_rate > 0:
        items = _items_needed(design, lambda n: design.decoy_rate * n, need)
        if items is not None:
            options.append(f"{items} items per participant")
    return " or ".join(options) or f"outputs that take decoys: {need} decoys per participant flag, none are made"


def _share_for(share: float, met: float, need: int) -> float | None:
    """The smallest share (in steps of 0.05, at most MAX_SHARE) at which `met` decoys become `need`, taking the
    count as proportional to share / (1 - share) as the drawing asks for."""
    odds = share / (1 - share)
    for step in range(1, int(MAX_SHARE / 0.05) + 1):
        candidate = round(step * 0.05, 2)
        if candidate > share and met * (candidate / (1 - candidate)) / odds >= need - 1e-9:
            return candidate
    return None


def _planted_fix(design: Design, need: int | None) -> str | None:
    if need is None:
        return "raise vigilance_min: no number of planted outputs flags under this minimum"
    if not design.planted_met:
        return f"outputs that take planted errors: {need} per participant flag, none are made"
    options = []
    for step in range(1, int(MAX_SHARE / 0.05) + 1):
        share = round(step * 0.05, 2)
        if share > design.planted and planted_count(share, design.per_participant) >= need:
            options.append(f"planted {share:g}")
            break
    items = _items_needed(design, lambda n: planted_count(design.planted, n), need)
    if items is not None:
        options.append(f"{items} items per participant")
    return " or ".join(options) or None


def checks_power(design: Design) -> list[CheckPower]:
    """Each check's power for this design; a fix is sized as creation would act on it (planted copies by
    `planted_count`, decoys in proportion to the share's odds)."""
    rows = []
    need = smallest_met(design.vigilance_min)
    if design.decoys:
        rows.append(_vigilance_row(DECOY_CHECK, design.decoys_met, design, _decoy_fix(design, need)))
    if design.planted:
        rows.append(_vigilance_row(PLANTED_CHECK, design.planted_met, design,
                                   _planted_fix(design, need)))
    if design.training_items:
        p = {b: round(p_training_flag(design.training_keys, design.training_pass, behaviour=b), 6)
             for b in BEHAVIOURS}
        fix = None if any(p.values()) else ("give the training items a key (control_verdicts) with both Error and "
                                            "Not an error in it" if design.training_keys else
                                            "give the training items a key (control_verdicts)")
        rows.append(CheckPower(TRAINING_CHECK, float(len(design.training_keys)), p, fix))
    return rows


def p_flag_any(rows: Sequence[CheckPower], behaviour: str) -> float:
    """P(at least one check flags), the checks taken as independent (they are drawn on different items)."""
    miss = 1.0
    for row in rows:
        miss *= 1 - row.p_flag[behaviour]
    return 1 - miss


def weak_for(rows: Sequence[CheckPower]) -> list[str]:
    """The kinds of participant no check can flag."""
    return [b for b in BEHAVIOURS if not any(row.p_flag[b] > 0 for row in rows)]


SPEED_RULE = f"beside these, the rubber-stamp rule flags whoever is fast whatever the design: {STAMP_RULE.describe()}"
REASONS = {DECOY_CHECK: DECOYS, PLANTED_CHECK: PLANTED, TRAINING_CHECK: QUALIFICATION}
