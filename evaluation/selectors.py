"""Read-side queries of the evaluation app: runs and their live progress."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import Min, Q, QuerySet, Sum
from django.utils import timezone

from corpus.models import Annotation, AnnotationKind, ParseStatus
from evaluation.llm.budget import ANSWER_CUT, PROMPT_TOO_LONG, TRUNCATION_UNCHECKED, unchecked_problem
from evaluation.models import EvaluatorRun, LLMCall, RunCall
from jobs.models import JobStatus


def own_runs(runs: QuerySet[EvaluatorRun] | None = None) -> QuerySet[EvaluatorRun]:
    """The runs researchers launched themselves: not those a larger job made for its own use (a DHP run's
    evaluator runs, marked `part_of` by run_create; runs over chosen items only, from before that mark)."""
    runs = EvaluatorRun.objects.all() if runs is None else runs
    return runs.exclude(config__has_key="part_of").exclude(config__has_key="item_ids")


def job_runs() -> QuerySet[EvaluatorRun]:
    """The runs other jobs made for their own use (the complement of own_runs)."""
    return EvaluatorRun.objects.filter(Q(config__has_key="part_of") | Q(config__has_key="item_ids"))


def run_problems(source_id: int | Any) -> dict[str, int]:
    """How many (item, model) answers of a run (or any LLM source) hit the budget: prompts too long to send
    (or cut by the server), and answers cut at the answer budget."""
    source_id = getattr(source_id, "pk", source_id)
    return runs_problems([source_id])[source_id]


def runs_problems(source_ids: Iterable[int]) -> dict[int, dict[str, int]]:
    """run_problems for many runs in one query (the analytics list every run of a dataset): run id -> counts."""
    ids = list(source_ids)
    counts = {source_id: {PROMPT_TOO_LONG: 0, ANSWER_CUT: 0} for source_id in ids}
    rows = (
        Annotation.objects.filter(source_id__in=ids).exclude(parse_problems=[])
        .values_list("source_id", "parse_problems").order_by()
    )
    for source_id, problems in rows.iterator():
        for name in (PROMPT_TOO_LONG, ANSWER_CUT):
            if any(str(p).startswith(f"{name}:") for p in problems or []):
                counts[source_id][name] += 1
    return counts


def unchecked_problems(config: dict[str, Any] | None) -> dict[str, int]:
    """`truncation_unchecked: <server>` -> answers whose cut nothing could tell, once per server of a job (its
    `config[TRUNCATION_UNCHECKED]`): a server that cuts silently and counts only what it evaluated."""
    found = (config or {}).get(TRUNCATION_UNCHECKED) or {}
    return {unchecked_problem(server): int(count) for server, count in sorted(found.items())}


def prompt_token_counts(reported: int | None, cached: int | None) -> dict[str, int]:
    """Prompt tokens of a job's calls: `sent` as the servers counted the prompts, `cached` as they said they
    took from their prompt caches, `evaluated` the rest. (A release that counts only what it evaluated and
    says nothing of its cache makes `sent` equal to `evaluated`.)"""
    sent, cached = int(reported or 0), int(cached or 0)
    return {"sent": sent, "evaluated": max(sent - cached, 0), "cached": cached}


def runs_for_home() -> QuerySet[EvaluatorRun]:
    return own_runs().select_related("evaluator", "dataset", "aspect").order_by("-created_at")


def run_progress(run: EvaluatorRun) -> dict[str, Any]:
    """Return what the job page and the API show: per-model counts, rates, ETA and recent failures."""
    now = timezone.now()
    # A paused (or resumed, not yet picked up) run stopped working at its last heartbeat: neither the elapsed
    # time nor the ETA may keep counting while nothing runs.
    idle = run.status in (JobStatus.PAUSED, JobStatus.PENDING)
    until = run.finished_at or ((run.heartbeat_at or now) if idle else now)
    elapsed = max((until - run.started_at).total_seconds(), 0.0) if run.started_at else 0.0
    fresh = LLMCall.objects.filter(run_calls__run=run, run_calls__from_cache=False).distinct()
    tokens = fresh.aggregate(prompt=Sum("prompt_tokens"), cached=Sum("cached_tokens"),
                             completion=Sum("completion_tokens"))
    n_fresh = fresh.count()
    done = run.done
    remaining = max(run.total - done, 0)
    eta = None
    if not run.is_finished() and not idle and elapsed > 0 and done:
        # The pace since the first answer came back, where there is one more: the time before it is the run's
        # cold start (servers checked, the model loaded, a refused answer shape asked again), paid once.
        first = RunCall.objects.filter(run=run).aggregate(at=Min("created_at"))["at"] if done > 1 else None
        since = (until - first).total_seconds() if first and first > run.started_at else 0.0
        pace = since / (done - 1) if since > 0 else elapsed / done
        eta = remaining * pace
    # A model's answers only: an ensemble row of an item whose annotators all failed is no answer of its own
    # (its model is blank), so the list and the count (`failed_calls`, one per step) name the same answers.
    failures = list(
        Annotation.objects.filter(source=run, parse_status=ParseStatus.FAILED,
                                  kind__in=(AnnotationKind.ANNOTATOR, AnnotationKind.SUPERVISOR))
        .select_related("item")
        .order_by("-id")
        .values("id", "model", "kind", "item__external_id", "raw_answer", "parse_problems")[:20]
    )
    models = [
        {"model": name, "done": entry.get("done", 0), "total": entry.get("total", 0),
         "failed": entry.get("failed", 0),
         "percent": round(100 * entry.get("done", 0) / entry["total"], 1) if entry.get("total") else 0.0}
        for name, entry in run.progress.items()
    ]
    return {
        "id": run.pk,
        "label": run.label,
        "status": run.status,
        "message": run.message,
        "done": done,
        "total": run.total,
        "percent": round(100 * done / run.total, 1) if run.total else 0.0,
        "cache_hits": run.cache_hits,
        "failed": run.failed_calls,
        "llm_calls": n_fresh,
        "elapsed_seconds": round(elapsed, 1),
        "eta_seconds": round(eta, 1) if eta is not None else None,
        "calls_per_second": round(n_fresh / elapsed, 2) if elapsed > 0 else 0.0,
        "tokens_per_second": round((tokens["completion"] or 0) / elapsed, 1) if elapsed > 0 else 0.0,
        "prompt_tokens": prompt_token_counts(tokens["prompt"], tokens["cached"]),
        "completion_tokens": tokens["completion"] or 0,
        "models": models,
        "failures": failures,
        "problems": {**run_problems(run), **unchecked_problems(run.config)},
        "unchecked": sorted((run.config or {}).get(TRUNCATION_UNCHECKED, {})),
        "finished": run.is_finished(),
        "servers": list(run.servers),
        "placement": run.placement,
        # A run without steps wrote its annotations some other way (the demo's hand-written samples, an import).
        "has_steps": run.total > 0,
        "is_sample": Annotation.objects.filter(source=run, is_sample=True).exists() if not run.total else False,
    }
