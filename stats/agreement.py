"""Agreement between coders of the same units: Krippendorff's alpha (nominal) and pairwise agreement."""

from __future__ import annotations

from collections.abc import Sequence

import krippendorff
import numpy as np

from stats.correlation import finite
from stats.shares import ratio


def krippendorff_alpha_nominal(value_counts: Sequence[Sequence[int]] | np.ndarray) -> float | None:
    """Return Krippendorff's alpha (nominal) from a units x categories table of how many coders chose what.

    Units coded by fewer than two coders carry no pairs and are dropped. None when no unit has two codes
    or when every pairable value is the same category (expected disagreement 0: alpha is 0/0).
    """
    table = np.asarray(value_counts, dtype=float)
    if table.size == 0:
        return None
    table = table[table.sum(axis=1) >= 2]
    if table.shape[0] == 0 or np.count_nonzero(table.sum(axis=0)) < 2:
        return None
    return finite(krippendorff.alpha(value_counts=table, level_of_measurement="nominal"))


def observed_agreement(value_counts: Sequence[Sequence[int]] | np.ndarray) -> float | None:
    """Return the share of agreeing coder pairs among all pairs of coders of the same unit.

    A unit with k codes holds k(k-1)/2 pairs, of which sum_c n_c(n_c-1)/2 agree. This is the pooled
    pairwise percentage agreement (as a fraction).
    """
    table = np.asarray(value_counts, dtype=float)
    if table.size == 0:
        return None
    per_unit = table.sum(axis=1)
    pairs = (per_unit * (per_unit - 1) / 2).sum()
    agreeing = (table * (table - 1) / 2).sum()
    return ratio(float(agreeing), float(pairs))
