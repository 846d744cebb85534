"""Execute a claimed run over its servers: each works the models placed on it, model-major, all at once.

This module only coordinates: `timings` and `placement` decide which server runs which model, `steps`
reads what each model has left to ask, `lanes` asks it (no database there), `writes` stores what comes
back. The supervisor's steps are fed item by item, as soon as every annotator of an item has answered.
Backend failures become the run's status here: a server that stops answering hands its models to
another server that has them, or pauses the run with a message naming it; a missing model fails it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from functools import partial
from typing import Any

from django.conf import settings

from corpus.models import Annotation, AnnotationKind
from evaluation.engine.parsing import parse_supervisor_answer
from evaluation.llm.base import LLMBackend
from evaluation.llm.budget import ModelBudget
from evaluation.llm.errors import BackendError, ModelMissing, ServerNotAllowed
from evaluation.llm.servers import Server, ServerKind, models_on, parse_servers, servers_kind
from evaluation.llm.simulated import any_simulated
from evaluation.models import EvaluatorRun, LLMRole
from evaluation.runs.backends import connect, server_parallel
from evaluation.runs.failures import LLM_ERRORS, llm_stopped
from evaluation.runs.lanes import Feed, Lane, LaneScheduler
from evaluation.runs.modes import DEFAULT_MODE, ModelPass, mode_spec
from evaluation.runs.placement import ModelWork, Placement, PlacementError, place, placement_record
from evaluation.runs.scheduler import Outcome
from evaluation.runs.steps import ItemAnswers, StepPlanner, run_items
from evaluation.runs.timings import calls_left, model_works
from evaluation.runs.writes import RunWriter
from jobs.lifecycle import JobStopped
from jobs.models import JobStatus

log = logging.getLogger(__name__)

KEPT = EvaluatorRun.kept_message


def run_servers(run: EvaluatorRun) -> list[Server]:
    """The servers a run was created with (runs from before several servers name one URL)."""
    return parse_servers(run.servers or run.ollama_url or settings.OLLAMA_URL)


class RunExecutor:
    """Runs one claimed EvaluatorRun to the end, or until it is cancelled, paused or fails (JobStopped)."""

    def __init__(self, run: EvaluatorRun) -> None:
        self.run = run
        config = run.config
        self.spec = mode_spec(config.get("mode", DEFAULT_MODE))
        self.passes = self.spec.passes(config["annotators"], config.get("supervisor", ""))
        self.servers = run_servers(run)
        self.refusal = ""  # why a server of the run cannot be opened (no longer allowed)
        self.backends: dict[str, LLMBackend] = {}
        for s in self.servers:
            try:
                self.backends[s.name] = connect(s, keep_alive=config.get("keep_alive"))
            except ServerNotAllowed as exc:
                self.refusal = str(exc)
        self.items = list(run_items(run).order_by("position").values_list("pk", "inputs", "output"))
        self.position = {pk: i for i, (pk, _, _) in enumerate(self.items)}
        self.digests: dict[str, str] = dict(config.get("digests", {}))
        self.budgets: dict[str, ModelBudget] = {}  # model -> its context budget, set once the models are placed
        self.planner = StepPlanner(run, self.items, self.digests, self.budgets)
        self.writer = RunWriter(run, {pk: output for pk, _, output in self.items}, self.digests)
        self.available: dict[str, dict[str, str]] = {}  # server -> model -> digest, of the servers that answered
        self.expected: dict[str, float] = {}
        # server -> (requests in flight on it, where that number comes from): at most what it serves at once
        self.parallel: dict[str, tuple[int, str]] = {}
        self.record: dict[str, Any] = {}
        # The pipelined supervisor: items still to merge, and which annotators answered each item so far.
        self.supervisor: Feed | None = None
        self.waiting: set[int] = set()
        self.answered: dict[int, set[str]] = {}
        self.merging: dict[int, ItemAnswers] = {}

    def execute(self) -> None:
        try:
            if self.refusal:
                raise JobStopped(JobStatus.FAILED, self.refusal)
            lanes = self._plan()
            LaneScheduler(
                lanes, parallel=self.run.parallel, on_answers=self._store, on_batch=self._record,
                on_server_lost=self._server_lost,
            ).run()
        except LLM_ERRORS as exc:  # a lost server comes to `_server_lost` first; the policy decides the rest
            raise llm_stopped(exc, kept=KEPT) from exc
        finally:
            for backend in self.backends.values():
                backend.close()

    # --- before the first call: ask every server, place the models, build the lanes --------------
    def _plan(self) -> list[Lane]:
        calls = calls_left(self.run, self.passes, len(self.items))
        works = model_works(calls, answer_format=self.run.config.get("answer_format", "text"))
        down = self._ask_servers([w.model for w in works if w.calls > 0])
        self.parallel = {name: server_parallel(server, self.backends[name], self.run.parallel)
                         for server in self.servers if (name := server.name) in self.available}
        placement = self._place(works, down)
        self.expected = dict(placement.seconds)
        for model, server in placement.models.items():
            self._use_digest(model, server)
            self.budgets[model] = self._budget(model, self.backends[server])
        kinds = {s.name: s.kind.value for s in self.servers}
        self.record = placement_record(placement, kinds, down=down, parallel=self.parallel)
        self.writer.placed(self.record)
        lanes = {s.name: self._lane(s.name) for s in self.servers if s.name not in down}
        for model_pass in self.passes:  # first: a model that also annotates is then loaded once, at this size
            if model_pass.role == LLMRole.SUPERVISOR and calls[model_pass]:
                self.planner.presettle_supervisor(model_pass.model)
        for model_pass in self.passes:
            server = placement.models.get(model_pass.model)
            if server is None or not calls[model_pass]:
                continue
            lanes[server].feeds.append(self._feed(model_pass))
        if self.supervisor is not None:
            self._supervise({pk for pk, _, _ in self.items})
        return list(lanes.values())

    def _budget(self, model: str, backend: LLMBackend) -> ModelBudget:
        """The model's context budget: its length from the server, num_ctx pinned or as a resumed run chose it."""
        config = self.run.config
        lookup = getattr(backend, "context_length", None)
        return ModelBudget(
            limit=lookup(model) if lookup is not None else None,
            answer_tokens=int(config.get("answer_tokens") or settings.LLM_ANSWER_TOKENS),
            pinned=config["options"].get("num_ctx") or None,
            num_ctx=config.get("num_ctx", {}).get(model),
            think=config.get("think", {}).get(model),
        )

    def _options(self, model: str) -> dict[str, Any]:
        budget = self.budgets.get(model)
        options = dict(self.run.config["options"])
        return budget.options(options) if budget is not None else options

    def _lane(self, server: str) -> Lane:
        backend = self.backends[server]
        load = getattr(backend, "load", None)  # Ollama loads on request; OpenAI-compatible servers keep theirs
        # The run's exact options for the model, or its first real request reloads it.
        warm = (lambda model: load(model, options=self._options(model))) if load is not None else None
        return Lane(server, backend, warm=warm, parallel=self._at_once().get(server))

    def _ask_servers(self, models: list[str]) -> dict[str, str]:
        """Fill `available` from every server; return the unreachable ones with why."""
        down: dict[str, str] = {}
        for name, backend in self.backends.items():
            try:
                self.available[name] = models_on(backend, models) if models else {}
            except BackendError as exc:
                down[name] = str(exc)
        if len(down) == len(self.backends):
            if len(down) == 1:
                raise JobStopped(JobStatus.PAUSED, f"{next(iter(down.values()))} {KEPT}")
            raise JobStopped(JobStatus.PAUSED, f"No server of this run answers: {'; '.join(down.values())} {KEPT}")
        self._mark_simulated([s for s in self.servers if s.name not in down])
        return down

    def _mark_simulated(self, servers: list[Server]) -> None:
        """A run stays simulated once a simulator answered any of it (a resume on a real server keeps the mark)."""
        if not self.run.simulated and any_simulated(servers):
            EvaluatorRun.objects.filter(pk=self.run.pk).update(simulated=True)
            self.run.simulated = True

    def _place(self, works: list[ModelWork], down: Mapping[str, str]) -> Placement:
        try:
            return place(works, self.available, parallel=self._at_once(), loaded=self._loaded())
        except PlacementError as exc:
            if not down:
                missing = ModelMissing(exc.models, url=", ".join(self.available), kind=servers_kind(self.servers))
                raise JobStopped(JobStatus.FAILED, str(missing)) from exc
            raise JobStopped(JobStatus.PAUSED, (
                f"No reachable server has {', '.join(exc.models)}; unreachable: "
                + "; ".join(f"{server} ({why})" for server, why in down.items())
                + f". Start the server(s) again, or pull the model(s) on a running server of this run. {KEPT}"
            )) from exc

    def _loaded(self) -> set[str]:
        return {server.name for server in self.servers if server.kind is ServerKind.OPENAI}

    def _at_once(self) -> dict[str, int]:
        return {server: n for server, (n, _) in self.parallel.items()}

    def _use_digest(self, model: str, server: str) -> None:
        digest = self.available[server][model]
        if self.digests.get(model) and self.digests[model] != digest:
            log.warning("model %s answers from another build than when the run was created", model)
        self.digests[model] = digest

    def _feed(self, model_pass: ModelPass) -> Feed:
        if model_pass.role == LLMRole.SUPERVISOR:
            self.supervisor = Feed(model_pass.model, parse_supervisor_answer, model_pass, closed=False,
                                   grouped=settings.LLM_CACHE_ORDER)
            ensembled = set(Annotation.objects.filter(source=self.run, kind=AnnotationKind.ENSEMBLE)
                            .values_list("item_id", flat=True))
            self.waiting = {pk for pk, _, _ in self.items if pk not in ensembled}
            for item_id, model in Annotation.objects.filter(
                source=self.run, kind=AnnotationKind.ANNOTATOR
            ).values_list("item_id", "model"):
                self.answered.setdefault(item_id, set()).add(model)
            return self.supervisor
        feed = Feed(model_pass.model, self.spec.parse, model_pass, grouped=settings.LLM_CACHE_ORDER)
        feed.add(self.planner.annotator_steps(model_pass.model, self.spec))
        return feed

    # --- while it runs ----------------------------------------------------------------------------
    def _supervise(self, item_ids: set[int]) -> None:
        """Give the supervisor the items whose annotators have all answered; close its feed after the last."""
        feed = self.supervisor
        annotators = set(self.run.config["annotators"])
        ready = {pk for pk in item_ids & self.waiting if annotators <= self.answered.get(pk, set())}
        if feed is None or not ready:
            return
        plan = self.planner.supervisor_plan(feed.model, ready)
        for answers in plan.unmerged:
            self.writer.unmerged_item(feed.tag, answers)
        self.merging.update(plan.items)
        feed.add(sorted(plan.steps, key=lambda step: self.position[step.item_id]))
        self.waiting -= ready
        feed.closed = not self.waiting

    def _store(self, answers: list[tuple[Feed, Outcome]]) -> None:
        self.writer.store_calls((feed.model, outcome) for feed, outcome in answers)

    def _record(self, feed: Feed, outcomes: list[Outcome], interrupted: bool) -> None:
        model_pass: ModelPass = feed.tag
        if model_pass.role == LLMRole.SUPERVISOR:
            annotate = partial(self.writer.supervised_answer, model_pass.model, self.merging)
        else:
            annotate = partial(self.writer.annotator_answer, model_pass.model, self.spec.score_scale)
        self.writer.record_batch(model_pass, outcomes, annotate)
        if interrupted:
            return
        if self.writer.cancel_requested():
            raise JobStopped(JobStatus.CANCELLED, EvaluatorRun.cancelled_message)
        if model_pass.role == LLMRole.ANNOTATOR and self.supervisor is not None:
            for outcome in outcomes:
                self.answered.setdefault(outcome.step.item_id, set()).add(model_pass.model)
            self._supervise({outcome.step.item_id for outcome in outcomes})

    def _server_lost(self, server: str, error: BackendError, feeds: list[Feed]) -> dict[str, str]:
        """Hand a lost server's unfinished models to live servers that have them, or pause the run."""
        self.available.pop(server, None)
        self.expected.pop(server, None)
        models = [feed.model for feed in feeds]
        orphans = [m for m in models if not any(m in have for have in self.available.values())]
        if orphans and len(self.servers) == 1:
            message = f"{error} Completed calls are kept; resume the run when the server is back."
            raise JobStopped(JobStatus.PAUSED, message)
        if orphans:
            others = ", ".join(self.available) or "none left"
            raise JobStopped(JobStatus.PAUSED, (
                f"The server {server} stopped answering ({error}). No other server of this run has "
                f"{', '.join(orphans)}: start {server} again, or pull the model(s) on one of the run's other "
                f"servers ({others}), then resume the run. Completed calls are kept."
            ))
        targets: dict[str, str] = {}
        for feed in feeds:
            work = ModelWork(feed.model, len(feed.steps) or 1)
            moved = place([work], self.available, parallel=self._at_once(), busy=self.expected, loaded=self._loaded())
            target = moved.models[feed.model]
            self.expected = dict(moved.seconds)
            before = self.digests.get(feed.model)
            self._use_digest(feed.model, target)
            if self.digests[feed.model] != before and feed.steps:
                steps = self.planner.rekeyed(feed.model, list(feed.steps))
                feed.steps.clear()
                feed.add(steps)
            targets[feed.model] = target
        self._note_handoff(server, error, targets)
        return targets

    def _note_handoff(self, server: str, error: BackendError, targets: dict[str, str]) -> None:
        log.warning("server %s lost (%s); its models go to %s", server, error, targets)
        record = self.record
        for entry in record["servers"]:
            if entry["server"] == server:
                entry["state"] = f"lost mid-job: {error}"
            entry["models"] = [m for m in entry["models"] if m not in targets] + [
                m for m, to in targets.items() if to == entry["server"]
            ]
        record["models"] = {**record["models"], **targets}
        moves = [{"model": model, "from": server, "to": to} for model, to in targets.items()]
        record["handoffs"] = [*record["handoffs"], *moves]
        self.writer.placed(record)

