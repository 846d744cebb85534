"""Create, check, enqueue, cancel and resume runs (the OpeNLGauge ensemble, or one model, over a dataset)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from corpus import cleaning
from corpus.models import Dataset
from errors import UserError
from evaluation.engine.answer_schema import format_options
from evaluation.engine.ensemble import DEFAULT_OUTLIER_RULE, get_outlier_rule
from evaluation.engine.errors import EngineError
from evaluation.engine.presets import EnsemblePreset, get_preset
from evaluation.llm.errors import BackendError, ModelMissing
from evaluation.llm.servers import (
    Server,
    ServerKind,
    models_on,
    parse_server,
    parse_servers,
    servers_kind,
)
from evaluation.llm.simulated import any_simulated
from evaluation.models import Aspect, Evaluator, EvaluatorRun, PromptTemplate
from evaluation.runs import backends
from evaluation.runs.modes import DEFAULT_MODE, ModeSpec, mode_spec
from evaluation.runs.placement import place, placement_record
from evaluation.runs.timings import model_works


class LaunchError(UserError):
    """A run cannot start; the message says what to do."""


def _template_text(kind: str, task_id: int) -> str:
    template = (
        PromptTemplate.objects.filter(kind=kind, is_active=True)
        .filter(Q(task_id=task_id) | Q(task__isnull=True))
        .order_by("task_id")  # NULLs last on PostgreSQL and first on SQLite: pick explicitly below
    )
    rows = list(template)
    own = [t for t in rows if t.task_id == task_id]
    chosen = (own or rows or [None])[0]
    if chosen is None:
        raise LaunchError(f"no active {kind} prompt template; run `manage.py migrate` to load the built-ins")
    return chosen.text


def _templates(spec: ModeSpec, task_id: int) -> dict[str, str]:
    return {str(kind): _template_text(kind, task_id) for kind in spec.template_kinds}


def servers_given(ollama_url: str | Sequence[str] | None) -> list[Server]:
    """The job's servers: those given (a comma-separated string or a list), else OLLAMA_URLS."""
    given = [ollama_url] if isinstance(ollama_url, str) else list(ollama_url or [])
    if not any(entry.strip() for entry in given):
        given = list(settings.OLLAMA_URLS)
    servers = parse_servers(given)
    why = backends.refused(servers)
    if why:
        raise LaunchError(why, field="server")
    return servers


def gptscore_server(url: str) -> Server:
    """The OpenAI-compatible server a GPTScore metric is sent to, if the allowlist holds it; else LaunchError.

    The address may be given with or without the `openai+` prefix (GPTScore needs that kind of server)."""
    server = parse_server((url or "").strip(), default=ServerKind.OPENAI)
    if not backends.server_allowed(server):
        allowed = ", ".join(sorted(backends.allowed_server_names()))
        raise LaunchError(f"{server.url[:200]}: not an allowed GPTScore server; allowed: {allowed} (an admin "
                          "adds servers with GPTSCORE_URL or as openai+URL in OLLAMA_URLS)", field="gptscore_url")
    return server


def check_servers(servers: Sequence[Server], models: Sequence[str]) -> dict[str, dict[str, str]]:
    """Ask every server which of `models` it has: server -> model -> digest.

    Raise LaunchError naming a server that cannot be reached, or the models no server has with the
    `ollama pull` commands to run."""
    available: dict[str, dict[str, str]] = {}
    for server in servers:
        try:
            backend = backends.connect(server)
        except BackendError as exc:
            raise LaunchError(str(exc), field="server") from exc
        try:
            if len(servers) == 1:
                available[server.name] = backend.check(list(dict.fromkeys(models)))
            else:
                available[server.name] = models_on(backend, models)
        except BackendError as exc:
            raise LaunchError(str(exc), field="server") from exc
        finally:
            backend.close()
    missing = [m for m in dict.fromkeys(models) if not any(m in have for have in available.values())]
    if missing:
        raise LaunchError(str(ModelMissing(missing, url=", ".join(available), kind=servers_kind(servers))),
                          field="annotators")
    return available


def servers_parallel(servers: Sequence[Server], asked: int) -> dict[str, tuple[int, str]]:
    """Server -> (requests in flight on it, where that number comes from), for the run's expected time."""
    found: dict[str, tuple[int, str]] = {}
    for server in servers:
        backend = backends.connect(server)
        try:
            found[server.name] = backends.server_parallel(server, backend, asked)
        finally:
            backend.close()
    return found


def check_models(url: str, models: Sequence[str]) -> dict[str, str]:
    """Return model -> digest on one server (jobs that score on a single server, such as DHP's), or raise
    LaunchError naming the URL tried or the `ollama pull` commands to run."""
    servers = servers_given(url)
    if len(servers) != 1:
        raise LaunchError(f"this job uses one LLM server; {len(servers)} were given ({url})", field="server")
    return check_servers(servers, models)[servers[0].name]


def base_options() -> dict[str, Any]:
    """A job's sampling options; num_ctx only when OLLAMA_NUM_CTX pins it (else each model's budget sets it)."""
    options: dict[str, Any] = {"temperature": 0.0, "seed": settings.LLM_SEED}
    if settings.OLLAMA_NUM_CTX:
        options["num_ctx"] = settings.OLLAMA_NUM_CTX
    return options


MAX_PARALLEL = 64  # requests in flight per model; EvaluatorRun.parallel is a small integer


def answer_format_options(answer_format: str, preset: EnsemblePreset | None = None) -> dict[str, Any]:
    """The call options of an answer format (`json` adds the schema, bounded as the preset says), or
    LaunchError naming the formats."""
    try:
        return format_options(answer_format, max_errors=preset.answer_errors if preset else None,
                              explanation_chars=preset.answer_chars if preset else None)
    except ValueError as exc:
        raise LaunchError(str(exc), field="answer_format") from None


@transaction.atomic
def run_create(
    *,
    dataset: Dataset,
    aspect_name: str,
    annotators: Sequence[str] | None = None,
    supervisor: str | None = None,
    ollama_url: str | Sequence[str] | None = None,
    parallel: int | None = None,
    outlier_rule: str = DEFAULT_OUTLIER_RULE,
    mode: str = DEFAULT_MODE,
    preset: str | None = None,
    user=None,
    check: bool = True,
    item_ids: Sequence[int] | None = None,  # exactly these items (DHP's perturbed texts too); default: own items
    repair: bool | None = None,  # send an unreadable answer back once to be restated (default: the retry policy)
    answer_format: str | None = None,  # "text" or "json" (a schema-constrained answer); None: the preset's
    part_of: str = "",  # the job this run serves (e.g. "DHP run 7"); such runs stay out of the researchers' lists
) -> EvaluatorRun:
    """Create a pending run with its configuration and prompt templates frozen.

    `mode` names one of evaluation.runs.modes.MODES. Models not given come from `preset` (default the
    ENSEMBLE_PRESET setting); a one-model mode takes the preset's first annotator. The preset used is
    recorded in `config["preset"]` (empty when every model was given). `ollama_url` is one server or
    several (a list, or a comma-separated string; default OLLAMA_URLS). With `check`, every server is asked
    for its models first, so a missing model or an unreachable server is refused before anything is
    queued, and the models are placed on the servers (recorded on the run; the executor places again from
    what is left).
    """
    spec = mode_spec(mode)
    aspect = Aspect.objects.select_related("task").filter(task=dataset.task, name=aspect_name).first()
    if aspect is None:
        known = ", ".join(Aspect.objects.filter(task=dataset.task).values_list("name", flat=True))
        raise LaunchError(f"task {dataset.task.slug!r} has no aspect {aspect_name!r} (aspects: {known})",
                          field="aspect")
    chosen, annotators, supervisor, used_preset = _models(spec, preset, annotators, supervisor)
    # The preset's answer format goes with the preset's models; models given by name answer in plain text.
    answer_format = answer_format or (chosen.answer_format if used_preset else "text")
    try:
        get_outlier_rule(outlier_rule)
    except EngineError as exc:
        raise LaunchError(str(exc), field="outlier_rule") from None
    servers = servers_given(ollama_url)
    parallel = parallel or settings.OLLAMA_PARALLEL
    if not 1 <= parallel <= MAX_PARALLEL:
        raise LaunchError(f"--parallel must be between 1 and {MAX_PARALLEL}", field="parallel")
    items = dataset.items.filter(pk__in=item_ids) if item_ids is not None else dataset.items.filter(
        derived_from__isnull=True
    )
    n_items = items.count()
    if not n_items:
        raise LaunchError(f"dataset {dataset.name!r} has no items", field="dataset")
    passes = spec.passes(annotators, supervisor)
    models = [model_pass.model for model_pass in passes]
    available = check_servers(servers, models) if check else {}
    placement: dict[str, Any] = {}
    digests: dict[str, str] = {}
    if available:
        at_once = servers_parallel(servers, parallel)
        placed = place(model_works(dict.fromkeys(passes, n_items), answer_format=answer_format), available,
                       parallel={name: n for name, (n, _) in at_once.items()},
                       loaded={s.name for s in servers if s.kind is ServerKind.OPENAI})
        digests = {model: available[server][model] for model, server in placed.models.items()}
        placement = placement_record(placed, {s.name: s.kind.value for s in servers}, parallel=at_once)
    config = _config(spec, chosen if used_preset else None, annotators, supervisor, digests=digests,
                     answer_format=answer_format, outlier_rule=outlier_rule, repair=repair)
    if item_ids is not None:
        config["item_ids"] = sorted(set(item_ids))
    if part_of:
        config["part_of"] = part_of
    evaluator, _ = Evaluator.objects.get_or_create(
        name=spec.evaluator_name(annotators, supervisor)[:200],
        defaults={"kind": spec.evaluator_kind, "config": {"annotators": annotators, "supervisor": supervisor}},
    )
    run = EvaluatorRun.objects.create(
        evaluator=evaluator, dataset=dataset, aspect=aspect, label=f"pending-{timezone.now().timestamp()}",
        config=config, ollama_url=",".join(s.name for s in servers), servers=[s.name for s in servers],
        placement=placement, parallel=parallel, created_by=user, simulated=bool(available) and any_simulated(servers),
        templates=_templates(spec, aspect.task_id),
        total=n_items * len(passes),
        progress={model_pass.progress_key: {"done": 0, "total": n_items} for model_pass in passes},
    )
    run.label = f"{spec.mode}-{run.pk}"
    run.save(update_fields=["label"])
    return run


def _models(spec: ModeSpec, preset: str | None, annotators: Sequence[str] | None,
            supervisor: str | None) -> tuple[EnsemblePreset, list[str], str, bool]:
    """The run's preset, annotator models and supervisor (those not given come from the preset), and whether
    the preset supplied any; LaunchError for a list the mode cannot take."""
    try:
        chosen = get_preset(preset or settings.ENSEMBLE_PRESET)
    except EngineError as exc:
        raise LaunchError(str(exc), field="preset") from None
    used_preset = not annotators or (spec.has_supervisor and not supervisor)
    if not annotators:
        annotators = list(chosen.annotators)[: spec.n_models]  # [:None] keeps them all
    annotators = list(annotators)
    supervisor = supervisor or chosen.supervisor
    if not annotators:
        raise LaunchError("an ensemble needs at least one annotator model", field="annotators")
    if spec.n_models is not None and len(annotators) != spec.n_models:
        wanted = "one model (--annotators MODEL)" if spec.n_models == 1 else f"{spec.n_models} models"
        raise LaunchError(f"a {spec.mode} run takes exactly {wanted}, not {len(annotators)}", field="annotators")
    if not spec.has_supervisor:
        supervisor = ""
    if len(set(annotators)) != len(annotators):
        raise LaunchError("the same annotator model is listed twice", field="annotators")
    for model in annotators:
        cleaning.check_identifier(model, "annotators", error=LaunchError)
    if supervisor:
        cleaning.check_identifier(supervisor, "supervisor", error=LaunchError)
    return chosen, annotators, supervisor, used_preset


def _config(spec: ModeSpec, preset: EnsemblePreset | None, annotators: list[str], supervisor: str, *,
            digests: dict[str, str], answer_format: str, outlier_rule: str, repair: bool | None) -> dict[str, Any]:
    """The run's frozen configuration: what a resumed run asks with, so its cache keys stay the same."""
    policy = backends.retry_policy()
    return {
        "mode": spec.mode.value,
        "preset": preset.name if preset else "",
        "annotators": annotators,
        "supervisor": supervisor,
        "digests": digests,
        "options": {**base_options(), **answer_format_options(answer_format, preset)},
        "answer_format": answer_format,
        "answer_tokens": (preset.answer_tokens if preset else None) or settings.LLM_ANSWER_TOKENS,
        "think": dict(preset.think) if preset else {},
        "retry_temperature": policy.retry_temperature,  # frozen: a resumed run asks with the same cache keys
        "max_answer_attempts": policy.answer_attempts,
        "outlier_rule": outlier_rule,
        "keep_alive": settings.OLLAMA_KEEP_ALIVE,
        "repair": policy.repair if repair is None else bool(repair),
    }
