"""Create DHP runs: check the evaluator, the metrics and the server, then freeze the run's settings (its
worker's part is dhp.services.execute)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from django.conf import settings
from django.db import transaction

from corpus.cleaning import INT32_MAX
from corpus.models import Dataset
from dhp.engine.errors import DhpError
from dhp.engine.kinds import Kind
from dhp.models import DhpRun, Survey
from dhp.services.perturbing import originals, sizes_for
from dhp.services.surveys import weights_for_run
from evaluation.engine.errors import EngineError
from evaluation.engine.presets import get_preset
from evaluation.llm.servers import ServerListError, parse_servers
from evaluation.llm.simulated import any_simulated
from evaluation.models import Aspect
from evaluation.runs.launch import MAX_PARALLEL, check_models
from evaluation.runs.modes import RunMode

log = logging.getLogger(__name__)

MAX_SAMPLES = 20  # samples per text: the page's limit; each is one LLM call per text and metric
SAMPLE_TEMPERATURE = 0.7  # n samples of one prompt differ only through sampling (and their seeds)


DIRECT = "direct"  # DHP's own scoring prompt, one model; the other modes are evaluator runs' (RunMode)


def evaluator_mode(evaluator: str) -> tuple[str, str]:
    """(DIRECT, MODEL) | (RunMode.ENSEMBLE, '') | (RunMode.DISTILLED, MODEL) from the CLI's --evaluator."""
    if evaluator == RunMode.ENSEMBLE:
        return RunMode.ENSEMBLE, ""
    if evaluator.startswith(f"{RunMode.DISTILLED}:"):
        model = evaluator.split(":", 1)[1].strip()
        if not model:
            raise DhpError("--evaluator distilled:MODEL needs a model name after the colon", field="evaluator")
        return RunMode.DISTILLED, model
    if not evaluator.strip():
        raise DhpError("--evaluator is empty", field="evaluator")
    return DIRECT, evaluator.strip()


@transaction.atomic
def dhp_create(
    *, dataset: Dataset, evaluator: str, metrics: Sequence[str], kinds: Sequence[Kind], samples: int = 5,
    survey: Survey | None = None, seed: int = 0, ollama_url: str | None = None, parallel: int | None = None,
    user=None, check: bool = True, preset: str | None = None,
) -> DhpRun:
    """Check everything a run needs (metrics are aspects of the task, the models exist) and create it pending."""
    mode, model = evaluator_mode(evaluator)
    metrics = list(dict.fromkeys(m.strip() for m in metrics if m.strip()))
    if not metrics:
        raise DhpError("--metrics names no metric", field="metrics")
    known = set(Aspect.objects.filter(task=dataset.task).values_list("name", flat=True))
    unknown = [m for m in metrics if m not in known]
    if unknown:
        raise DhpError(f"task {dataset.task.slug!r} has no aspect(s) {', '.join(unknown)} "
                       f"(aspects: {', '.join(sorted(known))})", field="metrics")
    if not 1 <= samples <= MAX_SAMPLES:
        raise DhpError(f"--samples must be between 1 and {MAX_SAMPLES}", field="samples")
    if not 0 <= seed <= INT32_MAX:
        raise DhpError(f"--seed must be between 0 and {INT32_MAX}", field="seed")
    notes = []
    if mode != DIRECT and samples != 1:
        notes.append(f"{mode} answers at temperature 0: one sample per text instead of {samples}")
        samples = 1
    parallel = parallel or settings.OLLAMA_PARALLEL
    if not 1 <= parallel <= MAX_PARALLEL:
        raise DhpError(f"--parallel must be between 1 and {MAX_PARALLEL}", field="parallel")
    if not originals(dataset):
        raise DhpError(f"dataset {dataset.name!r} has no items", field="dataset")
    if survey is not None and survey.task_id != dataset.task_id:
        raise DhpError(f"survey {survey.pk} is about task {survey.task.slug!r}, not {dataset.task.slug!r}",
                       field="survey")
    weights_version = weights_for_run(survey) if survey is not None else None  # cheap checks before the server
    url = ollama_url or settings.OLLAMA_URL
    preset = preset or settings.ENSEMBLE_PRESET
    try:
        ensemble = get_preset(preset)
    except EngineError as exc:
        raise DhpError(str(exc), field="preset") from None
    perturb_model = settings.DHP_PERTURB_MODEL or model or ensemble.supervisor
    needed = [model] if model else []
    if any(kind.is_llm for kind in kinds):
        needed.append(perturb_model)
    digests = {}
    if check and needed:
        digests = check_models(url, needed)
    return DhpRun.objects.create(
        simulated=bool(digests) and url_simulated(url),
        dataset=dataset, evaluator=evaluator, metrics=metrics, kinds=[k.name for k in kinds],
        sizes=sizes_for(dataset, kinds), samples=samples, seed=seed, ollama_url=url, parallel=parallel,
        survey=survey, weights=weights_version, created_by=user, notes=notes,
        config={"notes": notes, "mode": mode, "model": model, "perturb_model": perturb_model, "digests": digests,
                "preset": preset,
                "options": {"temperature": SAMPLE_TEMPERATURE if samples > 1 else 0.0, "seed": settings.LLM_SEED,
                            **({"num_ctx": settings.OLLAMA_NUM_CTX} if settings.OLLAMA_NUM_CTX else {})}},
    )


def url_simulated(url: str) -> bool:
    """Return whether a server of `url` (one address or a comma-separated list) is the simulator."""
    try:
        return any_simulated(parse_servers(url))
    except ServerListError:
        return False

