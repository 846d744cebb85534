"""Tables of a dashboard (columns + rows of plain values), shared by the pages, the downloads and the API."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from analytics.formatting import FEW_MARK, FEW_NOTE, MIN_UNITS, SIMULATED_MARK, ColumnKind, display
from analytics.selectors import AccuracyGroup, DashboardData, Reference, RunInfo
from analytics.selectors.quality import QualitySummary
from corpus import protocols
from corpus.models import MatchKind
from corpus.protocols import opennlgauge as protocol
from corpus.spreadsheet import sheet_writer
from quality.engine import figures, power
from stats.accuracy import EXPLANATION_ROWS, SPAN_COLUMNS
from stats.bootstrap import Interval
from stats.calibration import SEVERITIES
from stats.intervals import Proportion
from stats.overlap import PRF

__all__ = ["FEW_MARK", "FEW_NOTE", "MIN_UNITS", "SIMULATED_MARK", "Cell", "Column", "Table"]
SPAN_LABELS = dict(protocol.choices(protocol.SPAN_VERDICTS))
EXPLANATION_LABELS = dict(protocol.choices(protocol.EXPLANATION_VERDICTS))
FLAG_LABELS = dict(protocol.choices(protocol.FLAGS))
MATCH_LABELS = dict(MatchKind.choices)


@dataclass(frozen=True)
class Column:
    """`count` names the row's unit count behind this figure (marked below MIN_UNITS); `best` bolds the highest
    value among rows that are not pooled and have enough units; `source` says the cell names an annotation
    source (a run), which a simulated run marks; `group` keeps columns together when a report splits a wide
    table (a figure and its interval)."""

    key: str
    label: str
    kind: ColumnKind = "text"
    count: str = ""
    best: bool = False
    source: bool = False
    group: str = ""


@dataclass(frozen=True)
class Cell:
    text: str
    few: bool = False  # fewer than MIN_UNITS units behind it
    best: bool = False


@dataclass
class Table:
    """A titled table; percentages are on the 0-100 scale, rates that are undefined are None. `simulated` holds
    the sources (run labels) the simulated server answered: their names carry the mark wherever printed."""

    key: str
    title: str
    columns: list[Column]
    rows: list[dict[str, Any]] = field(default_factory=list)
    note: str = ""
    # Why the page shows no figures here (nothing judged yet, no reference, ...); the rows stay for the API.
    empty_reason: str = ""
    simulated: frozenset[str] = frozenset()

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), ensure_ascii=False, indent=1)

    def is_simulated(self, row: dict[str, Any]) -> bool:
        """Whether a source the row names was answered by the simulated server."""
        return any(c.source and row.get(c.key) in self.simulated for c in self.columns)

    def as_dict(self) -> dict[str, Any]:
        return {
            "key": self.key, "title": self.title, "note": self.note,
            "columns": [{"key": c.key, "label": c.label, "kind": c.kind} for c in self.columns],
            "rows": [{c.key: row.get(c.key) for c in self.columns} | ({"simulated": True} if self.is_simulated(row)
                                                                      else {}) for row in self.rows],
        }

    def _cell(self, row: dict[str, Any], column: Column) -> Any:
        """A cell as people read it: a simulated run's name carries the mark (the API keeps the bare label and
        says `"simulated": true` beside it)."""
        value = row.get(column.key)
        if column.source and value is not None and value in self.simulated:
            return f"{value} {SIMULATED_MARK}"
        return value

    def to_csv(self) -> str:
        out = io.StringIO()
        writer = sheet_writer(out)
        writer.writerow([c.key for c in self.columns])
        for row in self.rows:
            writer.writerow(["" if row.get(c.key) is None else self._cell(row, c) for c in self.columns])
        return out.getvalue()

    def display_rows(self) -> list[list[str]]:
        return [[display(self._cell(row, c), c.kind) for c in self.columns] for row in self.rows]

    def display_cells(self) -> list[list[Cell]]:
        """Rows of printed cells with their marks: few units behind a figure, best of its column."""
        best: dict[str, float] = {}
        for c in self.columns:
            candidates = [
                row[c.key] for row in self.rows
                if c.best and row.get(c.key) is not None and not row.get("pooled") and not _few(row, c)
            ]
            if len(candidates) > 1:
                best[c.key] = max(candidates)
        return [
            [Cell(display(self._cell(row, c), c.kind), few=_few(row, c) and row.get(c.key) is not None,
                  best=c.key in best and row.get(c.key) == best[c.key]) for c in self.columns]
            for row in self.rows
        ]

    @property
    def has_few(self) -> bool:
        return any(cell.few for row in self.display_cells() for cell in row)

    @property
    def full_note(self) -> str:
        """The note with the few-units legend when a cell carries the mark (every format prints this one)."""
        return self.note + (" " + FEW_NOTE if self.has_few and FEW_NOTE not in self.note else "")


def _few(row: dict[str, Any], column: Column) -> bool:
    count = row.get(column.count) if column.count else None
    return count is not None and count < MIN_UNITS


def _pct(value: float | None) -> float | None:
    return None if value is None else 100 * value


def _ci(interval: Interval | None) -> tuple[float | None, float | None]:
    return (None, None) if interval is None else (100 * interval.low, 100 * interval.high)


RUN = Column("run", "Run", source=True)


def _run_name(runs: dict[int, RunInfo], run_id: int | None) -> str:
    if run_id is None:
        return "(no run)"
    run = runs.get(run_id)
    return run.label if run else f"run {run_id}"


def _run_cells(runs: dict[int, RunInfo], run_id: int | None) -> dict[str, Any]:
    run = runs.get(run_id) if run_id is not None else None
    return {
        "run": _run_name(runs, run_id), "run_id": run_id, "shown_as": run.neutral_label if run else "",
        "evaluator": run.evaluator if run else "", "aspect": run.aspect if run else "",
    }


RUN_COLUMNS = [
    RUN, Column("shown_as", "Shown as"), Column("evaluator", "Evaluator"), Column("aspect", "Aspect"),
]
SPAN_OK_COLUMNS = [
    Column("span_ok_pct", "Span OK %", "pct", count="judged", best=True, group="span_ok"),
    Column("span_ok_low", "95% CI low", "pct", group="span_ok"),
    Column("span_ok_high", "95% CI high", "pct", group="span_ok"),
]
EXP_CORRECT_COLUMNS = [
    Column("exp_correct_pct", "Exp. correct %", "pct", count="judged", best=True, group="exp_correct"),
    Column("exp_correct_low", "95% CI low", "pct", group="exp_correct"),
    Column("exp_correct_high", "95% CI high", "pct", group="exp_correct"),
]
RATE_COLUMNS = [
    Column("judged", "Judged spans", "int"), Column("items", "Items", "int"), *SPAN_OK_COLUMNS, *EXP_CORRECT_COLUMNS,
]


def _rate_cells(group: AccuracyGroup) -> dict[str, Any]:
    span_low, span_high = _ci(group.span_ok_ci)
    exp_low, exp_high = _ci(group.exp_correct_ci)
    return {
        "judged": group.matrix.total, "items": group.n_items,
        "span_ok_pct": _pct(group.matrix.span_ok), "span_ok_low": span_low, "span_ok_high": span_high,
        "exp_correct_pct": _pct(group.matrix.exp_correct), "exp_correct_low": exp_low, "exp_correct_high": exp_high,
    }


def _run_order(data: DashboardData, ids: set[int | None]) -> list[int | None]:
    known = [r.run_id for r in data.runs if r.run_id in ids]
    return known + sorted((i for i in ids if i not in known), key=lambda i: (i is None, i or 0))


def accuracy_summary_table(data: DashboardData) -> Table:
    runs = {r.run_id: r for r in data.runs}
    table = Table(
        "accuracy", "Accuracy per evaluator (Table 4)", RUN_COLUMNS + RATE_COLUMNS,
        note="Plain figures over the judged spans, as in the paper's Table 4: every judgment counts; Span OK = "
        "Error / all judged spans; Exp. correct = Correct / all. 95% percentile bootstrap intervals resample "
        "items. In a campaign that judged a designed sample, these describe the sample only: the estimates "
        "for all spans are in 'Estimates for all spans (designed sample)'.",
    )
    for run_id in _run_order(data, set(data.accuracy.by_run)):
        table.rows.append(_run_cells(runs, run_id) | _rate_cells(data.accuracy.by_run[run_id]))
    table.rows.append({"run": "All evaluators", "pooled": True} | _rate_cells(data.accuracy.pooled))
    return table


def accuracy_matrix_table(data: DashboardData) -> Table:
    runs = {r.run_id: r for r in data.runs}
    columns = [RUN, Column("explanation", "Explanation")]
    columns += [Column(v, SPAN_LABELS[v], "int") for v in SPAN_COLUMNS] + [Column("total", "Total", "int")]
    table = Table("matrix", "Explanation x span verdict counts", columns)
    groups = [(_run_name(runs, r), data.accuracy.by_run[r]) for r in _run_order(data, set(data.accuracy.by_run))]
    for name, group in [*groups, ("All evaluators", data.accuracy.pooled)]:
        m = group.matrix
        for e in EXPLANATION_ROWS:
            table.rows.append(
                {"run": name, "explanation": EXPLANATION_LABELS[e], "total": m.row_total(e)} | m.counts[e]
            )
        table.rows.append(
            {"run": name, "explanation": "Total", "total": m.total} | {s: m.column_total(s) for s in SPAN_COLUMNS}
        )
    return table


def accuracy_by_annotator_table(data: DashboardData) -> Table:
    runs = {r.run_id: r for r in data.runs}
    names = data.accuracy.annotators
    table = Table("accuracy_by_annotator", "Accuracy per evaluator and annotator", [
        RUN, Column("annotator", "Annotator"), *RATE_COLUMNS,
    ])
    order = {run_id: i for i, run_id in enumerate(_run_order(data, set(data.accuracy.by_run)))}
    for (run_id, annotator_id), group in sorted(
        data.accuracy.by_run_annotator.items(), key=lambda kv: (order.get(kv[0][0], 0), names.get(kv[0][1], ""))
    ):
        table.rows.append(
            {"run": _run_name(runs, run_id), "annotator": names.get(annotator_id, str(annotator_id))}
            | _rate_cells(group)
        )
    for annotator_id, group in sorted(data.accuracy.by_annotator.items(), key=lambda kv: names.get(kv[0], "")):
        table.rows.append(
            {"run": "All evaluators", "annotator": names.get(annotator_id, str(annotator_id)), "pooled": True}
            | _rate_cells(group)
        )
    return table


def flags_table(data: DashboardData) -> Table:
    runs = {r.run_id: r for r in data.runs}
    columns = [*RUN_COLUMNS, Column("judged", "Judged spans", "int")]
    for name, label in FLAG_LABELS.items():
        columns += [Column(name, label, "int"), Column(f"{name}_pct", f"{label} %", "pct")]
    table = Table("flags", "Failure profile: flags per evaluator", columns)
    groups = [(_run_cells(runs, r), data.accuracy.by_run[r]) for r in _run_order(data, set(data.accuracy.by_run))]
    for cells, group in [*groups, ({"run": "All evaluators"}, data.accuracy.pooled)]:
        rates = group.flag_rates()
        row = cells | {"judged": group.matrix.total}
        for name in FLAG_LABELS:
            row |= {name: group.flags[name], f"{name}_pct": _pct(rates[name])}
        table.rows.append(row)
    return table


def agreement_table(data: DashboardData) -> Table:
    runs = {r.run_id: r for r in data.runs}
    table = Table("agreement", "Inter-annotator agreement (spans judged by two or more annotators)", [
        RUN, Column("units", "Spans", "int"),
        Column("alpha_span", "Krippendorff alpha, span", "num", count="units"),
        Column("alpha_explanation", "Krippendorff alpha, explanation", "num", count="units"),
        Column("agree_span_pct", "Pairwise agreement, span %", "pct", count="units"),
        Column("agree_explanation_pct", "Pairwise agreement, explanation %", "pct", count="units"),
    ], note="Nominal alpha; it is undefined (—) with no such span or when every verdict is the same.")
    report = data.agreement
    entries = [(_run_name(runs, r), report.by_run[r]) for r in _run_order(data, set(report.by_run))]
    for name, s in [*entries, ("All evaluators", report.pooled)]:
        table.rows.append({
            "run": name, "pooled": name == "All evaluators", "units": s.n_units, "alpha_span": s.alpha_span,
            "alpha_explanation": s.alpha_explanation,
            "agree_span_pct": _pct(s.observed_span), "agree_explanation_pct": _pct(s.observed_explanation),
        })
    return table


def pairwise_table(data: DashboardData) -> Table:
    names = data.agreement.annotators
    table = Table("pairwise", "Pairwise agreement per annotator pair", [
        Column("annotator_a", "Annotator"), Column("annotator_b", "Annotator"),
        Column("shared", "Shared spans", "int"), Column("span_pct", "Span verdict agreement %", "pct"),
        Column("explanation_pct", "Explanation verdict agreement %", "pct"),
    ])
    for p in data.agreement.pairs:
        table.rows.append({
            "annotator_a": names.get(p.annotator_a, str(p.annotator_a)),
            "annotator_b": names.get(p.annotator_b, str(p.annotator_b)),
            "shared": p.n, "span_pct": _pct(p.span_share), "explanation_pct": _pct(p.explanation_share),
        })
    return table


def distribution_table(data: DashboardData) -> Table:
    columns = [Column("annotator", "Annotator"), Column("judged", "Judged spans", "int")]
    columns += [Column(f"span_{v}", f"{SPAN_LABELS[v]} %", "pct") for v in SPAN_COLUMNS]
    columns += [Column(f"exp_{v}", f"Exp. {EXPLANATION_LABELS[v].lower()} %", "pct") for v in EXPLANATION_ROWS]
    table = Table("distribution", "Verdict distribution per annotator and of the pool", columns)
    names = data.accuracy.annotators
    entries = sorted(data.accuracy.by_annotator.items(), key=lambda kv: names.get(kv[0], ""))
    for name, group in [(names.get(a, str(a)), g) for a, g in entries] + [("Pool", data.accuracy.pooled)]:
        m = group.matrix
        row: dict[str, Any] = {"annotator": name, "judged": m.total}
        row |= {f"span_{v}": _pct(m.column_total(v) / m.total) if m.total else None for v in SPAN_COLUMNS}
        row |= {f"exp_{v}": _pct(m.row_total(v) / m.total) if m.total else None for v in EXPLANATION_ROWS}
        table.rows.append(row)
    return table


def _prf_cells(prefix: str, prf: PRF) -> dict[str, Any]:
    return {
        f"{prefix}_p": _pct(prf.precision), f"{prefix}_r": _pct(prf.recall), f"{prefix}_f1": _pct(prf.f1),
    }


def reference_name(ref: Reference | None) -> str:
    """How a note names the reference spans ("gold spans 'rotowire'", not "gold gold")."""
    if ref is None:
        return "none"
    if ref.kind == "gold":
        return "gold spans" + (f" from source '{ref.source}'" if ref.source and ref.source != "gold" else "")
    if ref.kind == "external":
        return f"spans imported from '{ref.source}'"
    return "the spans the campaign's humans " + ("added or confirmed" if ref.include_confirmed else "added")


def overlap_table(data: DashboardData) -> Table:
    runs = {r.run_id: r for r in [*data.runs, *data.imported]}
    columns = [
        *RUN_COLUMNS, Column("items", "Items", "int"), Column("predicted", "Predicted spans", "int"),
        Column("unlocated", "Without offsets", "int"), Column("reference", "Reference spans", "int"),
        Column("matched_exact", "Matched exactly", "int"), Column("matched_overlap", "Matched by overlap", "int"),
        Column("missed", "Missed errors", "int"),
    ]
    for prefix, label in (("exact", "Exact"), ("overlap", "Overlap"), ("char", "Character")):
        columns += [
            Column(f"{prefix}_p", f"{label} P %", "pct"), Column(f"{prefix}_r", f"{label} R %", "pct"),
            Column(f"{prefix}_f1", f"{label} F1 %", "pct"),
        ]
    ref = data.reference
    where = reference_name(ref)
    table = Table(
        "overlap", "Overlap with reference spans", columns,
        note=f"Reference: {where}. One-to-one maximum matching; missed = reference spans no prediction overlaps.",
    )
    if not any(value.startswith("gold") for value, _ in data.references):
        table.note += (" This dataset has no gold spans (import them with import_items --source gold), so "
                       + ("the reference is the campaign's humans." if ref else "there is nothing to compare with."))
    for row in data.overlap:
        table.rows.append(
            _run_cells(runs, row.run_id) | {
                "items": row.n_items, "predicted": row.overlap.n_predicted, "unlocated": row.unlocated,
                "reference": row.overlap.n_reference, "matched_exact": row.exact.matched,
                "matched_overlap": row.overlap.matched, "missed": row.overlap.missed,
            }
            | _prf_cells("exact", row.exact) | _prf_cells("overlap", row.overlap) | _prf_cells("char", row.chars)
        )
    return table


def alignment_table(data: DashboardData) -> Table:
    runs = {r.run_id: r for r in data.runs}
    columns = [
        *RUN_COLUMNS, Column("spans", "Spans", "int"),
        *[Column(f"match_{kind}", label, "int") for kind, label in MATCH_LABELS.items()],
        Column("ambiguous", "Ambiguous", "int"), Column("ambiguous_pct", "Ambiguous % of placed", "pct"),
    ]
    table = Table(
        "alignment", "Span alignment", columns,
        note="Spans of each evaluator's final answers by how their location was found in the text. Ambiguous: "
        "the location occurs more than once and neither its notes nor the explanation said which; the span "
        "stands on the first such occurrence and the expert is told.",
    )
    for row in data.alignment:
        table.rows.append(
            _run_cells(runs, row.run_id) | {"spans": row.spans, "ambiguous": row.ambiguous,
                                            "ambiguous_pct": _pct(row.ambiguous_share)}
            | {f"match_{kind}": row.by_match.get(kind, 0) for kind in MATCH_LABELS}
        )
    return table


def budget_problems_table(data: DashboardData) -> Table:
    runs = {r.run_id: r for r in data.runs}
    table = Table(
        "budget_problems", "Items stopped by the LLM budget", [
            *RUN_COLUMNS, Column("prompt_too_long", "Prompt too long", "int"),
            Column("answer_cut", "Answer cut", "int"),
        ],
        note="(item, model) answers of each run whose prompt did not fit the model's context (prompt_too_long: "
        "not sent, or cut by the server; no machine answer) or whose answer was cut at the answer budget "
        "(answer_cut: a partial answer). The accuracy figures count judged spans only: a prompt_too_long "
        "answer adds no span, so it is left out of them (not counted as wrong, and its item is not counted "
        "when no other model answered it); an answer_cut answer counts with the spans parsed before the cut. "
        "In the overlap with a reference, a failed answer the run stored is an answer without spans: the "
        "reference's errors on that item count as missed.",
    )
    for run in data.runs:
        counts = data.problems.get(run.run_id, {})
        table.rows.append(_run_cells(runs, run.run_id) | {
            "prompt_too_long": counts.get("prompt_too_long", 0), "answer_cut": counts.get("answer_cut", 0),
        })
    return table


def calibration_table(data: DashboardData) -> Table:
    runs = {r.run_id: r for r in data.runs}
    table = Table("calibration", "Severity calibration: machine against human-corrected", [
        *RUN_COLUMNS, Column("n", "Corrected judgments", "int"),
        Column("mean_signed_difference", "Mean signed difference (machine - human)", "num"),
        Column("mae", "MAE", "num"), Column("exact_pct", "Same severity %", "pct"),
        Column("spearman", "Spearman", "num"), Column("spearman_p", "p", "p"),
    ])
    entries = [(_run_cells(runs, r), data.calibration[r]) for r in _run_order(data, set(data.calibration))]
    for cells, c in [*entries, ({"run": "All evaluators"}, data.calibration_pooled)]:
        table.rows.append(cells | {
            "n": c.n, "mean_signed_difference": c.mean_signed_difference, "mae": c.mean_absolute_error,
            "exact_pct": _pct(c.exact_share), "spearman": c.spearman, "spearman_p": c.spearman_p,
        })
    return table


def severity_confusion_table(data: DashboardData) -> Table:
    runs = {r.run_id: r for r in data.runs}
    columns = [RUN, Column("machine", "Machine severity", "int")]
    columns += [Column(f"human_{s}", f"Human {s}", "int") for s in SEVERITIES]
    table = Table("severity_confusion", "Severity confusion (rows machine, columns human)", columns)
    entries = [(_run_name(runs, r), data.calibration[r]) for r in _run_order(data, set(data.calibration))]
    for name, c in [*entries, ("All evaluators", data.calibration_pooled)]:
        for s, counts in zip(SEVERITIES, c.confusion, strict=True):
            cells = {f"human_{h}": n for h, n in zip(SEVERITIES, counts, strict=True)}
            table.rows.append({"run": name, "machine": s} | cells)
    return table


def scores_table(data: DashboardData) -> Table:
    runs = {r.run_id: r for r in data.runs}
    table = Table("scores", "Evaluator scores against the dataset's human scores", [
        *RUN_COLUMNS, Column("human_key", "Human score"), Column("kind", "Annotation kind"), Column("n", "n", "int"),
        Column("pearson", "Pearson r", "num", count="n", best=True), Column("pearson_p", "p", "p"),
        Column("spearman", "Spearman rho", "num", count="n", best=True), Column("spearman_p", "p", "p"),
        Column("kendall", "Kendall tau-b", "num", count="n", best=True), Column("kendall_p", "p", "p"),
    ])
    for row in data.scores:
        c = row.correlation
        table.rows.append(_run_cells(runs, row.run_id) | {
            "human_key": row.human_key, "kind": row.kind, "n": c.n, "pearson": c.pearson, "pearson_p": c.pearson_p,
            "spearman": c.spearman, "spearman_p": c.spearman_p, "kendall": c.kendall, "kendall_p": c.kendall_p,
        })
    return table


def empty_state(data: DashboardData) -> str | None:
    """The sentence shown instead of figures while no verdict is in (None once one is)."""
    if data.accuracy.pooled.matrix.total:
        return None
    assigned = sum(p.assigned for p in data.progress)
    judged = sum(p.judged for p in data.progress)
    return (f"{assigned} item{'s' if assigned != 1 else ''} assigned, {judged} judged: figures appear with the "
            "first verdicts.")


def overview_table(data: DashboardData) -> Table:
    """Per evaluator the headline of Table 4 (with intervals and n) beside the agreement on its spans."""
    runs = {r.run_id: r for r in data.runs}
    table = Table("overview", "Overview per evaluator", [
        RUN, *SPAN_OK_COLUMNS, *EXP_CORRECT_COLUMNS, Column("judged", "n (judged spans)", "int"),
        Column("alpha_span", "alpha span", "num", count="units", group="alpha"),
        Column("alpha_explanation", "alpha explanation", "num", count="units", group="alpha"),
        Column("units", "Spans with 2+ judges", "int", group="alpha"), Column("shown_as", "Shown as"),
        Column("aspect", "Aspect"),
    ], note="Span OK %, Exp. correct % and their 95% bootstrap intervals are Table 4's; alpha is Krippendorff's "
       "nominal alpha over the spans two or more annotators judged.")
    ids = [r.run_id for r in data.runs] + sorted(
        (r for r in data.accuracy.by_run if r not in runs), key=lambda r: (r is None, r or 0)
    )
    pooled_alpha = data.agreement.pooled
    for run_id in ids:
        group = data.accuracy.by_run.get(run_id)
        alpha = data.agreement.by_run.get(run_id)
        table.rows.append(_run_cells(runs, run_id) | (_rate_cells(group) if group else {"judged": 0}) | {
            "units": alpha.n_units if alpha else 0, "alpha_span": alpha.alpha_span if alpha else None,
            "alpha_explanation": alpha.alpha_explanation if alpha else None,
        })
    table.rows.append({"run": "All evaluators", "pooled": True} | _rate_cells(data.accuracy.pooled) | {
        "units": pooled_alpha.n_units, "alpha_span": pooled_alpha.alpha_span,
        "alpha_explanation": pooled_alpha.alpha_explanation,
    })
    return table


def progress_table(data: DashboardData) -> Table:
    table = Table("progress", "Progress: items judged of items assigned", [
        Column("annotator", "Annotator"), Column("assigned", "Assigned", "int"), Column("judged", "Judged", "int"),
        Column("judged_pct", "Judged %", "pct"),
    ], note="An item assigned to two annotators counts twice; qualification (training) items are left out.")
    rows = [(p.annotator, p.assigned, p.judged) for p in data.progress]
    total = ("All annotators", sum(r[1] for r in rows), sum(r[2] for r in rows))
    for name, assigned, judged in [*rows, total]:
        table.rows.append({"annotator": name, "assigned": assigned, "judged": judged,
                           "judged_pct": 100 * judged / assigned if assigned else None})
    return table


def explanations_table(data: DashboardData) -> Table:
    """Each evaluator's explanations by verdict: counts and shares of its judged spans."""
    runs = {r.run_id: r for r in data.runs}
    columns = [RUN, Column("judged", "Judged spans", "int")]
    for v in EXPLANATION_ROWS:
        columns += [Column(v, EXPLANATION_LABELS[v], "int"), Column(f"{v}_pct", "%", "pct", count="judged")]
    table = Table("explanations", "Explanation verdicts per evaluator", columns)
    groups = [(_run_name(runs, r), data.accuracy.by_run[r]) for r in _run_order(data, set(data.accuracy.by_run))]
    for name, group in [*groups, ("All evaluators", data.accuracy.pooled)]:
        m = group.matrix
        row: dict[str, Any] = {"run": name, "judged": m.total, "pooled": name == "All evaluators"}
        for v in EXPLANATION_ROWS:
            row |= {v: m.row_total(v), f"{v}_pct": _pct(m.row_total(v) / m.total) if m.total else None}
        table.rows.append(row)
    return table


TABLE_BUILDERS: dict[str, Callable[[DashboardData], Table]] = {
    "overview": overview_table,
    "progress": progress_table,
    "accuracy": accuracy_summary_table,
    "explanations": explanations_table,
    "matrix": accuracy_matrix_table,
    "accuracy_by_annotator": accuracy_by_annotator_table,
    "flags": flags_table,
    "agreement": agreement_table,
    "pairwise": pairwise_table,
    "distribution": distribution_table,
    "overlap": overlap_table,
    "alignment": alignment_table,
    "budget_problems": budget_problems_table,
    "calibration": calibration_table,
    "severity_confusion": severity_confusion_table,
    "scores": scores_table,
}


# Tables made of expert verdicts: before the first complete judgment they are all zeros, so the page says why.
FROM_JUDGMENTS = frozenset({"accuracy", "matrix", "accuracy_by_annotator", "flags", "agreement", "pairwise",
                            "distribution", "calibration", "severity_confusion"})
NOTHING_JUDGED = ("No machine error has both verdicts yet, so there is nothing to count: figures appear with the "
                  "first complete judgment (experts judge on their queue; the campaign page shows progress).")
EMPTY_REASONS = {
    "agreement": "Agreement needs spans judged by two or more annotators; none is yet.",
    "pairwise": "Pairwise agreement needs two annotators who judged the same spans; none did yet.",
    "overlap": "No reference spans to compare with: import gold or human spans (or pick a reference above).",
    "alignment": "No machine spans in scope: run an evaluator on this dataset first.",
    "budget_problems": "No prompt was too long and no answer was cut: nothing to report.",
    "scores": "No evaluator score to correlate: the dataset has no human scores, or no run scored its items.",
    "severity_confusion": "No judged span has a corrected severity yet.",
}


def _finishing(key: str, build: Callable[[DashboardData], Table]) -> Callable[[DashboardData], Table]:
    """Wrap a table builder: each row of a simulated run says so, and an empty table says why (one place for
    every table)."""

    def finished(data: DashboardData) -> Table:
        table = build(data)
        table.simulated = frozenset(data.simulated_runs)
        if key in FROM_JUDGMENTS and data.accuracy.pooled.matrix.total == 0:
            table.empty_reason = NOTHING_JUDGED
        elif not table.rows:
            table.empty_reason = EMPTY_REASONS.get(key, "Nothing in this scope yet.")
        return table

    return finished


TABLE_BUILDERS = {key: _finishing(key, build) for key, build in TABLE_BUILDERS.items()}


def dashboard_tables(data: DashboardData) -> list[Table]:
    return [build(data) for build in TABLE_BUILDERS.values()]


def _share(value: float | None) -> float | None:
    return None if value is None else round(100 * value, 1)


def estimates_table(rows: list, half_width: float, simulated: Collection[str] = ()) -> Table:
    """The designed sample's estimates per evaluator (analytics.selectors.estimates), beside the plain figures."""
    columns = [RUN, Column("spans", "All spans", "int"), Column("sampled", "Sampled", "int")]
    for key, name in (("span_ok", "Span OK"), ("exp_correct", "Exp. correct")):
        columns += [
            Column(f"{key}_judged", f"{name}: judged", "int", group=key),
            Column(f"{key}_plain", f"{name} % over judged", "pct", group=key),
            Column(f"{key}_est", f"{name} % est. for all", "pct", group=key),
            Column(f"{key}_low", "95% low", "pct", group=key), Column(f"{key}_high", "95% high", "pct", group=key),
            Column(f"{key}_method", "interval", group=key),
            Column(f"{key}_more", f"more for ±{100 * half_width:g}", "int", group=key),
        ]
    table = Table(
        "estimates", "Estimates for all spans (designed sample)", columns,
        note="Stratified estimator over the campaign's random sample of each evaluator's spans, with its 95% "
        "interval (design-based, finite population correction; 'bootstrap' where a judged stratum has fewer "
        "than 10 spans). 'over judged' is the plain share of the judged spans; 'more' is how many more "
        "consensus-labelled spans the evaluator needs for an interval of the given half-width.",
        simulated=frozenset(simulated),
    )
    for row in rows:
        cells: dict[str, Any] = {"run": row.label, "spans": row.spans, "sampled": row.sampled}
        for key in ("span_ok", "exp_correct"):
            metric = getattr(row, key)
            est = metric.estimate
            cells |= {
                f"{key}_judged": est.judged, f"{key}_plain": _share(metric.plain), f"{key}_est": _share(est.point),
                f"{key}_low": _share(est.low), f"{key}_high": _share(est.high), f"{key}_method": est.method,
                f"{key}_more": metric.plan.more,
            }
        table.rows.append(cells)
    return table


# ---- the control arm ---------------------------------------------------------------------------------------

PRIMING_SHARES = (("recall", "Machine recall %"), ("precision_confirmed", "Confirmed after reveal %"),
                  ("precision_found", "Found unprimed %"), ("accepted_unfound", "Accepted unfound %"))


def priming_tables(rows: list, simulated: Collection[str] = ()) -> list[Table]:
    """The control arm's figures (analytics.selectors.priming) as the page and every report print them: the four
    shares with their intervals and n, then errors per output and time per error span in each arm."""
    labels = frozenset(simulated)
    evaluator = Column("evaluator", "Evaluator", source=True)
    shares = Table("priming", "Priming: the control arm", [
        evaluator,
        *[col for key, name in PRIMING_SHARES
          for col in (Column(key, name, "pct", count=f"{key}_n", group=key),
                      Column(f"{key}_low", "95% low", "pct", group=key),
                      Column(f"{key}_high", "95% high", "pct", group=key), Column(f"{key}_n", "n", "int", group=key))],
    ], note="Shares with 95% bootstrap intervals over outputs (seeded with the campaign's seed).", simulated=labels)
    per_output = Table("priming_errors", "Errors per output and time per error span, primed vs unprimed", [
        evaluator, Column("primed", "Primed", "num", group="errors"),
        Column("unprimed", "Unprimed", "num", group="errors"),
        Column("difference", "Difference", "num", count="n_outputs", group="difference"),
        Column("ci_low", "95% low", "num", group="difference"),
        Column("ci_high", "95% high", "num", group="difference"),
        Column("n_outputs", "Outputs seen both ways", "int", group="difference"),
        Column("seconds_primed", "Active s per span, primed", "num", group="seconds"),
        Column("seconds_unprimed", "Active s per span, unprimed", "num", group="seconds"),
    ], note="The difference is paired over the outputs one annotator saw unprimed and another primed. Time is "
       "active time (docs: analytics guide, working time).", simulated=labels)
    for row in rows:
        cells: dict[str, object] = {"evaluator": row.evaluator}
        for key, _ in PRIMING_SHARES:
            share = getattr(row, key)
            cells |= {key: _pct(share.value), f"{key}_low": _pct(share.ci_low),
                      f"{key}_high": _pct(share.ci_high), f"{key}_n": share.n}
        shares.rows.append(cells)
        epo = row.errors_per_output
        per_output.rows.append({
            "evaluator": row.evaluator, "primed": epo.primed, "unprimed": epo.unprimed, "difference": epo.difference,
            "ci_low": epo.ci_low, "ci_high": epo.ci_high, "n_outputs": epo.n_outputs,
            "seconds_primed": row.seconds_per_span.get("primed"),
            "seconds_unprimed": row.seconds_per_span.get("unprimed"),
        })
    return [shares, per_output]


# ---- the quality checks ------------------------------------------------------------------------------------


def _rate_ci(prefix: str, figure: Proportion) -> dict[str, Any]:
    return {f"{prefix}_pct": _pct(figure.rate), f"{prefix}_low": _pct(figure.low) if figure.n else None,
            f"{prefix}_high": _pct(figure.high) if figure.n else None}


def power_table(summary: QualitySummary) -> Table:
    """Each check's power as the campaign is set up: known answers a participant meets and the chance that the
    vigilance rule flags one who accepts everything, rejects everything or answers at random."""
    table = Table("checks_power", "The checks' power", [
        Column("check", "Check"), Column("met_per_participant", "Met per participant", "num"),
        Column("accept_all", "Flags accept-all %", "pct", group="p_flag"),
        Column("reject_all", "Flags reject-all %", "pct", group="p_flag"),
        Column("random", "Flags random %", "pct", group="p_flag"), Column("smallest_fix", "Smallest fix"),
    ], note=power.SPEED_RULE[0].upper() + power.SPEED_RULE[1:] + ".")
    for row in summary.power:
        table.rows.append({"check": row.check, "met_per_participant": row.met_per_participant,
                           **{b: _pct(p) for b, p in row.p_flag.items()}, "smallest_fix": row.smallest_fix or "-"})
    if not table.rows:
        table.empty_reason = "No check is set."
    return table


def quality_tables(summary: QualitySummary) -> list[Table]:
    """Each annotator's vigilance (decoys rejected, planted errors found, with Wilson 95% intervals), then who is
    flagged, why, and whether the figures count them."""
    vigilance = Table("vigilance", "Vigilance per annotator", [
        Column("annotator", "Annotator"), Column("who", "Joined as"),
        Column("decoys_rejected", "Decoys rejected", "int", group="decoys"),
        Column("decoys_shown", "of shown", "int", group="decoys"),
        Column("decoys_pct", "Rejected %", "pct", count="decoys_shown", group="decoys"),
        Column("decoys_low", "95% low", "pct", group="decoys"),
        Column("decoys_high", "95% high", "pct", group="decoys"),
        Column("planted_found", "Planted found", "int", group="planted"),
        Column("planted_shown", "of finished", "int", group="planted"),
        Column("planted_pct", "Found %", "pct", count="planted_shown", group="planted"),
        Column("planted_low", "95% low", "pct", group="planted"),
        Column("planted_high", "95% high", "pct", group="planted"),
    ], note="Wilson score 95% intervals. An annotator is flagged when the upper bound of either rate is below the "
       "campaign's minimum, so one early miss flags nobody.")
    flags = Table("flags_by_annotator", "Flagged annotators and whether the figures count them", [
        Column("annotator", "Annotator"), Column("flagged", "Flagged by"), Column("reasons", "Why"),
        Column("counted", "In the figures"),
    ], note=summary.exclusion.sentence() + " Only the quality checks' flags leave an annotator out; a researcher's "
       "flag or a missed time limit gives a participant the fail code without changing the figures.")
    for row in summary.rows:
        vigilance.rows.append({
            "annotator": row.annotator, "who": row.who,
            "decoys_rejected": row.decoys.k, "decoys_shown": row.decoys.n, **_rate_ci("decoys", row.decoys),
            "planted_found": row.planted.k, "planted_shown": row.planted.n, **_rate_ci("planted", row.planted),
        })
        why = [figures.REASON_LABEL.get(code, code) for code in row.reasons] + row.screening
        if why:
            flags.rows.append({
                "annotator": row.annotator, "flagged": "quality checks" if row.reasons else "fail code only",
                "reasons": "; ".join(why), "counted": "left out" if row.excluded else "counted",
            })
    if not flags.rows:
        flags.empty_reason = "Nobody is flagged."
    if not protocols.get(summary.exclusion.campaign.protocol).judges_machine_spans:  # no decoy can be shown
        vigilance.columns = [c for c in vigilance.columns if c.group != "decoys"]
        vigilance.note = vigilance.note.replace("either rate", "the rate")
        for row in vigilance.rows:
            for key in [k for k in row if k.startswith("decoys_")]:
                del row[key]
    return [vigilance, flags]
