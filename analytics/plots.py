"""Server-side charts of a dashboard, drawn with matplotlib's Agg backend into SVG or PNG bytes."""

from __future__ import annotations

import base64
import io
from collections.abc import Callable

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from analytics.formatting import simulated_name  # noqa: E402
from analytics.selectors import DashboardData  # noqa: E402
from corpus.protocols import opennlgauge as protocol  # noqa: E402
from stats.accuracy import EXPLANATION_ROWS, SPAN_COLUMNS  # noqa: E402
from stats.calibration import SEVERITIES  # noqa: E402

# Deterministic SVG (same numbers, same bytes): fixed id salt, no creation date in the metadata.
_RC = {"svg.hashsalt": "spanjudge", "svg.fonttype": "path", "font.size": 9}
PlotBuilder = Callable[[DashboardData], Figure | None]


def _names(data: DashboardData, run_ids: list[int | None]) -> list[str]:
    """Axis labels of runs: a simulated run's carries the mark, as its table rows do."""
    labels = {r.run_id: simulated_name(r.label, r.simulated) for r in data.runs}
    return ["(no run)" if r is None else labels.get(r, f"run {r}") for r in run_ids]


def _ordered_runs(data: DashboardData) -> list[int | None]:
    present = set(data.accuracy.by_run)
    return [r.run_id for r in data.runs if r.run_id in present] + [r for r in present if r is None]


def accuracy_plot(data: DashboardData) -> Figure | None:
    """Span OK % and Exp. correct % per evaluator, with their bootstrap intervals as error bars."""
    runs = [r for r in _ordered_runs(data) if data.accuracy.by_run[r].matrix.total]
    if not runs:
        return None
    fig = Figure(figsize=(max(4.0, 1.3 * len(runs) + 2), 3.2))
    ax = fig.add_subplot()
    x = np.arange(len(runs))
    for offset, attr, ci_attr, label in (
        (-0.2, "span_ok", "span_ok_ci", "Span OK"), (0.2, "exp_correct", "exp_correct_ci", "Exp. correct"),
    ):
        values, low, high = [], [], []
        for r in runs:
            group = data.accuracy.by_run[r]
            value = 100 * (getattr(group.matrix, attr) or 0)
            ci = getattr(group, ci_attr)
            values.append(value)
            low.append(value - 100 * ci.low if ci else 0)
            high.append(100 * ci.high - value if ci else 0)
        ax.bar(x + offset, values, width=0.4, label=label, yerr=[low, high], capsize=3)
    ax.set_xticks(x, _names(data, runs), rotation=20, ha="right")
    ax.set_ylim(0, 100)
    ax.set_yticks(range(0, 101, 20))
    ax.set_ylabel("% of judged spans")
    _legend_outside(ax, ncol=2)
    ax.set_title("Accuracy per evaluator (95% bootstrap CI)", pad=22)
    return fig


def span_verdicts_plot(data: DashboardData) -> Figure | None:
    """Stacked shares of the four span verdicts per evaluator."""
    runs = [r for r in _ordered_runs(data) if data.accuracy.by_run[r].matrix.total]
    if not runs:
        return None
    fig = Figure(figsize=(6.0, 0.5 * len(runs) + 1.6))
    ax = fig.add_subplot()
    left = np.zeros(len(runs))
    labels = dict(protocol.choices(protocol.SPAN_VERDICTS))
    for verdict in SPAN_COLUMNS:
        shares = np.array([
            100 * data.accuracy.by_run[r].matrix.column_total(verdict) / data.accuracy.by_run[r].matrix.total
            for r in runs
        ])
        ax.barh(_names(data, runs), shares, left=left, label=labels[verdict])
        left += shares
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of judged spans")
    _legend_outside(ax, ncol=4)
    return fig


def explanation_verdicts_plot(data: DashboardData) -> Figure | None:
    """Stacked shares of the six explanation verdicts per evaluator."""
    runs = [r for r in _ordered_runs(data) if data.accuracy.by_run[r].matrix.total]
    if not runs:
        return None
    fig = Figure(figsize=(6.0, 0.5 * len(runs) + 1.9))
    ax = fig.add_subplot()
    left = np.zeros(len(runs))
    labels = dict(protocol.choices(protocol.EXPLANATION_VERDICTS))
    for verdict in EXPLANATION_ROWS:
        shares = np.array([
            100 * data.accuracy.by_run[r].matrix.row_total(verdict) / data.accuracy.by_run[r].matrix.total
            for r in runs
        ])
        ax.barh(_names(data, runs), shares, left=left, label=labels[verdict])
        left += shares
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of judged spans")
    _legend_outside(ax, ncol=3)
    return fig


def _legend_outside(ax, *, ncol: int) -> None:
    """Put the legend above the axes, outside the plotting area, so that it never covers a bar."""
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=ncol, frameon=False, fontsize=7)


def flags_plot(data: DashboardData) -> Figure | None:
    runs = [r for r in _ordered_runs(data) if data.accuracy.by_run[r].matrix.total]
    if not runs or not any(sum(data.accuracy.by_run[r].flags.values()) for r in runs):
        return None
    fig = Figure(figsize=(max(4.5, 1.5 * len(runs) + 2), 3.2))
    ax = fig.add_subplot()
    x = np.arange(len(runs))
    width = 0.8 / len(protocol.FLAGS)
    for k, (name, label) in enumerate(protocol.choices(protocol.FLAGS)):
        rates = [100 * (data.accuracy.by_run[r].flag_rates()[name] or 0) for r in runs]
        ax.bar(x - 0.4 + width * (k + 0.5), rates, width=width, label=label)
    ax.set_xticks(x, _names(data, runs), rotation=20, ha="right")
    ax.set_ylabel("% of judged spans")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.set_title("Failure profile (flags)")
    return fig


def overlap_plot(data: DashboardData) -> Figure | None:
    rows = [r for r in data.overlap if r.n_items]
    if not rows:
        return None
    fig = Figure(figsize=(max(4.5, 1.5 * len(rows) + 2), 3.2))
    ax = fig.add_subplot()
    x = np.arange(len(rows))
    for k, (name, pick) in enumerate((
        ("Precision", lambda r: r.overlap.precision), ("Recall", lambda r: r.overlap.recall),
        ("F1", lambda r: r.overlap.f1), ("Character F1", lambda r: r.chars.f1),
    )):
        ax.bar(x - 0.4 + 0.2 * (k + 0.5), [100 * (pick(r) or 0) for r in rows], width=0.2, label=name)
    ax.set_xticks(x, _names(data, [r.run_id for r in rows]), rotation=20, ha="right")
    ax.set_ylim(0, 100)
    ax.set_ylabel("%")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.set_title("Overlap with reference spans (any-overlap, one-to-one)")
    return fig


def severity_plot(data: DashboardData) -> Figure | None:
    calibration = data.calibration_pooled
    if not calibration.n:
        return None
    fig = Figure(figsize=(3.8, 3.4))
    ax = fig.add_subplot()
    grid = np.array(calibration.confusion)
    image = ax.imshow(grid, cmap="Blues", origin="lower")
    for i in range(5):
        for j in range(5):
            if grid[i, j]:
                ax.text(j, i, str(grid[i, j]), ha="center", va="center", fontsize=7)
    ax.set_xticks(range(5), [str(s) for s in SEVERITIES])
    ax.set_yticks(range(5), [str(s) for s in SEVERITIES])
    ax.set_xlabel("Human-corrected severity")
    ax.set_ylabel("Machine severity")
    fig.colorbar(image, ax=ax, shrink=0.8)
    return fig


def scores_plot(data: DashboardData) -> Figure | None:
    rows = [r for r in data.scores if r.pairs]
    if not rows:
        return None
    cols = min(3, len(rows))
    nrows = -(-len(rows) // cols)
    fig = Figure(figsize=(3.2 * cols, 2.8 * nrows), layout="constrained")
    names = dict(zip([r.run_id for r in rows], _names(data, [r.run_id for r in rows]), strict=True))
    for k, row in enumerate(rows):
        ax = fig.add_subplot(nrows, cols, k + 1)
        pairs = np.array(row.pairs)
        ax.scatter(pairs[:, 1], pairs[:, 0], s=6, alpha=0.5)
        rho = row.correlation.spearman
        ax.set_title(f"{names[row.run_id]} (rho={'—' if rho is None else f'{rho:.2f}'})", fontsize=8)
        ax.set_xlabel(f"human {row.human_key}")
        ax.set_ylabel("evaluator score")
    return fig


PLOT_BUILDERS: dict[str, PlotBuilder] = {
    "accuracy": accuracy_plot,
    "span_verdicts": span_verdicts_plot,
    "explanation_verdicts": explanation_verdicts_plot,
    "flags": flags_plot,
    "overlap": overlap_plot,
    "severity": severity_plot,
    "scores": scores_plot,
}


_METADATA = {"svg": {"Date": None}, "pdf": {"CreationDate": None, "ModDate": None}, "png": None}


def render(fig: Figure, fmt: str = "svg") -> bytes:
    """Return the figure as SVG, PDF or PNG bytes; a legend outside the axes is kept inside the image."""
    if fmt not in _METADATA:
        raise ValueError(f"plot format must be svg, pdf or png, not {fmt!r}")
    buffer = io.BytesIO()
    with matplotlib.rc_context(_RC):
        if not fig.get_layout_engine():
            fig.set_layout_engine("tight")
        fig.savefig(buffer, format=fmt, metadata=_METADATA[fmt], dpi=110, bbox_inches="tight")
    return buffer.getvalue()


def dashboard_plots(data: DashboardData) -> dict[str, str]:
    """Return name -> data: URI of each SVG chart that has something to show (for <img src>)."""
    out = {}
    for name, build in PLOT_BUILDERS.items():
        with matplotlib.rc_context(_RC):
            fig = build(data)
        if fig is not None:
            out[name] = "data:image/svg+xml;base64," + base64.b64encode(render(fig)).decode("ascii")
    return out
