"""Decoy explanations in the evaluators' own voice: which model explains each decoy, with which prompt, and the job
that asks them (its start, its work, and the draft it keeps closed while it runs).

A decoy is shown under an evaluator's label. The model that wrote that evaluator's real explanations on the same
output (the donor span's annotation: the supervisor of an ensemble, the lone model of a single or distilled run) is
asked to explain the decoy's stretch as an error: the prompt it answered for that output in its run, read from the
call ledger, with a section naming the stretch (quality.engine.decoy_prompt). The request goes the one LLM path
(evaluation.runs.asking.ask_many: the ledger as cache, the retry policy, the prompt-cache order) and the answer is
read by the run's own parser. A decoy whose run names no server, or never asked that model about the output
(an imported or hand-made run), keeps the explanation it was proposed with (quality.engine.decoys.voice_explanation).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

from django.conf import settings
from django.db import transaction
from django.db.models import F

from accounts.models import User
from annotator.models import Campaign
from corpus.models import AnnotationKind, ErrorSpan
from errors import Conflict
from evaluation.engine.parsing import parse_supervisor_answer
from evaluation.llm.base import LLMBackend
from evaluation.llm.errors import BackendError, ServerListError, ServerNotAllowed
from evaluation.llm.policy import RetryPolicy
from evaluation.llm.servers import models_on, parse_servers
from evaluation.llm.simulated import any_simulated
from evaluation.models import EvaluatorRun, LLMRole, RunCall
from evaluation.runs.asking import Answered, Ask, ask_many
from evaluation.runs.backends import connect
from evaluation.runs.failures import LLM_ERRORS, llm_stopped
from evaluation.runs.modes import DEFAULT_MODE, mode_spec
from jobs.lifecycle import job_beat, job_checkpoint, job_queue
from jobs.models import FINISHED
from quality.engine.decoy_prompt import decoy_prompt, error_at
from quality.models import CheckSpan, DecoyExplanation, DecoyExplanationJob

log = logging.getLogger(__name__)

PROBE_SECONDS = 3.0  # how long campaign creation waits for a server to say which models it has
Outcome = DecoyExplanation.Outcome


@dataclass(frozen=True)
class DecoyAsk:
    """One decoy and what its explanation is asked of: the run, the model in its role, the prompt; `why` says why
    nothing can be asked (then `prompt` is empty and the decoy keeps its explanation)."""

    decoy_id: int
    span_id: int
    item_id: int
    output: str
    start: int
    end: int
    before: str
    run_id: int
    model: str = ""
    role: str = ""
    servers: tuple[str, ...] = ()
    prompt: str = ""
    why: str = ""


def answer_model(run: EvaluatorRun, donor: ErrorSpan | None) -> tuple[str, str]:
    """The (model, role) whose answer holds the donor span: the supervisor of an ensemble's merged answer, else the
    model of the donor's annotation; without a donor, the model whose answer is the run's (its supervisor, or its
    only model)."""
    config = run.config or {}
    supervisor = config.get("supervisor") or ""
    annotators = list(config.get("annotators") or [])
    if donor is not None:
        annotation = donor.annotation
        if annotation.kind in (AnnotationKind.ENSEMBLE, AnnotationKind.SUPERVISOR):
            return annotation.model or supervisor, LLMRole.SUPERVISOR
        if annotation.kind == AnnotationKind.ANNOTATOR and annotation.model:
            return annotation.model, LLMRole.ANNOTATOR
    if mode_spec(config.get("mode", DEFAULT_MODE)).has_supervisor and supervisor:
        return supervisor, LLMRole.SUPERVISOR
    return (annotators[0] if annotators else ""), LLMRole.ANNOTATOR


def run_servers(run: EvaluatorRun) -> tuple[str, ...]:
    """The servers the run was made with ('' when it names none: an imported or hand-made run)."""
    given = run.servers or run.ollama_url
    if not given:
        return ()
    try:
        return tuple(server.name for server in parse_servers(given))
    except ServerListError:
        return ()


def decoy_asks(campaign: Campaign, *, skip: Sequence[int] = ()) -> list[DecoyAsk]:
    """What to ask for each decoy of the campaign (but `skip`), in decoy order."""
    decoys = list(
        CheckSpan.objects.filter(campaign=campaign, role=CheckSpan.Role.DECOY).exclude(pk__in=list(skip))
        .select_related("span__annotation__item", "campaign_run__run__aspect__task", "donor__annotation")
        .order_by("pk")
    )
    runs = {d.campaign_run.run_id for d in decoys}
    items = {d.span.annotation.item_id for d in decoys}
    ledger = {
        (run_id, item_id, role, model): prompt
        for run_id, item_id, role, model, prompt in RunCall.objects.filter(
            run_id__in=runs, item_id__in=items, attempt=0).values_list("run_id", "item_id", "role", "model",
                                                                       "call__prompt")
    }
    asks = []
    for decoy in decoys:
        span, run = decoy.span, decoy.campaign_run.run
        item = span.annotation.item
        base = DecoyAsk(decoy_id=decoy.pk, span_id=span.pk, item_id=item.pk, output=item.output, start=span.start or 0,
                        end=span.end or 0, before=span.explanation, run_id=run.pk)
        model, role = answer_model(run, decoy.donor)
        servers = run_servers(run)
        prompt = ledger.get((run.pk, item.pk, role, model), "")
        if not servers:
            asks.append(replace(base, model=model, role=role, why="its evaluator run names no LLM server"))
        elif not model or not prompt:
            asks.append(replace(base, model=model, role=role, servers=servers,
                              why=f"its evaluator run never asked {model or 'a model'} about this output"))
        else:
            stretch = item.output[base.start:base.end]
            asks.append(replace(base, model=model, role=role, servers=servers, prompt=decoy_prompt(
                prompt, stretch=stretch, output_noun=run.aspect.task.output_noun, aspect_name=run.aspect.name)))
    return asks


# ---- starting, and the draft it keeps closed ------------------------------------------------------------------


def decoy_job_unfinished(campaign: Campaign) -> DecoyExplanationJob | None:
    """The campaign's decoy explanation job that has not finished (waiting, running or paused), if any."""
    return DecoyExplanationJob.objects.filter(campaign=campaign).exclude(status__in=FINISHED).first()


class DecoysBeingExplained(Conflict):
    """The campaign cannot open (or start another job) while its decoys' explanations are being written."""


def decoy_job_refusal(campaign: Campaign) -> None:
    """Refuse to open a draft whose decoy explanation job has not finished (409 saying so)."""
    job = decoy_job_unfinished(campaign)
    if job is not None:
        raise DecoysBeingExplained(
            f"The decoys' explanations are being written by their evaluators' models: job {job.pk} is {job.status} "
            f"({job.done} of {job.total} decoys). The campaign can open once the job has finished; cancel it "
            f"(POST /api/decoy-explanations/{job.pk}/cancel) to open with the explanations as they are now.")


@transaction.atomic
def decoy_explanations_start(*, campaign: Campaign, user: User | None = None,
                             automatic: bool = False) -> DecoyExplanationJob:
    """Create and queue the job for the campaign's decoys; Conflict (409) unless the campaign is a draft, has no
    unfinished job, and has a decoy whose run can be asked."""
    Campaign.objects.select_for_update().filter(pk=campaign.pk).first()  # one start at a time per campaign
    campaign.refresh_from_db(fields=["status"])
    if campaign.status != Campaign.Status.DRAFT:
        raise Conflict(f"This campaign is {campaign.get_status_display().lower()}: only a draft's decoys are "
                       "rewritten (annotators may have judged them already).")
    if (running := decoy_job_unfinished(campaign)) is not None:
        raise DecoysBeingExplained(f"Job {running.pk} is already writing this campaign's decoy explanations "
                                   f"({running.status}).")
    asks = decoy_asks(campaign)
    if not asks:
        raise Conflict("This campaign has no decoys to explain.")
    if not any(ask.prompt for ask in asks):
        reasons = "; ".join(sorted({ask.why for ask in asks}))
        raise Conflict(f"No decoy can be explained by an evaluator's model ({reasons}); each keeps the explanation "
                       "written from its evaluator's real ones.")
    job = DecoyExplanationJob.objects.create(campaign=campaign, created_by=user, automatic=automatic,
                                             total=len(asks))
    job_queue(job)
    return job


def decoy_explanations_autostart(campaign: Campaign) -> DecoyExplanationJob | None:
    """At campaign creation: start the job when DECOY_EXPLAIN_AUTO is on and a server of the decoys' runs has a
    model to ask (one short probe per server, so a campaign is not made to wait on a server that is away)."""
    if not settings.DECOY_EXPLAIN_AUTO or not campaign.decoys:
        return None
    wanted: dict[str, set[str]] = {}
    for ask in decoy_asks(campaign):
        for server in ask.servers if ask.prompt else ():
            wanted.setdefault(server, set()).add(ask.model)
    if not any(server_has_any(server, models) for server, models in sorted(wanted.items())):
        return None
    return decoy_explanations_start(campaign=campaign, user=campaign.created_by, automatic=True)


def server_has_any(server: str, models: set[str]) -> bool:
    """Does the server have any of these models? One short probe: a server that does not answer has none."""
    try:
        backend = connect(server, timeout=PROBE_SECONDS, policy=RetryPolicy(transport_retries=0))
    except (BackendError, ServerListError):
        return False
    try:
        return bool(models_on(backend, sorted(models)))
    except BackendError:
        return False
    finally:
        backend.close()


def decoy_job_counts(job: DecoyExplanationJob) -> dict[str, int]:
    """How many decoys the job rewrote, found unusable answers for, and kept as written."""
    counts = Counter(job.rows.values_list("outcome", flat=True))
    return {outcome.value: counts.get(outcome.value, 0) for outcome in Outcome}


# ---- the job's work --------------------------------------------------------------------------------------------


def decoy_explanations_write(job: DecoyExplanationJob) -> None:
    """Ask each decoy not yet done by this job (a resumed job goes on where it stopped; answers come from the
    ledger), a run and a model at a time; an LLM error pauses or fails the job as the retry policy says."""
    done = list(job.rows.values_list("decoy_id", flat=True))
    asks = decoy_asks(job.campaign, skip=done)
    job_checkpoint(DecoyExplanationJob, job.pk, done=len(done), total=len(done) + len(asks))
    _record(job, [(ask, Outcome.KEPT, None, ask.why) for ask in asks if not ask.prompt])
    groups: dict[tuple[int, str, str], list[DecoyAsk]] = {}
    for ask in asks:
        if ask.prompt:
            groups.setdefault((ask.run_id, ask.model, ask.role), []).append(ask)
    try:
        for (run_id, model, role), group in groups.items():
            _ask_group(job, EvaluatorRun.objects.get(pk=run_id), model, role, group)
    except LLM_ERRORS as exc:
        raise llm_stopped(exc, kept=DecoyExplanationJob.kept_message) from exc


def _backend_for(servers: Sequence[str], model: str, keep_alive) -> tuple[LLMBackend | None, str, str, str]:
    """A client of the first of the run's servers that has `model`, with its digest and the server's name, or the
    reason none has it. A server that does not answer is passed over; when none answers, its error stops the job
    (paused, as the retry policy says)."""
    reasons, unreachable = [], None
    for server in servers:
        try:
            backend = connect(server, keep_alive=keep_alive)
        except (ServerNotAllowed, ServerListError) as exc:
            reasons.append(str(exc))
            continue
        try:
            have = models_on(backend, [model])
        except BackendError as exc:
            backend.close()
            unreachable = exc
            continue
        if model in have:
            return backend, have[model], server, ""
        backend.close()
        reasons.append(f"{server} does not have {model}")
    if unreachable is not None:
        raise unreachable
    return None, "", "", "; ".join(reasons)


def _ask_group(job: DecoyExplanationJob, run: EvaluatorRun, model: str, role: str, asks: list[DecoyAsk]) -> None:
    config = run.config or {}
    backend, digest, server, why = _backend_for(asks[0].servers, model, config.get("keep_alive"))
    if backend is None:
        _record(job, [(ask, Outcome.KEPT, None, why) for ask in asks])
        return
    if not job.simulated and any_simulated(parse_servers(server)):
        DecoyExplanationJob.objects.filter(pk=job.pk).update(simulated=True)
        job.simulated = True
    parse = parse_supervisor_answer if role == LLMRole.SUPERVISOR else mode_spec(config.get("mode", DEFAULT_MODE)).parse
    options = dict(config.get("options") or {"temperature": 0.0, "seed": settings.LLM_SEED})

    def on_batch(answered: list[Answered], interrupted: bool) -> None:
        with transaction.atomic():  # a decoy's new explanation and its row are written together
            _record(job, [_outcome(a) for a in answered])
        if not interrupted:
            job_checkpoint(DecoyExplanationJob, job.pk)

    try:
        ask_many(backend, model, digest, [Ask(ask, ask.prompt, options, group=(ask.item_id, model)) for ask in asks],
                 parse=parse, parallel=run.parallel, on_batch=on_batch, answer_tokens=config.get("answer_tokens"))
    finally:
        backend.close()


def _outcome(answered: Answered) -> tuple[DecoyAsk, str, int | None, str]:
    """The decoy's new explanation (and severity, when the answer gives one) from the answer's error at its stretch;
    an answer with none keeps the decoy's, and so does a decoy edited by hand since it was asked."""
    ask: DecoyAsk = answered.ask.ref
    parsed = answered.outcome.parsed
    if parsed.status == "failed":
        return ask, Outcome.UNUSABLE, answered.call_id, "the answer could not be parsed"
    error = error_at(parsed.errors, ask.output, ask.start, ask.end)
    if error is None:
        return ask, Outcome.UNUSABLE, answered.call_id, "the answer reports no error at the decoy's stretch"
    fields: dict[str, object] = {"explanation": error.explanation.strip()}
    if error.severity is not None:
        fields["severity"] = error.severity
    if not ErrorSpan.objects.filter(pk=ask.span_id, explanation=ask.before).update(**fields):
        return ask, Outcome.KEPT, answered.call_id, "edited (or dropped) while the job ran; the edit is kept"
    return ask, Outcome.REWRITTEN, answered.call_id, ""


@transaction.atomic
def _record(job: DecoyExplanationJob, outcomes: list[tuple[DecoyAsk, str, int | None, str]]) -> None:
    """Store what the job did with these decoys (those still there) and count them as done."""
    if not outcomes:
        return
    present = set(CheckSpan.objects.filter(pk__in=[ask.decoy_id for ask, *_ in outcomes]).values_list("pk", flat=True))
    DecoyExplanation.objects.bulk_create([
        DecoyExplanation(job=job, decoy_id=ask.decoy_id, outcome=outcome, model=ask.model, call_id=call_id,
                         before=ask.before, note=note)
        for ask, outcome, call_id, note in outcomes if ask.decoy_id in present
    ], ignore_conflicts=True)
    job_beat(DecoyExplanationJob, job.pk, done=F("done") + len(outcomes))
