"""Execute a claimed DHP run: perturb (if needed), score every text per metric and sample, then test and
combine. Resumable: scores are stored per batch, calls the moment they arrive; a run claimed again (or a
new run with the same settings) asks nothing whose answer is stored."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import asdict

from django.conf import settings
from django.db import transaction
from django.db.models import Avg, Count, F

from corpus.models import Annotation, AnnotationKind, Item
from dhp.engine.errors import DhpError
from dhp.engine.kinds import Kind, get_kind
from dhp.engine.scoring import SCORE_MAX, SCORE_MIN, direct_prompt, parse_direct_score
from dhp.engine.stats import KindInput, analyse_kind, summarize
from dhp.models import DhpRun, DhpScore
from dhp.services.perturbing import Perturber, originals, perturbed_items
from dhp.services.runs import DIRECT, url_simulated
from errors import UserError
from evaluation.llm.budget import ANSWER_CUT, PROMPT_TOO_LONG, TRUNCATION_UNCHECKED, unchecked_problem
from evaluation.models import Aspect, EvaluatorRun, LLMCall, RunCall
from evaluation.runs.asking import Answered, Ask, ask_many
from evaluation.runs.backends import connect
from evaluation.runs.failures import LLM_ERRORS, llm_stopped
from evaluation.runs.launch import run_create
from evaluation.runs.modes import RunMode
from evaluation.selectors import run_problems
from jobs.kinds import job_execute_nested
from jobs.lifecycle import JobStopped, job_beat, job_checkpoint, job_requeue
from jobs.models import JobStatus

log = logging.getLogger(__name__)


class DhpExecutor:
    """Runs one claimed DhpRun to the end, or until it is cancelled, paused or fails (JobStopped)."""

    def __init__(self, run: DhpRun) -> None:
        self.run = run
        self.kinds = [get_kind(name) for name in run.kinds]
        self.mode = run.config["mode"]
        self.model = run.config.get("model", "")

    def _count_problems(self, problems: list[str], unchecked: Sequence[str] = ()) -> None:
        """Add (item, model) pairs that hit the budget to the run's `config["problems"]` (what `dhp` prints), and
        the answers of servers whose counts could not tell a cut under `truncation_unchecked: <server>`."""
        if not problems and not unchecked:
            return
        config = DhpRun.objects.values_list("config", flat=True).get(pk=self.run.pk)
        counts = config.setdefault("problems", {PROMPT_TOO_LONG: 0, ANSWER_CUT: 0})
        for problem in problems:
            for name in (PROMPT_TOO_LONG, ANSWER_CUT):
                if problem.startswith(f"{name}:"):
                    counts[name] = counts.get(name, 0) + 1
        for server in unchecked:
            counts[unchecked_problem(server)] = counts.get(unchecked_problem(server), 0) + 1
        self._update(config=config)

    def _update(self, **fields) -> None:
        job_beat(DhpRun, self.run.pk, **fields)

    def _mark_simulated(self) -> None:
        """Scores or perturbations from the simulator make the whole run simulated, for good."""
        if not self.run.simulated and url_simulated(self.run.ollama_url or settings.OLLAMA_URL):
            self._update(simulated=True)
            self.run.simulated = True

    def _check_cancel(self) -> None:
        job_checkpoint(DhpRun, self.run.pk)

    def execute(self) -> None:
        try:
            pairs = self._perturb()
            texts = self._texts(pairs)
            self._score(texts)
            self._analyse(pairs)
        except LLM_ERRORS as exc:
            raise llm_stopped(exc, kept=DhpRun.kept_message) from exc
        except UserError as exc:
            raise JobStopped(JobStatus.FAILED, str(exc)) from exc

    # --- perturbation ------------------------------------------------------------------------
    def _perturb(self) -> dict[str, list[Item]]:
        """Make missing perturbations; return kind -> perturbed items (skipped kinds are noted, not errors)."""
        self._update(stage="perturbing")
        perturber = Perturber(self.run.dataset, seed=self.run.seed, sizes=self.run.sizes)
        notes: list[str] = list(self.run.config.get("notes", []))  # what creation decided, then this phase's
        llm_kinds = [k for k in self.kinds if k.is_llm]
        for kind in self.kinds:
            if not kind.is_llm:
                perturber.rule(kind)
        if llm_kinds:
            self._mark_simulated()
            model = self.run.config["perturb_model"]
            with connect(self.run.ollama_url) as backend:
                digest = backend.check([model])[model]
                for kind in llm_kinds:
                    report = perturber.llm(kind, backend, model, digest, self.run.parallel)
                    self._update(llm_calls=F("llm_calls") + report.calls)
                    self._check_cancel()
        pairs: dict[str, list[Item]] = {}
        for kind in self.kinds:
            items = perturbed_items(self.run.dataset, kind.name, self.run.seed, self.run.sizes.get(kind.name))
            if items:
                pairs[kind.name] = items
            else:
                notes.append(f"{kind.name} skipped: it fits none of the dataset's texts")
        self._update(notes=notes)
        if not pairs:
            raise DhpError("no perturbation fits this dataset's texts; " + "; ".join(notes))
        return pairs

    def _texts(self, pairs: dict[str, list[Item]]) -> list[Item]:
        """Every text to score: the originals that have a perturbation, then the perturbed ones."""
        perturbed = [item for items in pairs.values() for item in items]
        wanted = {item.derived_from_id for item in perturbed}
        return [item for item in originals(self.run.dataset) if item.pk in wanted] + perturbed

    # --- scoring ----------------------------------------------------------------------------
    def _score(self, texts: list[Item]) -> None:
        total = len(texts) * len(self.run.metrics) * self.run.samples
        self._update(stage="scoring", total=total)
        self._mark_simulated()
        if self.mode == DIRECT:
            self._score_direct(texts)
        else:
            self._score_with_runs(texts)

    def _score_direct(self, texts: list[Item]) -> None:
        run = self.run
        done = set(DhpScore.objects.filter(run=run).values_list("item_id", "metric", "sample"))
        aspects = {a.name: a for a in Aspect.objects.filter(task=run.dataset.task, name__in=run.metrics)}
        task = run.dataset.task
        base = run.config["options"]
        asks = []
        for metric in run.metrics:
            aspect = aspects[metric]
            for item in texts:
                prompt = direct_prompt(
                    task=task.name, metric=metric, definition=aspect.definition, noun=task.output_noun or "text",
                    inputs=item.inputs, output_header=run.dataset.output_header, text=item.output,
                    output_only=aspect.output_only,
                )
                # An output's original and perturbed copies share their prompt up to the text, its samples all
                # of it: one prefix group per (original, metric), sent back to back on one slot.
                group = (item.derived_from_id or item.pk, metric)
                for sample in range(run.samples):
                    if (item.pk, metric, sample) not in done:
                        options = {**base, "seed": int(base["seed"]) + sample}
                        asks.append(Ask((item.pk, metric, sample), prompt, options, group=group))
        self._update(done=len(done))
        with connect(run.ollama_url) as backend:
            digest = backend.check([self.model])[self.model]

            def on_batch(answered: list[Answered], interrupted: bool) -> None:
                self._count_problems([p for a in answered for p in a.outcome.problems],
                                     [a.outcome.unchecked for a in answered if a.outcome.unchecked])
                with transaction.atomic():
                    DhpScore.objects.bulk_create([
                        DhpScore(run=run, item_id=a.ask.ref[0], metric=a.ask.ref[1], sample=a.ask.ref[2],
                                 score=a.outcome.parsed.score, call_id=a.call_id, from_cache=a.fresh == 0)
                        for a in answered
                    ], ignore_conflicts=True)
                    fresh = sum(a.fresh for a in answered)
                    self._update(done=F("done") + len(answered), llm_calls=F("llm_calls") + fresh,
                                 cache_hits=F("cache_hits") + sum(1 for a in answered if a.fresh == 0))
                if not interrupted:
                    self._check_cancel()

            ask_many(backend, self.model, digest, asks, parse=parse_direct_score, parallel=run.parallel,
                     on_batch=on_batch)

    def _score_with_runs(self, texts: list[Item]) -> None:
        """The ensemble or the distilled model: one evaluation run per metric over exactly these texts."""
        run = self.run
        ids = [item.pk for item in texts]
        mode = RunMode(self.mode)
        kind = AnnotationKind.ENSEMBLE if mode is RunMode.ENSEMBLE else AnnotationKind.ANNOTATOR
        existing = {r.aspect.name: r for r in run.evaluator_runs.select_related("aspect")}
        for metric in run.metrics:
            eval_run = existing.get(metric)
            if eval_run is None:
                eval_run = run_create(
                    dataset=run.dataset, aspect_name=metric, mode=mode,
                    annotators=[self.model] if self.model else None, ollama_url=run.ollama_url,
                    parallel=run.parallel, item_ids=ids, preset=run.config.get("preset"), part_of=f"DHP run {run.pk}",
                )
                run.evaluator_runs.add(eval_run)
            elif eval_run.status == JobStatus.FAILED:
                job_requeue(eval_run, enqueue=False)  # resuming the DHP run resumes its evaluation runs
            status = job_execute_nested(EvaluatorRun, eval_run.pk, token=f"dhp-{run.pk}")
            eval_run.refresh_from_db()
            if status is None and not eval_run.is_finished():
                raise JobStopped(JobStatus.PAUSED, f"evaluator run {eval_run.pk} is held by another worker")
            if eval_run.status == JobStatus.PAUSED:
                raise JobStopped(JobStatus.PAUSED, eval_run.message)
            if eval_run.status != JobStatus.DONE:
                raise JobStopped(JobStatus.FAILED, f"evaluator run {eval_run.pk}: {eval_run.message}")
            self._count_problems([f"{name}:" for name, n in run_problems(eval_run.pk).items() for _ in range(n)],
                                 [server for server, n in (eval_run.config or {}).get(TRUNCATION_UNCHECKED, {}).items()
                                  for _ in range(n)])
            scores = Annotation.objects.filter(source=eval_run, kind=kind).values_list("item_id", "score")
            DhpScore.objects.bulk_create(
                [DhpScore(run=run, item_id=item_id, metric=metric, sample=0, score=score) for item_id, score in scores],
                ignore_conflicts=True,
            )
            calls = RunCall.objects.filter(run=eval_run)
            self._update(
                done=DhpScore.objects.filter(run=run).count(),
                llm_calls=F("llm_calls") + calls.filter(from_cache=False).count(),
                cache_hits=F("cache_hits") + calls.filter(from_cache=True).count(),
            )
            self._check_cancel()

    # --- statistics ---------------------------------------------------------------------------
    def _analyse(self, pairs: dict[str, list[Item]]) -> None:
        self._update(stage="statistics")
        run = self.run
        means = {
            (row["item_id"], row["metric"]): row["mean"]
            for row in DhpScore.objects.filter(run=run, score__isnull=False)
            .values("item_id", "metric").annotate(mean=Avg("score"))
        }
        weights = run.weights.weights if run.weights_id else None
        run.refresh_from_db(fields=["notes"])
        notes = list(run.notes)
        results, scores = [], []
        for kind in self.kinds:
            items = pairs.get(kind.name)
            if not items:
                continue
            original: dict[str, list[float]] = {}
            perturbed: dict[str, list[float]] = {}
            for metric in run.metrics:
                kept = [(means[(i.derived_from_id, metric)], means[(i.pk, metric)]) for i in items
                        if (i.derived_from_id, metric) in means and (i.pk, metric) in means]
                original[metric] = [o for o, _ in kept]
                perturbed[metric] = [p for _, p in kept]
                scores.extend(
                    {"item_id": i.derived_from.external_id, "kind": kind.name, "metric": metric,
                     "original": means.get((i.derived_from_id, metric)), "perturbed": means.get((i.pk, metric))}
                    for i in items
                )
            if any(not values for values in original.values()):
                notes.append(f"{kind.name}: a metric has no scored pair (every answer unparseable); left out")
                continue
            kind_weights = weights.get(kind.base.name) if weights else None
            result = analyse_kind(KindInput(kind.name, kind.level, original, perturbed), kind_weights)
            results.append((kind, result))
        if not results:
            raise DhpError(_no_pairs_message(run))
        summary = summarize([r for _, r in results])
        self._update(notes=notes, results={
            "perturbations": [_kind_record(kind, r) for kind, r in results],
            "summary": asdict(summary),
            "scores": scores,
        })


def _no_pairs_message(run: DhpRun) -> str:
    """Say why nothing could be tested: how many answers per metric had no usable score, and one of them."""
    unusable = DhpScore.objects.filter(run=run, score__isnull=True)
    counts = dict(unusable.values("metric").annotate(n=Count("id")).values_list("metric", "n"))
    total = dict(DhpScore.objects.filter(run=run).values("metric").annotate(n=Count("id")).values_list("metric", "n"))
    parts = [f"{metric}: {counts.get(metric, 0)} of {total.get(metric, 0)} answers without a usable score"
             for metric in run.metrics]
    message = "no perturbation has scored pairs to test (" + "; ".join(parts) + ")"
    example = unusable.exclude(call=None).select_related("call").order_by("pk").first()
    if example is None and run.evaluator_runs.exists():
        # Ensemble/distilled: the evaluation runs' answers whose annotation has no score.
        calls = LLMCall.objects.filter(run_calls__run__in=run.evaluator_runs.all()).order_by("pk")
        answer = calls.exclude(response="").values_list("response", flat=True).first()
    else:
        answer = example.call.response if example is not None else None
    if answer is not None:
        excerpt = " ".join(answer.split())[:300]
        message += f". The scoring prompt asks for a last line 'Score: N' (N from {SCORE_MIN} to {SCORE_MAX}); " \
                   f"one unusable answer was: \u201c{excerpt}\u201d"
    elif not total:
        message += ". No text was scored at all: see the evaluator runs and the server's log"
    return message


def _kind_record(kind: Kind, r) -> dict:
    return {
        "kind": kind.name, "level": kind.level, "method": kind.method, "degree": kind.degree,
        "n_pairs": r.n_pairs, "n_zero": r.n_zero,
        "tests": {m: {"statistic": t.statistic, "p": t.p, "method": t.method, "n_nonzero": t.n_nonzero}
                  for m, t in r.tests.items()},
        "p_hmp": r.p_hmp, "p_hmp_asym": r.p_hmp_asym, "p_hmp_ew": r.p_hmp_ew, "p_hmp_ew_asym": r.p_hmp_ew_asym,
        "D": r.D, "D_ew": r.D_ew,
    }

