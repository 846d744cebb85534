"""Planted errors written by a model: which model writes them, the job that asks it, and the draft it keeps closed.

A planted output is a hidden copy of a real output with one error planted by a rule (quality.engine.planting). This
job asks a model to plant one error into the ORIGINAL output instead, given its input data
(quality.engine.planted_prompt), through the one LLM path (evaluation.runs.asking.ask_many: the ledger as cache, the
retry policy). A usable answer - one changed stretch, clear of every span any source marks on the output - replaces
the copy's text, its planted stretch and the offsets of the machine spans copied onto it; any other answer keeps the
rule-made error. The model is the one a researcher names, else the first evaluator run's (as decoys are explained).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.db.models import F

from accounts.models import User
from annotator.models import Campaign, CampaignRun
from corpus import cleaning
from corpus.models import ErrorSpan, Item
from errors import BadRequest, Conflict
from evaluation.engine.parsing import ParsedAnswer
from evaluation.llm.errors import ServerListError, ServerNotAllowed
from evaluation.llm.servers import models_on, parse_server, parse_servers
from evaluation.llm.simulated import any_simulated
from evaluation.runs.asking import Answered, Ask, ask_many
from evaluation.runs.backends import connect, refused
from evaluation.runs.failures import LLM_ERRORS, llm_stopped
from jobs.lifecycle import job_beat, job_checkpoint, job_queue
from jobs.models import FINISHED
from quality.decoy_explaining import answer_model, run_servers, server_has_any
from quality.engine.planted_prompt import KIND, UnusableAnswer, planted_from_answer, planted_prompt
from quality.models import CheckSpan, PlantedOutput, PlantedWriting, PlantedWritingJob
from quality.selectors.spans import spans_taken
from stats.overlap import shared_chars

log = logging.getLogger(__name__)

MAX_MODEL = 200
PARALLEL = 2  # requests in flight at once: a server with fewer slots queues them
Outcome = PlantedWriting.Outcome


@dataclass(frozen=True)
class PlantedAsk:
    """One planted output and what is asked for it: the prompt over its original output, the stretches to keep,
    and the copy's text when asked (a copy changed since is left alone)."""

    planted_id: int
    copy_id: int
    output: str
    before: str
    keep: tuple[tuple[int, int], ...]
    prompt: str


def planted_asks(campaign: Campaign, *, skip: Sequence[int] = ()) -> list[PlantedAsk]:
    """What to ask for each planted output of the campaign (but `skip`), in the order they were made."""
    rows = list(PlantedOutput.objects.filter(campaign=campaign).exclude(pk__in=list(skip))
                .select_related("original", "item").order_by("pk"))
    taken = spans_taken(sorted({row.original_id for row in rows}))
    noun = campaign.dataset.task.output_noun if rows else ""
    asks = []
    for row in rows:
        original = row.original
        keep = tuple(sorted(taken[original.pk]))
        prompt = planted_prompt(output=original.output, inputs=original.inputs or {}, noun=noun,
                                keep=[original.output[a:b] for a, b in keep])
        asks.append(PlantedAsk(planted_id=row.pk, copy_id=row.item_id, output=original.output, before=row.item.output,
                               keep=keep, prompt=prompt))
    return asks


# ---- who writes them -------------------------------------------------------------------------------------------


def default_writer(campaign: Campaign) -> tuple[str, str]:
    """(server, model) of the campaign's first evaluator run (by label) that names a server and a model: its first
    server, and the model whose answer is the run's; ("", "") when no run names both (imported or hand-made runs)."""
    for link in CampaignRun.objects.filter(campaign=campaign).select_related("run").order_by("label", "pk"):
        servers = run_servers(link.run)
        model, _role = answer_model(link.run, None)
        if servers and model:
            return servers[0], model
    return "", ""


def writer_choose(campaign: Campaign, *, server: str = "", model: str = "") -> tuple[str, str]:
    """The (server, model) a job asks: those given, the first evaluator run's for what is not. BadRequest (400)
    naming the field for an address that is not one, a server outside the allowlist, a model name too long, or
    nothing to fall back on."""
    server, model = (server or "").strip(), (model or "").strip()
    if len(model) > MAX_MODEL:
        raise BadRequest(f"model: at most {MAX_MODEL} characters", field="model")
    cleaning.check_identifier(model, "model", error=BadRequest)
    cleaning.check_identifier(server, "server", error=BadRequest)
    default_server, default_model = default_writer(campaign)
    server, model = server or default_server, model or default_model
    if not server:
        raise BadRequest("server: no evaluator run of this campaign names an LLM server; give one", field="server")
    if not model:
        raise BadRequest("model: no evaluator run of this campaign names a model; give one", field="model")
    try:
        parsed = parse_server(server)
    except ServerListError as exc:
        raise BadRequest(f"server: {exc}", field="server") from None
    if why := refused([parsed]):
        raise BadRequest(f"server: {why}", field="server")
    return parsed.name, model


# ---- starting, and the draft it keeps closed ------------------------------------------------------------------


def planted_job_unfinished(campaign: Campaign) -> PlantedWritingJob | None:
    """The campaign's planted-error writing job that has not finished (waiting, running or paused), if any."""
    return PlantedWritingJob.objects.filter(campaign=campaign).exclude(status__in=FINISHED).first()


class PlantedBeingWritten(Conflict):
    """The campaign cannot open (or start another job) while a model writes its planted errors."""


def planted_job_refusal(campaign: Campaign) -> None:
    """Refuse to open a draft whose planted-error writing job has not finished (409 saying so)."""
    job = planted_job_unfinished(campaign)
    if job is not None:
        raise PlantedBeingWritten(
            f"The planted errors are being written by {job.model}: job {job.pk} is {job.status} ({job.done} of "
            f"{job.total} planted outputs). The campaign can open once the job has finished; cancel it "
            f"(POST /api/planted-writing/{job.pk}/cancel) to open with the planted errors as they are now.")


@transaction.atomic
def planted_writing_start(*, campaign: Campaign, user: User | None = None, server: str = "", model: str = "",
                          automatic: bool = False) -> PlantedWritingJob:
    """Create and queue the job for the campaign's planted outputs; BadRequest (400) for a bad server or model,
    Conflict (409) unless the campaign is a draft with planted outputs and no unfinished job."""
    Campaign.objects.select_for_update().filter(pk=campaign.pk).first()  # one start at a time per campaign
    campaign.refresh_from_db(fields=["status"])
    if campaign.status != Campaign.Status.DRAFT:
        raise Conflict(f"This campaign is {campaign.get_status_display().lower()}: only a draft's planted outputs "
                       "are rewritten (annotators may have judged them already).")
    if (running := planted_job_unfinished(campaign)) is not None:
        raise PlantedBeingWritten(f"Job {running.pk} is already writing this campaign's planted errors "
                                  f"({running.status}).")
    total = PlantedOutput.objects.filter(campaign=campaign).count()
    if not total:
        raise Conflict("This campaign has no planted outputs to write errors into.")
    server, model = writer_choose(campaign, server=server, model=model)
    job = PlantedWritingJob.objects.create(campaign=campaign, created_by=user, server=server, model=model,
                                           automatic=automatic, total=total)
    job_queue(job)
    return job


def planted_writing_autostart(campaign: Campaign) -> PlantedWritingJob | None:
    """At campaign creation: start the job when PLANTED_WRITE_AUTO is on, the draft has planted outputs and the
    first evaluator run's server has its model (one short probe, so creation does not wait on a server away)."""
    if not settings.PLANTED_WRITE_AUTO or campaign.status != Campaign.Status.DRAFT:
        return None
    if not PlantedOutput.objects.filter(campaign=campaign).exists():
        return None
    server, model = default_writer(campaign)
    if not server or not server_has_any(server, {model}):
        return None
    return planted_writing_start(campaign=campaign, user=campaign.created_by, automatic=True)


def planted_job_counts(job: PlantedWritingJob) -> dict[str, int]:
    """How many planted outputs the job rewrote, found unusable answers for, and kept as made."""
    counts = Counter(job.rows.values_list("outcome", flat=True))
    return {outcome.value: counts.get(outcome.value, 0) for outcome in Outcome}


# ---- the job's work --------------------------------------------------------------------------------------------


def planted_writing_write(job: PlantedWritingJob) -> None:
    """Ask the model for each planted output not yet done by this job (a resumed job goes on where it stopped;
    answers come from the ledger); an LLM error pauses or fails the job as the retry policy says."""
    done = list(job.rows.values_list("planted_id", flat=True))
    asks = planted_asks(job.campaign, skip=done)
    job_checkpoint(PlantedWritingJob, job.pk, done=len(done), total=len(done) + len(asks))
    if not asks:
        return
    try:
        backend = connect(job.server)
    except (ServerNotAllowed, ServerListError) as exc:
        _record(job, [(ask, Outcome.KEPT, None, str(exc)) for ask in asks])
        return
    try:
        have = models_on(backend, [job.model])
        if job.model not in have:
            _record(job, [(ask, Outcome.KEPT, None, f"{job.server} does not have {job.model}") for ask in asks])
            return
        if not job.simulated and any_simulated(parse_servers(job.server)):
            PlantedWritingJob.objects.filter(pk=job.pk).update(simulated=True)
            job.simulated = True

        def on_batch(answered: list[Answered], interrupted: bool) -> None:
            for one in answered:
                with transaction.atomic():  # the copy, its spans and its row: one transaction per output
                    _record(job, [_apply(job, one)])
            if not interrupted:
                job_checkpoint(PlantedWritingJob, job.pk)

        options = {"temperature": 0.0, "seed": settings.LLM_SEED}
        # Every answer is read by planted_from_answer, which needs the output it was asked about: the parse here
        # only passes it on (an unusable answer is recorded, not asked again at a higher temperature).
        ask_many(backend, job.model, have[job.model],
                 [Ask(ask, ask.prompt, options) for ask in asks], parse=lambda text: ParsedAnswer(status="ok"),
                 parallel=PARALLEL, on_batch=on_batch, answer_tokens=_answer_tokens(asks))
    except LLM_ERRORS as exc:
        raise llm_stopped(exc, kept=PlantedWritingJob.kept_message) from exc
    finally:
        backend.close()


def _answer_tokens(asks: Sequence[PlantedAsk]) -> int:
    """Room for the longest output written out again (about 3 characters a token, and some to spare)."""
    return max(settings.LLM_ANSWER_TOKENS, max(len(ask.output) for ask in asks) // 3 + 256)


def _touches(a: int, b: int, start: int, end: int) -> bool:
    """Whether the stretch [a, b) of the original output meets the change at [start, end) (an insertion when the two
    are equal: it meets a stretch it lands inside)."""
    return bool(shared_chars((a, b), (start, end))) if end > start else a < start < b


def _apply(job: PlantedWritingJob, answered: Answered) -> tuple[PlantedAsk, str, int | None, str]:
    """Put the answer's planted error in place of the rule-made one - the copy's text, its PlantedOutput and the
    offsets of the machine spans copied onto it - or say why the rule-made one stays. The caller's transaction
    (`_record`, which also writes the row) makes it all or nothing."""
    ask: PlantedAsk = answered.ask.ref
    outcome = answered.outcome
    if outcome.parsed.status == "failed":
        return ask, Outcome.UNUSABLE, answered.call_id, "; ".join(outcome.parsed.problems) or "the call failed"
    try:
        planted = planted_from_answer(outcome.raw, ask.output, keep=ask.keep)
    except UnusableAnswer as exc:
        return ask, Outcome.UNUSABLE, answered.call_id, str(exc)
    old_end = planted.start + len(planted.before)
    shift = len(planted.after) - len(planted.before)
    status = Campaign.objects.select_for_update().filter(pk=job.campaign_id).values_list("status", flat=True).first()
    if status != Campaign.Status.DRAFT:
        return ask, Outcome.KEPT, answered.call_id, "the campaign opened while the job ran"
    twins = list(ErrorSpan.objects.filter(check_span__role=CheckSpan.Role.COPY, annotation__item_id=ask.copy_id)
                 .select_related("check_span__original"))
    moved: list[ErrorSpan] = []
    for twin in twins:
        source = twin.check_span.original
        if source is None or source.start is None or source.end is None:
            continue
        if _touches(source.start, source.end, planted.start, old_end):
            return ask, Outcome.UNUSABLE, answered.call_id, "the change overlaps a machine span copied onto the output"
        later = source.start >= old_end
        twin.start, twin.end = (source.start + shift, source.end + shift) if later else (source.start, source.end)
        moved.append(twin)
    copy = Item.objects.select_for_update().filter(pk=ask.copy_id).first()
    if copy is None or copy.output != ask.before:
        return ask, Outcome.KEPT, answered.call_id, "the planted output changed while the job ran; it is kept"
    copy.output = planted.text
    copy.perturbation = {**(copy.perturbation or {}), "kind": f"planted:{KIND}"}
    copy.save(update_fields=["output", "perturbation"])
    ErrorSpan.objects.bulk_update(moved, ["start", "end"])
    PlantedOutput.objects.filter(pk=ask.planted_id).update(kind=KIND, start=planted.start, end=planted.end,
                                                           before=planted.before, after=planted.after)
    return ask, Outcome.REWRITTEN, answered.call_id, ""


@transaction.atomic
def _record(job: PlantedWritingJob, outcomes: list[tuple[PlantedAsk, str, int | None, str]]) -> None:
    """Store what the job did with these planted outputs (those still there) and count them as done."""
    if not outcomes:
        return
    present = set(PlantedOutput.objects.filter(pk__in=[ask.planted_id for ask, *_ in outcomes])
                  .values_list("pk", flat=True))
    PlantedWriting.objects.bulk_create([
        PlantedWriting(job=job, planted_id=ask.planted_id, outcome=outcome, model=job.model, call_id=call_id,
                       before=ask.before, note=note)
        for ask, outcome, call_id, note in outcomes if ask.planted_id in present
    ], ignore_conflicts=True)
    job_beat(PlantedWritingJob, job.pk, done=F("done") + len(outcomes))
