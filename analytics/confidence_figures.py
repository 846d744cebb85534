"""The confidence calibration as the dashboard and the report show it: a table, and the plot (drawn lazily)."""

from __future__ import annotations

from analytics.selectors.confidence import EvaluatorConfidence, campaign_confidence
from analytics.tables import Column, Table
from annotator.models import Campaign

CONFIDENCE_NOTE = (
    "A span flagged by k of the ensemble's n annotator models is read as a forecast that it is an error with "
    "probability k/n. Share: spans whose consensus span verdict is Error, with its 95% Wilson interval. ECE: the "
    "spans-weighted mean of |k/n - share| over the levels (0 = calibrated). Spans without a consensus verdict, "
    "spans resolved without an expert and known answers are left out."
)


def _pct(value: float | None) -> float | None:
    return None if value is None else 100 * value


def confidence_table(rows: list[EvaluatorConfidence]) -> Table:
    """One row per evaluator and level, then the evaluator's ECE on its last level's row."""
    table = Table("confidence", "Confidence calibration (ensemble agreement vs expert verdicts)", [
        Column("run", "Run"), Column("level", "k of n"), Column("forecast", "k/n %", "pct"),
        Column("spans", "Spans", "int"), Column("confirmed", "Confirmed", "int"),
        Column("share", "Confirmed %", "pct", count="spans"), Column("ci_low", "95% low", "pct"),
        Column("ci_high", "95% high", "pct"), Column("ece", "ECE (points)", "num"),
    ], note=CONFIDENCE_NOTE)
    for row in rows:
        levels = row.calibration.levels
        for i, lv in enumerate(levels):
            table.rows.append({
                "run": row.evaluator, "simulated": row.simulated, "level": f"{lv.k} of {lv.n}",
                "forecast": 100 * lv.forecast, "spans": lv.spans, "confirmed": lv.confirmed,
                "share": _pct(lv.share), "ci_low": 100 * lv.ci_low, "ci_high": 100 * lv.ci_high,
                "ece": _pct(row.calibration.ece) if i == len(levels) - 1 else None,
            })
    return table


def confidence_context(campaign: Campaign) -> dict[str, object]:
    """What the campaign dashboard shows of the calibration: its table and plot once experts labelled a span."""
    rows = campaign_confidence(campaign)
    if not any(r.calibration.spans for r in rows):
        return {"confidence": None}
    return {"confidence": confidence_table(rows), "confidence_plot": plot_module().confidence_plot_uri(rows)}


def plot_module():
    """matplotlib is imported when a plot is drawn, not by every process that loads the URLs (views)."""
    from analytics import confidence_plot

    return confidence_plot
