"""Reads of the DHP app: run exports (the documented JSON/CSV export), survey results and who sees what."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from typing import Any, TypedDict

from django.db.models import QuerySet

from accounts.models import User
from corpus.spreadsheet import sheet_writer
from dhp.engine.kinds import BASE_KINDS
from dhp.engine.surveys import nominal_alpha, vote_shares
from dhp.models import DhpRun, Survey, SurveyVote


class PerturbationRecord(TypedDict):
    kind: str
    level: str
    method: str
    degree: str
    n_pairs: int
    n_zero: int
    tests: dict[str, dict[str, float | None]]
    p_hmp: float
    p_hmp_ew: float | None
    D: float
    D_ew: float | None


def run_weights(run: DhpRun) -> dict[str, dict[str, float]] | None:
    """{kind: {metric: w}} for the run's kinds and metrics, normalized per kind; None without a survey."""
    if not run.weights_id:
        return None
    shares = run.weights.weights
    out = {}
    for kind in run.kinds:
        row = shares.get(kind.split(":", 1)[0])
        if row is None:
            continue
        raw = {m: float(row.get(m, 0.0)) for m in run.metrics}
        total = sum(raw.values())
        out[kind] = {m: (w / total if total else 0.0) for m, w in raw.items()}
    return out


def export_record(run: DhpRun) -> dict[str, Any]:
    """The export object, exactly the documented fields; `scores` are means over samples."""
    results = run.results or {}
    perturbations: list[PerturbationRecord] = [
        {
            "kind": p["kind"], "level": p["level"], "method": p["method"], "degree": p["degree"],
            "n_pairs": p["n_pairs"], "n_zero": p["n_zero"],
            "tests": {m: {"statistic": t["statistic"], "p": t["p"]} for m, t in p["tests"].items()},
            "p_hmp": p["p_hmp"], "p_hmp_ew": p["p_hmp_ew"], "D": p["D"], "D_ew": p["D_ew"],
        }
        for p in results.get("perturbations", [])
    ]
    summary = results.get("summary") or {}
    record = {
        "run": run.pk, "dataset": run.dataset.name, "evaluator": run.evaluator, "metrics": run.metrics,
        "seed": run.seed, "samples": run.samples, "weights": run_weights(run),
        "perturbations": perturbations,
        "summary": {key: summary.get(key) for key in ("D_avg", "D_min", "D_avg_ew", "D_min_ew")},
        "scores": results.get("scores", []),
    }
    return record


def export_json(run: DhpRun) -> str:
    return json.dumps(export_record(run), indent=2) + "\n"


CSV_COLUMNS = ["run", "kind", "level", "method", "degree", "n_pairs", "n_zero", "metric", "statistic", "p",
               "p_hmp", "p_hmp_ew", "D", "D_ew"]


def export_csv(run: DhpRun) -> str:
    """One row per (perturbation, metric) test, with the perturbation's combined values repeated."""
    buffer = io.StringIO()
    writer = sheet_writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    record = export_record(run)
    for p in record["perturbations"]:
        for metric, test in p["tests"].items():
            writer.writerow([run.pk, p["kind"], p["level"], p["method"], p["degree"], p["n_pairs"], p["n_zero"],
                             metric, test["statistic"], test["p"], p["p_hmp"], p["p_hmp_ew"], p["D"], p["D_ew"]])
    return buffer.getvalue()


def surveys_for(user: User) -> QuerySet[Survey]:
    """Admins see every survey; anybody else only the ones they are invited to."""
    qs = Survey.objects.select_related("task")
    return qs if user.is_admin_role else qs.filter(invitations__expert=user).distinct()


@dataclass(frozen=True)
class IssueResult:
    issue: str
    title: str
    counts: dict[str, int]
    shares: dict[str, float]
    n_votes: int


@dataclass(frozen=True)
class SurveyResults:
    survey: Survey
    metrics: list[str]
    issues: list[IssueResult]
    n_experts: int
    n_invited: int
    alpha: float | None


def survey_results(survey: Survey) -> SurveyResults:
    votes = list(SurveyVote.objects.filter(survey=survey).values_list("expert_id", "issue", "metric"))
    metrics = survey.metric_names()
    shares = vote_shares(votes, survey.issues, metrics)
    issues = []
    for issue in survey.issues:
        counts = dict.fromkeys(metrics, 0)
        for _, vote_issue, metric in votes:
            if vote_issue == issue and metric in counts:
                counts[metric] += 1
        issues.append(IssueResult(issue, BASE_KINDS[issue].title, counts, shares[issue], sum(counts.values())))
    return SurveyResults(
        survey=survey, metrics=metrics, issues=issues, n_experts=len({v[0] for v in votes}),
        n_invited=survey.invitations.count(), alpha=nominal_alpha(votes, survey.issues, metrics),
    )


def dataset_summary(dataset) -> list[dict[str, Any]]:
    """The latest finished run of each evaluator on the dataset, with its summary."""
    rows: dict[str, dict[str, Any]] = {}
    for run in DhpRun.objects.filter(dataset=dataset, status="done").order_by("-finished_at"):
        if run.evaluator not in rows and run.results:
            rows[run.evaluator] = {"evaluator": run.evaluator, "run": run, "summary": run.results.get("summary", {})}
    return list(rows.values())
