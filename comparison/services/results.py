"""A job's results from the stored scores: correlations at three levels with intervals, paired tests, the
checklist, and the transfer view; and the records of its JSON / CSV export."""

from __future__ import annotations

import json
from collections.abc import Iterator
from itertools import combinations

import numpy as np

from comparison.engine import checklist
from comparison.engine.metrics import parse_metric
from comparison.models import ComparisonJob, MetricScore
from comparison.services.stored import local_record, storage_key
from corpus.models import Item
from jobs.models import JobStatus
from stats.metric_correlation import COEFFICIENTS, LEVELS, Points, correlate, paired_bootstrap_p, williams_p

LEVEL_RULE = (
    "low < 3, moderate = 3, high > 3 on a 1-5 scale (the checklist paper's split); other scales are mapped "
    "linearly onto 1-5 from the aspect's observed minimum and maximum, and moderate is the band 2.5-3.5"
)
SIMILARITY_RULE = (
    "S = ((L1+L2) - 2*Lev)/(L1+L2), unit-cost Levenshtein over system names ordered worst to best "
    "(cdabe vs abcde = 0.2; cbed vs abcde = 1/3 with unit costs, not the paper's 0.11)"
)
PAIRED_TEST = (
    "paired bootstrap: p = share of the shared resamples in which metric_a's coefficient is not above "
    "metric_b's (one-sided); williams_p = Williams' test on dataset-level Pearson r"
)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and np.isfinite(value)


def _stored_names(job: ComparisonJob) -> dict[str, str]:
    """Storage key -> the job's metric name (they differ only for `ensemble`, see scoring.storage_key)."""
    return {storage_key(name, job.options): name for name in job.metrics}


def _frame(job: ComparisonJob) -> tuple[list[tuple], dict[tuple[str, str], dict[int, float]]]:
    items = list(Item.objects.filter(dataset_id=job.dataset_id).order_by("position")
                 .values_list("pk", "system", "inputs", "human_scores"))
    scores: dict[tuple[str, str], dict[int, float]] = {}
    names = _stored_names(job)
    rows = MetricScore.objects.filter(item__dataset_id=job.dataset_id, metric__in=names)
    for item_id, metric, aspect, value in rows.values_list("item_id", "metric", "aspect", "value"):
        scores.setdefault((names[metric], aspect), {})[item_id] = value
    return items, scores


def _points(items: list[tuple], values: dict[int, float], aspect: str) -> tuple[Points, list[int]]:
    rows = [(pk, system, json.dumps(inputs, sort_keys=True), human[aspect], values[pk])
            for pk, system, inputs, human in items if _is_number(human.get(aspect)) and pk in values]
    points = Points.build([r[4] for r in rows], [float(r[3]) for r in rows], [r[2] for r in rows],
                          [r[1] for r in rows])
    return points, [r[0] for r in rows]


def _transfer(job: ComparisonJob, table: dict[tuple[str, str], dict]) -> list[dict]:
    """Each metric's dataset-level correlation here (in-domain) beside other datasets' finished jobs."""
    others = ComparisonJob.objects.filter(status=JobStatus.DONE).exclude(dataset_id=job.dataset_id).select_related(
        "dataset").order_by("-finished_at")
    seen: set[tuple[str, str, str]] = set()
    out = []
    for other in others:
        for row in other.results.get("correlations", []):
            key = (row["metric"], row["aspect"], other.dataset.name)
            if row["level"] != "dataset" or row["metric"] not in job.metrics or key in seen:
                continue
            seen.add(key)
            here = next((r for (m, _), r in table.items() if m == row["metric"]), None)
            out.append({"metric": row["metric"], "in_domain": {"dataset": job.dataset.name,
                        "spearman_by_aspect": {a: r["spearman"] for (m, a), r in table.items() if m == row["metric"]}}
                        if here else None,
                        "out_of_domain": {"dataset": other.dataset.name, "aspect": row["aspect"],
                                          "pearson": row["pearson"], "spearman": row["spearman"],
                                          "kendall": row["kendall"], "n": row["n"], "job": other.pk}})
    return out


def job_results(job: ComparisonJob) -> dict:
    """Everything the page and the export show, computed once when the job ends."""
    items, scores = _frame(job)
    n_boot, seed = int(job.options.get("bootstrap", 1000)), int(job.options.get("seed", 0))
    correlations, tests, aspect_panels, system_panels = [], [], [], []
    human_systems: dict[str, dict | None] = {}
    dataset_rows: dict[tuple[str, str], dict] = {}
    for aspect in job.aspects:
        levels_by_metric, ids_by_metric, points_by_metric = {}, {}, {}
        for metric in job.metrics:
            key_aspect = aspect if parse_metric(metric).per_aspect else ""
            points, ids = _points(items, scores.get((metric, key_aspect), {}), aspect)
            result = correlate(points, n_boot=n_boot, seed=seed)
            levels_by_metric[metric], ids_by_metric[metric], points_by_metric[metric] = result, ids, points
            for level in LEVELS:
                r = result[level]
                row = {"metric": metric, "aspect": aspect, "level": level, **r.values, "ci": r.ci, "n": r.n}
                correlations.append(row)
                if level == "dataset":
                    dataset_rows[(metric, aspect)] = row
            if len(points.metric):
                aspect_panels.append({"metric": metric, "aspect": aspect,
                                      **checklist.aspect_level(points.metric, points.human)})
                system_of = {pk: system for pk, system, _, _ in items}
                systems = [str(system_of[pk]) for pk in ids]
                panel = checklist.system_level(points.metric, points.human, systems)
                if panel is not None:
                    system_panels.append({"metric": metric, "aspect": aspect, **panel})
                    human_systems.setdefault(aspect, {"ranking": panel["human_ranking"],
                                                      "means": panel["human_means"]})
        for a, b in combinations(job.metrics, 2):
            if ids_by_metric[a] != ids_by_metric[b]:
                continue  # different item sets are not paired; both metrics must score the same outputs
            for level in LEVELS:
                ra, rb = levels_by_metric[a][level], levels_by_metric[b][level]
                for coefficient in COEFFICIENTS:
                    va, vb = ra.values[coefficient], rb.values[coefficient]
                    if va is None or vb is None or coefficient not in ra.replicates:
                        continue
                    # orient each test so that it asks whether the better-looking metric is really better
                    first, second = (a, b) if va >= vb else (b, a)
                    p = paired_bootstrap_p(levels_by_metric[first][level].replicates[coefficient],
                                           levels_by_metric[second][level].replicates[coefficient])
                    entry = {"aspect": aspect, "level": level, "coefficient": coefficient,
                             "metric_a": first, "metric_b": second, "p": p}
                    if level == "dataset" and coefficient == "pearson":
                        pa, pb = points_by_metric[first], points_by_metric[second]
                        r23 = float(np.corrcoef(pa.metric, pb.metric)[0, 1]) if np.ptp(pa.metric) and np.ptp(
                            pb.metric) else None
                        entry["williams_p"] = williams_p(max(va, vb), min(va, vb), r23, ra.n) if r23 is not None \
                            else None
                    tests.append(entry)
    return {
        "correlations": correlations,
        "gptscore_hf": local_scoring(job),
        "paired_tests": tests,
        "paired_test_method": PAIRED_TEST,
        "bootstrap": {"resamples": n_boot, "seed": seed, "interval": "95% percentile"},
        "checklist": {
            "quality_levels": LEVEL_RULE,
            "ranking_similarity": SIMILARITY_RULE,
            "aspect_level": aspect_panels,
            "system_level": system_panels,
            "human_system_ranking": human_systems,
            "transfer": _transfer(job, dataset_rows),
        },
    }


def local_scoring(job: ComparisonJob) -> dict[str, dict]:
    """How each `gptscore-hf` metric was computed: the precision asked for and used, the device, attention,
    batch budget, tokens per second and peak GPU memory (null on the CPU)."""
    return {name: local_record(job.options, name) for name in job.metrics if parse_metric(name).local}


def export_document(job: ComparisonJob) -> dict:
    """The JSON export (format in the docs' Export formats)."""
    results = job.results or {}
    return {
        "job": job.pk,
        "dataset": job.dataset.name,
        "metrics": job.metrics,
        "aspects": job.aspects,
        "status": job.status,
        "gptscore_hf": results.get("gptscore_hf") or local_scoring(job),
        "correlations": results.get("correlations", []),
        "paired_tests": results.get("paired_tests", []),
        "checklist": results.get("checklist", {}),
        "scores": list(score_records(job)),
    }


def score_records(job: ComparisonJob) -> Iterator[dict]:
    """One record per stored score of the job's metrics; `aspect` is null for metrics that ignore it."""
    names = _stored_names(job)
    rows = (MetricScore.objects.filter(item__dataset_id=job.dataset_id, metric__in=names)
            .filter(aspect__in=["", *job.aspects])
            .order_by("item__position", "metric", "aspect")
            .values_list("item__external_id", "item__system", "metric", "aspect", "value"))
    for item_id, system, metric, aspect, value in rows.iterator(chunk_size=2000):
        yield {"item_id": item_id, "system": system or None, "metric": names[metric], "aspect": aspect or None,
               "value": value}


CSV_COLUMNS = ("metric", "aspect", "level", "pearson", "spearman", "kendall",
               "pearson_low", "pearson_high", "spearman_low", "spearman_high", "kendall_low", "kendall_high", "n")


def csv_rows(job: ComparisonJob) -> Iterator[list]:
    """The correlation table as CSV rows (one per metric, aspect and level), header first."""
    yield list(CSV_COLUMNS)
    for row in (job.results or {}).get("correlations", []):
        cis = row.get("ci") or {}
        yield [row["metric"], row["aspect"], row["level"], row["pearson"], row["spearman"], row["kendall"],
               *[(cis.get(c) or [None, None])[k] for c in COEFFICIENTS for k in (0, 1)], row["n"]]
