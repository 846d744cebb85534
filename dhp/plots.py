"""DHP charts (matplotlib, Agg, SVG data URIs): discernment bars like the paper's Fig. 4 and the survey's
stacked vote shares like its Fig. 6."""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping, Sequence

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

_RC = {"svg.hashsalt": "spanjudge", "svg.fonttype": "path", "font.size": 9}


def _uri(fig: Figure) -> str:
    with matplotlib.rc_context(_RC):
        buffer = io.BytesIO()
        fig.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches="tight")
    return "data:image/svg+xml;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def discernment_plot(groups: Sequence[str], series: Mapping[str, Sequence[float | None]], title: str) -> str | None:
    """Grouped bars (one group per evaluator or perturbation, one bar per series) with the D = 1 line."""
    if not groups:
        return None
    fig = Figure(figsize=(max(4.5, 0.9 * len(groups) * max(1, len(series)) / 2 + 2.5), 3.4))
    ax = fig.add_subplot()
    x = np.arange(len(groups))
    width = 0.8 / max(1, len(series))
    for k, (name, values) in enumerate(series.items()):
        heights = [v if v is not None else 0.0 for v in values]
        ax.bar(x - 0.4 + width * (k + 0.5), heights, width=width, label=name)
    ax.axhline(1.0, color="red", linewidth=1.2, label="D = 1 (p = 0.05)")
    ax.set_xticks(x, list(groups), rotation=25, ha="right")
    ax.set_ylabel("discernment D")
    ax.legend(fontsize=7, frameon=False)
    ax.set_title(title)
    return _uri(fig)


def survey_plot(issues: Sequence[str], metrics: Sequence[str], shares: Sequence[Mapping[str, float]]) -> str | None:
    """One horizontal bar per quality issue, split by the metrics' vote shares."""
    if not issues:
        return None
    fig = Figure(figsize=(6.5, 0.45 * len(issues) + 1.4))
    ax = fig.add_subplot()
    y = np.arange(len(issues))
    left = np.zeros(len(issues))
    for metric in metrics:
        values = np.array([100 * row.get(metric, 0.0) for row in shares])
        ax.barh(y, values, left=left, label=metric)
        left += values
    ax.set_yticks(y, list(issues))
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of experts' votes")
    ax.legend(fontsize=7, ncol=min(4, len(metrics)), loc="upper center", bbox_to_anchor=(0.5, -0.25), frameon=False)
    ax.set_title("Which metric does each quality issue impact most?")
    return _uri(fig)
