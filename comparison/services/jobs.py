"""Create, check, enqueue, cancel and resume metric comparison jobs."""

from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings
from django.db import transaction

from comparison.engine.hf_plan import parse_precision
from comparison.engine.metrics import Family, MetricSpec, parse_metrics
from comparison.models import ComparisonJob
from comparison.services.execute import progress_sums
from corpus.models import Dataset
from errors import UserError
from evaluation.engine.presets import get_preset
from evaluation.llm.errors import BackendError
from evaluation.llm.logprob_preflight import logprob_preflight
from evaluation.llm.servers import ServerKind, ServerListError, parse_server, parse_servers
from evaluation.llm.simulated import any_simulated
from evaluation.models import Aspect, EvaluatorRun
from evaluation.runs.backends import connect, retry_policy
from evaluation.runs.launch import check_models, gptscore_server
from jobs.models import JobStatus

NO_LOGPROBS_IN_OLLAMA = (
    "Ollama returns log-probabilities only of tokens it generates, never of a given text, so GPTScore cannot "
    "run through it: give an OpenAI-compatible server with echo and logprobs on /v1/completions (vLLM >= "
    "0.5.2; the llama.cpp server rejects echo) as --gptscore-url or GPTSCORE_URL."
)


class JobError(UserError):
    """A comparison job cannot be created or changed; the message says what to do."""


def _aspects(dataset: Dataset, wanted: Sequence[str] | None) -> list[str]:
    known = list(dataset.score_aspects or [])
    if not known:
        raise JobError(f"dataset {dataset.name!r} has no human scores to compare metrics with", field="dataset")
    if not wanted:
        return known
    out = []
    for name in wanted:
        match = next((k for k in known if k == name), None) or next(
            (k for k in known if k.lower() == name.lower()), None)
        if match is None:
            raise JobError(f"dataset {dataset.name!r} has no human scores for aspect {name!r} "
                           f"(aspects: {', '.join(known)})", field="aspects")
        if match not in out:
            out.append(match)
    return out


def _check_references(dataset: Dataset, specs: Sequence[MetricSpec]) -> None:
    needing = [s.name for s in specs if s.needs_reference]
    if needing and dataset.items.filter(reference="").exists():
        missing = dataset.items.filter(reference="").count()
        raise JobError(
            f"{', '.join(needing)} compare(s) an output with a reference, but {missing} item(s) of dataset "
            f"{dataset.name!r} have none. Ask for the comparison with the input instead by naming the metric "
            f"with '@input' (e.g. {needing[0]}@input); it is labelled so in every table.", field="metrics"
        )


def _check_run_aspects(dataset: Dataset, specs: Sequence[MetricSpec], aspects: Sequence[str]) -> None:
    if not any(s.family is Family.RUN for s in specs):
        return
    names = {n.lower() for n in Aspect.objects.filter(task=dataset.task).values_list("name", flat=True)}
    missing = [a for a in aspects if a.lower() not in names]
    if missing:
        raise JobError(
            f"task {dataset.task.slug!r} defines no evaluation aspect named {', '.join(map(repr, missing))}, so "
            "the LLM evaluators have no definition to judge it by; add it on the admin's aspect page or pass "
            "--aspects with the others", field="aspects"
        )


def _run_models(spec: MetricSpec, preset_annotators: list[str], preset_supervisor: str) -> list[str]:
    if spec.base == "ensemble":
        return [*preset_annotators, preset_supervisor]
    return [spec.model]


def _has_finished_runs(dataset: Dataset, spec: MetricSpec, aspects: Sequence[str], options: dict) -> bool:
    """Every aspect already has a finished run of this mode and models: the metric needs no server."""
    annotators = options["annotators"] if spec.base == "ensemble" else [spec.model]
    runs = EvaluatorRun.objects.filter(dataset=dataset, config__mode=spec.run_mode, config__annotators=annotators,
                                       status=JobStatus.DONE)
    if spec.base == "ensemble":
        runs = runs.filter(config__supervisor=options["supervisor"])
    return all(runs.filter(aspect__name__iexact=a).exists() for a in aspects)


def _check_servers(dataset: Dataset, specs: Sequence[MetricSpec], aspects: Sequence[str], options: dict) -> None:
    run_models = [m for s in specs if s.family is Family.RUN and not _has_finished_runs(dataset, s, aspects, options)
                  for m in _run_models(s, options["annotators"], options["supervisor"])]
    if run_models:
        check_models(options["ollama_url"], run_models)
    gpt = [s.model for s in specs if s.family is Family.GPTSCORE and not s.local]
    if gpt:
        try:
            with connect(options["gptscore_url"], default=ServerKind.OPENAI, policy=retry_policy().once()) as backend:
                backend.check(gpt)
                for model in gpt:
                    logprob_preflight(backend, model, prefix=settings.GPTSCORE_PREFIX)
        except (BackendError, ServerListError) as exc:
            raise JobError(str(exc), field="gptscore_url") from None


def _job_servers(dataset: Dataset, specs: Sequence[MetricSpec], aspects: Sequence[str], options: dict) -> list:
    """The servers the job will ask (those the check asked): the Ollama one for runs, the GPTScore one."""
    servers = []
    try:
        if any(s.family is Family.RUN and not _has_finished_runs(dataset, s, aspects, options) for s in specs):
            servers += parse_servers(options["ollama_url"])
        if any(s.family is Family.GPTSCORE and not s.local for s in specs):
            servers.append(parse_server(options["gptscore_url"], default=ServerKind.OPENAI))
    except ServerListError:
        return []
    return servers


@transaction.atomic
def comparison_create(
    *,
    dataset: Dataset,
    metrics: Sequence[str] | str,
    aspects: Sequence[str] | None = None,
    ollama_url: str | None = None,
    gptscore_url: str | None = None,
    precision: str | None = None,
    user=None,
    check: bool = True,
) -> ComparisonJob:
    """Create a pending job after checking everything that can be checked before any work.

    With `check`, the Ollama server (ensemble / annotator / distilled metrics) and the GPTScore server are
    asked for their models, so an unreachable server or a missing model is refused before anything is queued."""
    specs = parse_metrics(metrics)
    if not dataset.items.exists():
        raise JobError(f"dataset {dataset.name!r} has no items", field="dataset")
    chosen = _aspects(dataset, aspects)
    _check_references(dataset, specs)
    _check_run_aspects(dataset, specs, chosen)
    preset = get_preset(settings.ENSEMBLE_PRESET)
    options = {
        "ollama_url": ollama_url or settings.OLLAMA_URL,
        "gptscore_url": gptscore_url or settings.GPTSCORE_URL,
        "annotators": list(preset.annotators),
        "supervisor": preset.supervisor,
        "bootstrap": settings.COMPARISON_BOOTSTRAP,
        "seed": settings.LLM_SEED,
    }
    if any(s.local for s in specs):
        options["precision"] = str(parse_precision(precision or settings.GPTSCORE_HF_PRECISION))
    if any(s.family is Family.GPTSCORE and not s.local for s in specs) and not options["gptscore_url"]:
        raise JobError(f"no GPTScore server given. {NO_LOGPROBS_IN_OLLAMA}", field="gptscore_url")
    if options["gptscore_url"]:
        # a given address is fetched by the app: it must be on the allowlist like every server
        options["gptscore_url"] = gptscore_server(options["gptscore_url"]).url
    simulated = False
    if check:
        _check_servers(dataset, specs, chosen, options)
        simulated = any_simulated(_job_servers(dataset, specs, chosen, options))
    n_items = dataset.items.count()
    progress = {
        s.name: {"done": 0, "total": n_items * (len(chosen) if s.per_aspect else 1)} for s in specs
    }
    return ComparisonJob.objects.create(
        dataset=dataset, metrics=[s.name for s in specs], aspects=chosen, options=options, progress=progress,
        created_by=user, simulated=simulated, **progress_sums(progress),
    )

