"""Charts of a comparison job, drawn with matplotlib's Agg backend into SVG or PNG bytes."""

from __future__ import annotations

import io
from collections.abc import Callable

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from comparison.models import ComparisonJob  # noqa: E402
from comparison.selectors import correlation_grid  # noqa: E402

_RC = {"svg.hashsalt": "spanjudge", "svg.fonttype": "path", "font.size": 9}


def correlations_plot(job: ComparisonJob, level: str = "dataset", coefficient: str = "spearman") -> Figure | None:
    """One group of bars per aspect, one bar per metric, with the 95% bootstrap interval as error bars."""
    grid = correlation_grid(job, level=level, coefficient=coefficient)
    if not grid.rows or not grid.aspects:
        return None
    fig = Figure(figsize=(max(5.0, 1.1 * len(grid.aspects) * max(1, len(grid.rows)) / 2 + 2), 3.4))
    ax = fig.add_subplot()
    x = np.arange(len(grid.aspects))
    width = 0.8 / len(grid.rows)
    for k, (metric, cells) in enumerate(grid.rows):
        values = [c.value if c.value is not None else 0.0 for c in cells]
        low = [(c.value - c.ci[0]) if c.ci and c.value is not None else 0 for c in cells]
        high = [(c.ci[1] - c.value) if c.ci and c.value is not None else 0 for c in cells]
        ax.bar(x - 0.4 + width * (k + 0.5), values, width=width, label=metric, yerr=[low, high], capsize=2)
    ax.axhline(0, color="black", linewidth=0.6)
    ax.set_xticks(x, grid.aspects, rotation=15, ha="right")
    ax.set_ylabel(f"{grid.coefficient} ({grid.level} level)")
    ax.legend(fontsize=7, frameon=False, ncol=min(4, len(grid.rows)))
    ax.set_title("Correlation with human scores (95% bootstrap CI)")
    return fig


def ks_plot(job: ComparisonJob) -> Figure | None:
    """The checklist's aspect level: KS distance between low- and high-rated outputs, per metric and aspect."""
    panels = (job.results or {}).get("checklist", {}).get("aspect_level", [])
    if not panels:
        return None
    metrics = list(dict.fromkeys(p["metric"] for p in panels))
    aspects = list(dict.fromkeys(p["aspect"] for p in panels))
    found = {(p["metric"], p["aspect"]): p["ks"].get("low-high") for p in panels}
    fig = Figure(figsize=(max(5.0, 0.9 * len(aspects) * max(1, len(metrics)) / 2 + 2), 3.2))
    ax = fig.add_subplot()
    x = np.arange(len(aspects))
    width = 0.8 / len(metrics)
    for k, metric in enumerate(metrics):
        ax.bar(x - 0.4 + width * (k + 0.5), [found.get((metric, a)) or 0.0 for a in aspects], width=width,
               label=metric)
    ax.set_xticks(x, aspects, rotation=15, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("KS distance, low vs high")
    ax.legend(fontsize=7, frameon=False, ncol=min(4, len(metrics)))
    ax.set_title("Aspect level: does the metric separate low- from high-rated outputs?")
    return fig


PLOTS: dict[str, Callable[[ComparisonJob], Figure | None]] = {"correlations": correlations_plot, "ks": ks_plot}


def render(fig: Figure, fmt: str = "svg") -> bytes:
    buffer = io.BytesIO()
    with matplotlib.rc_context(_RC):
        fig.savefig(buffer, format=fmt, metadata={"Date": None} if fmt == "svg" else None, dpi=110,
                    bbox_inches="tight")
    return buffer.getvalue()
