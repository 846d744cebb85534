"""The confidence calibration as the dashboard and the report show it: a table, and the plot (drawn lazily)."""

from __future__ import annotations

from analytics.selectors.base import Scope
from analytics.selectors.cache import cached, dashboard_key
from analytics.selectors.confidence import EvaluatorConfidence, campaign_confidence
from analytics.selectors.routing import RoutingReport, routing_report
from analytics.tables import Column, Table
from annotator.models import Campaign
from stats.routing import ACTIVE

CONFIDENCE_NOTE = (
    "A span flagged by k of the ensemble's n annotator models is read as a forecast that it is an error with "
    "probability k/n. Share: spans whose consensus span verdict is Error, with its 95% Wilson interval. ECE: the "
    "spans-weighted mean of |k/n - share| over the levels (0 = calibrated). Spans without a consensus verdict, "
    "spans resolved without an expert and known answers are left out. Predictor ECE: the same for the calibrated "
    "predictor (everything the ensemble says about a span, cross-fitted on the labelled spans), over ten bins of "
    "its out-of-fold predictions; shown from 20 labelled spans."
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
        Column("predictor_ece", "Predictor ECE (points)", "num"),
    ], note=CONFIDENCE_NOTE)
    for row in rows:
        levels = row.calibration.levels
        for i, lv in enumerate(levels):
            table.rows.append({
                "run": row.evaluator, "simulated": row.simulated, "level": f"{lv.k} of {lv.n}",
                "forecast": 100 * lv.forecast, "spans": lv.spans, "confirmed": lv.confirmed,
                "share": _pct(lv.share), "ci_low": 100 * lv.ci_low, "ci_high": 100 * lv.ci_high,
                "ece": _pct(row.calibration.ece) if i == len(levels) - 1 else None,
                "predictor_ece": _pct(row.predictor.ece) if row.predictor and i == len(levels) - 1 else None,
            })
    return table


def confidence_context(campaign: Campaign, exclude_flagged: bool | None = None) -> dict[str, object]:
    """What the campaign dashboard shows of the ensemble's confidence: the calibration's table and plot once
    experts labelled a span, and a routed campaign's figures; cached while the campaign's data is unchanged."""
    key = dashboard_key(Scope(campaign_id=campaign.pk), reference=f"confidence:{exclude_flagged}", n_resamples=0,
                        seed=0)
    return cached(key, lambda: _confidence_context(campaign, exclude_flagged))


def _confidence_context(campaign: Campaign, exclude_flagged: bool | None) -> dict[str, object]:
    report = routing_report(campaign, exclude_flagged=exclude_flagged)
    context: dict[str, object] = {"routing": routing_table(report) if report is not None else None}
    rows = campaign_confidence(campaign, exclude_flagged=exclude_flagged)
    if not any(r.calibration.spans for r in rows):
        return context | {"confidence": None}
    return context | {"confidence": confidence_table(rows),
                      "confidence_plot": plot_module().confidence_plot_uri(rows)}


def plot_module():
    """matplotlib is imported when a plot is drawn, not by every process that loads the URLs (views)."""
    from analytics import confidence_plot

    return confidence_plot


def routing_table(report: RoutingReport) -> Table:
    """A routed campaign's figures per evaluator (analytics.selectors.routing)."""
    table = Table("routing", "Routed judging: design-weighted figures and expert time saved", [
        Column("run", "Run"), Column("spans", "Spans", "int"), Column("uncertain", "Uncertain (all judged)", "int"),
        Column("confident", "Confident", "int"), Column("audited", "Audited", "int"),
        Column("auto", "Auto-resolved", "int"), Column("expert_share", "Judged by experts %", "pct"),
        Column("audit", "Auto label confirmed %", "pct", count="audit_n"), Column("audit_low", "95% low", "pct"),
        Column("audit_high", "95% high", "pct"), Column("audit_n", "n", "int"),
        Column("span_ok", "Span OK % (all spans)", "pct"), Column("span_ok_low", "95% low", "pct"),
        Column("span_ok_high", "95% high", "pct"), Column("exp_correct", "Exp. correct % (all spans)", "pct"),
        Column("exp_correct_low", "95% low", "pct"), Column("exp_correct_high", "95% high", "pct"),
        Column("estimator", "Span OK estimator"), Column("labeled_error", "Labeled set's error %", "pct"),
        Column("labeled_error_low", "95% low", "pct"), Column("labeled_error_high", "95% high", "pct"),
    ], note=_routing_note(report))
    for row in report.evaluators:
        span_ok, exp_ok = row.span_ok, row.exp_correct
        table.rows.append({
            "run": row.evaluator, "spans": row.spans, "uncertain": row.uncertain, "confident": row.confident,
            "audited": row.audited, "auto": row.auto, "expert_share": _pct(row.expert_share),
            "audit": _pct(row.audited_accuracy.rate), "audit_low": _pct(row.audited_accuracy.low),
            "audit_high": _pct(row.audited_accuracy.high), "audit_n": row.audited_accuracy.n,
            "span_ok": _pct(span_ok.point), "span_ok_low": _pct(span_ok.low), "span_ok_high": _pct(span_ok.high),
            "exp_correct": _pct(exp_ok.point), "exp_correct_low": _pct(exp_ok.low),
            "exp_correct_high": _pct(exp_ok.high), "estimator": row.estimator,
            "labeled_error": _pct(row.labeled_error.point) if row.labeled_error else None,
            "labeled_error_low": _pct(row.labeled_error.low) if row.labeled_error else None,
            "labeled_error_high": _pct(row.labeled_error.high) if row.labeled_error else None,
        })
    return table


def _routing_note(report: RoutingReport) -> str:
    saved = report.expert_seconds_saved
    time = (f"Expert time saved: {report.auto} spans x {report.seconds_per_span:.1f} s = {saved / 3600:.2f} hours."
            if saved is not None and report.seconds_per_span is not None else
            "Expert time saved: known once experts have finished some outputs.")
    if report.design == ACTIVE:
        goal = (f"a full 95% width of {report.target_ci_width:.3f}" if report.target_ci_width is not None
                else f"{report.budget_spans} judgments per evaluator")
        chosen = "; ".join(f"{e.evaluator}: {e.estimator} ({e.reason})" for e in report.evaluators)
        return (f"Active design: {report.batches} batch(es) drawn with probabilities that follow the calibrated "
                f"predictor's uncertainty (the first uniform, none below {report.min_probability}), toward {goal}; "
                "'Audited' counts the spans drawn so far, 'auto-resolved' those the model labels. Span OK is the "
                "prediction-powered (PPI++) estimate for all spans where the predictor narrows the interval, else "
                f"the experts' sample alone, with 95% intervals; Exp. correct is the experts' sample alone. {chosen}. "
                f"'Auto label confirmed' is the share of judged spans on which the model's label agrees. {time}")
    return (f"Spans at least {report.min_k} models flagged were resolved as Error without an expert, except an "
            f"audit of {report.audit_rate:.0%}. Span OK and Exp. correct are Horvitz-Thompson estimates for all "
            "spans (the routes as strata) with 95% intervals; 'auto label confirmed' is the share of audited "
            f"spans experts confirmed, with its Wilson interval. {time}")
