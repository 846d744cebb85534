"""Table 4 of the OpeNLGauge paper: verdict counts, Span OK %, Exp. correct % and bootstrap intervals."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from django.db.models import Count, Q

from analytics.selectors.base import (
    DEFAULT_RESAMPLES,
    ITEM,
    RUN,
    Scope,
    _raw_rows,
    annotator_names,
    judgments_in_scope,
)
from corpus.protocols.opennlgauge import EXPLANATION_OK, SPAN_OK
from stats.accuracy import EXPLANATION_ROWS, FLAGS, SPAN_COLUMNS, AccuracyMatrix
from stats.bootstrap import Interval, bootstrap_ratio_cis_grouped
from stats.shares import ratio

# --------------------------------------------------------------------------------------------- accuracy


@dataclass
class AccuracyGroup:
    """Table 4 for one group of judgments (an evaluator, an evaluator and annotator, an annotator, or all)."""

    matrix: AccuracyMatrix = field(default_factory=AccuracyMatrix)
    flags: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FLAGS, 0))
    n_items: int = 0
    span_ok_ci: Interval | None = None
    exp_correct_ci: Interval | None = None

    def flag_rates(self) -> dict[str, float | None]:
        return {name: ratio(n, self.matrix.total) for name, n in self.flags.items()}


@dataclass
class AccuracyReport:
    by_run: dict[int | None, AccuracyGroup]
    by_run_annotator: dict[tuple[int | None, int], AccuracyGroup]
    by_annotator: dict[int, AccuracyGroup]
    pooled: AccuracyGroup
    incomplete: int
    annotators: dict[int, str]


# Per-(run, annotator, item) columns: the 24 (explanation, span) verdict cells, the five flags, incomplete.
_CELLS: tuple[tuple[str, str], ...] = tuple((e, v) for e in EXPLANATION_ROWS for v in SPAN_COLUMNS)
_RATIOS = {"span_ok": (1, 0), "exp_correct": (2, 0)}
_COMPLETE = Q(span_verdict__in=SPAN_COLUMNS, explanation_verdict__in=EXPLANATION_ROWS)


def _vector_aggregates() -> dict[str, Count]:
    columns = {
        f"c_{e}__{v}": Count("id", filter=Q(explanation_verdict=e, span_verdict=v)) for e, v in _CELLS
    }
    columns |= {name: Count("id", filter=_COMPLETE & Q(**{name: True})) for name in FLAGS}
    columns["incomplete"] = Count("id", filter=~_COMPLETE)
    return columns


def accuracy_report(scope: Scope, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> AccuracyReport:
    """Return Table 4 per evaluator run, per run and annotator, per annotator and pooled, with 95% CIs.

    One GROUP BY (run, annotator, item) query counts every verdict pair, flag and incomplete judgment;
    the matrices are sums of its rows and the bootstrap resamples its items (spans of one output hang
    together), once for all groups: every interval reflects the items of the whole scope being redrawn.
    """
    aggregates = _vector_aggregates()
    rows = _raw_rows(
        judgments_in_scope(scope, complete=False)
        .values(RUN, "annotator_id", ITEM)
        .annotate(**aggregates)
        .order_by(RUN, "annotator_id", ITEM)
    )
    table = np.array(rows, dtype=float).reshape(-1, 3 + len(aggregates))
    n_cells = len(_CELLS)
    incomplete = int(table[:, -1].sum())
    table = table[table[:, 3 : 3 + n_cells].sum(axis=1) > 0]
    run_col = np.nan_to_num(table[:, 0], nan=-1).astype(np.int64)  # spans of no run group together
    annotator_col = table[:, 1].astype(np.int64)

    def run_key(value: int) -> int | None:
        return None if value == -1 else int(value)

    pooled = AccuracyGroup()
    keys: list[tuple[str, object]] = [("pooled", None)]
    members: list[np.ndarray] = [np.ones(len(table), dtype=bool)]
    for run_id in np.unique(run_col):
        keys.append(("run", run_key(run_id)))
        members.append(run_col == run_id)
    for annotator_id in np.unique(annotator_col):
        keys.append(("annotator", int(annotator_id)))
        members.append(annotator_col == annotator_id)
    for run_id, annotator_id in sorted(set(zip(run_col.tolist(), annotator_col.tolist(), strict=True))):
        keys.append(("pair", (run_key(run_id), annotator_id)))
        members.append((run_col == run_id) & (annotator_col == annotator_id))

    items, item_index = np.unique(table[:, 2], return_inverse=True)
    values = table[:, 3:-1]
    # every group's per-item sums: row r of the table goes to cell (item of r, g) for each group g it belongs to
    item_index = item_index.ravel()
    targets = np.concatenate([item_index[chosen] * len(keys) + g for g, chosen in enumerate(members)])
    sources = np.concatenate([np.flatnonzero(chosen) for chosen in members])
    # one weighted bincount per column sums the rows into their (item, group) cells; faster here than a
    # sparse matrix product with as many columns
    picked = values[sources]
    size = items.size * len(keys)
    dense = np.stack(
        [np.bincount(targets, weights=picked[:, c], minlength=size) for c in range(values.shape[1])], axis=1
    ).reshape(items.size, len(keys), values.shape[1])
    cells = dense[:, :, :n_cells].reshape(items.size, len(keys), len(EXPLANATION_ROWS), len(SPAN_COLUMNS))
    judged = cells.sum(axis=(2, 3))
    ok = cells[:, :, :, SPAN_COLUMNS.index(SPAN_OK)].sum(axis=2)
    correct = cells[:, :, EXPLANATION_ROWS.index(EXPLANATION_OK), :].sum(axis=2)
    cis = bootstrap_ratio_cis_grouped(
        np.stack((judged, ok, correct), axis=2), _RATIOS, n_resamples=n_resamples, seed=seed
    )
    totals = cells.sum(axis=0)
    flag_totals = dense[:, :, n_cells:].sum(axis=0)

    by_run: dict[int | None, AccuracyGroup] = {}
    by_pair: dict[tuple[int | None, int], AccuracyGroup] = {}
    by_annotator: dict[int, AccuracyGroup] = {}
    for g, (kind, key) in enumerate(keys):
        group = pooled if kind == "pooled" else AccuracyGroup()
        for i, e in enumerate(EXPLANATION_ROWS):
            for j, v in enumerate(SPAN_COLUMNS):
                group.matrix.counts[e][v] = int(totals[g, i, j])
        group.flags = {name: int(flag_totals[g, k]) for k, name in enumerate(FLAGS)}
        group.n_items = int(np.count_nonzero(judged[:, g]))
        group.span_ok_ci, group.exp_correct_ci = cis[g]["span_ok"], cis[g]["exp_correct"]
        if kind == "run":
            by_run[key] = group  # type: ignore[index]
        elif kind == "annotator":
            by_annotator[key] = group  # type: ignore[index]
        elif kind == "pair":
            by_pair[key] = group  # type: ignore[index]
    return AccuracyReport(
        by_run=by_run, by_run_annotator=by_pair, by_annotator=by_annotator, pooled=pooled,
        incomplete=incomplete, annotators=annotator_names(by_annotator),
    )


