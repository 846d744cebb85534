"""The confidence calibration drawn as a reliability diagram: forecast k/n against the share experts confirm."""

from __future__ import annotations

import base64

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from analytics.plots import _RC, render
from analytics.selectors.confidence import EvaluatorConfidence


def confidence_plot(rows: list[EvaluatorConfidence]) -> Figure | None:
    """One line per evaluator through its levels (x: k/n, y: share confirmed, bars: 95% Wilson interval, marker
    area: spans), beside the diagonal a calibrated ensemble would follow."""
    rows = [r for r in rows if r.calibration.spans]
    if not rows:
        return None
    fig = Figure(figsize=(4.6, 3.8))
    ax = fig.add_subplot()
    ax.plot([0, 100], [0, 100], linestyle=":", color="grey", linewidth=1, label="calibrated")
    most = max(lv.spans for r in rows for lv in r.calibration.levels)
    for k, row in enumerate(rows):
        levels = row.calibration.levels
        x = np.array([100 * lv.forecast for lv in levels]) + (k - (len(rows) - 1) / 2) * 0.8  # side by side
        y = np.array([100 * (lv.share or 0) for lv in levels])
        low = y - np.array([100 * lv.ci_low for lv in levels])
        high = np.array([100 * lv.ci_high for lv in levels]) - y
        ece = row.calibration.ece
        name = f"{row.evaluator} (ECE {100 * ece:.1f})" if ece is not None else row.evaluator
        line = ax.errorbar(x, y, yerr=[low, high], capsize=3, marker="", linewidth=1, label=name)
        sizes = 20 + 120 * np.array([lv.spans for lv in levels]) / most
        ax.scatter(x, y, s=sizes, color=line.lines[0].get_color(), zorder=3)
    ax.set_xlim(-5, 105)
    ax.set_ylim(0, 100)
    ax.set_xlabel("Models that flagged the span, k/n (%)")
    ax.set_ylabel("Confirmed as errors by experts (%)")
    ax.legend(fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False, ncol=2)
    return fig


def confidence_plot_uri(rows: list[EvaluatorConfidence]) -> str | None:
    """The plot as an SVG data: URI for the dashboard's <img>, or None with nothing to draw."""
    with matplotlib.rc_context(_RC):
        fig = confidence_plot(rows)
        if fig is None:
            return None
        return "data:image/svg+xml;base64," + base64.b64encode(render(fig)).decode("ascii")


