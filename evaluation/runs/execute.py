"""Execute a claimed run: its mode's phases in order, each a model-major pass with P requests in flight.

This module only coordinates: `steps` reads what each phase has left to ask, `scheduler` asks it (no
database there), `writes` stores what comes back. Backend failures become the run's status here: an
unreachable server pauses it (resume later; nothing finished is lost), a missing model fails it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial

from django.conf import settings

from evaluation.engine.parsing import ParsedAnswer, parse_supervisor_answer
from evaluation.llm.errors import BackendError, BackendUnavailable, ModelMissing
from evaluation.llm.ollama_backend import OllamaBackend
from evaluation.models import EvaluatorRun, RunCall, RunStatus
from evaluation.runs.modes import DEFAULT_MODE, Phase, mode_spec
from evaluation.runs.scheduler import Outcome, Step, run_phase
from evaluation.runs.steps import StepPlanner, run_items
from evaluation.runs.writes import RunWriter, Written, run_claim

log = logging.getLogger(__name__)

CANCELLED = "Cancelled by an admin; completed calls and annotations are kept."


class RunStopped(Exception):
    """The run must end before its last phase (cancelled, paused or failed); `status` says which."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class RunExecutor:
    """Runs one claimed EvaluatorRun to the end, or until it is cancelled, paused or fails."""

    def __init__(self, run: EvaluatorRun, backend: OllamaBackend | None = None) -> None:
        self.run = run
        config = run.config
        self.spec = mode_spec(config.get("mode", DEFAULT_MODE))
        self.phases = self.spec.phases(config["annotators"], config.get("supervisor", ""))
        self.backend = backend or OllamaBackend(
            run.ollama_url, timeout=settings.OLLAMA_TIMEOUT, keep_alive=config.get("keep_alive", "10m")
        )
        items = list(run_items(run).order_by("position").values_list("pk", "inputs", "output"))
        self.digests: dict[str, str] = dict(config.get("digests", {}))
        self.planner = StepPlanner(run, items, self.digests)
        self.writer = RunWriter(run, {pk: output for pk, _, output in items}, self.digests)

    def execute(self) -> str:
        try:
            self._refresh_digests()
            for phase in self.phases:
                self._phase(phase)
        except RunStopped as stop:
            self.writer.finish(stop.status, stop.message)
            return stop.status
        finally:
            self.backend.close()
        self.writer.finish(RunStatus.DONE, "")
        return RunStatus.DONE

    def _refresh_digests(self) -> None:
        """Ask the server for the models' digests now: the cache keys must name the builds that answer."""
        models = [phase.model for phase in self.phases]
        try:
            digests = self.backend.check(models)
        except ModelMissing as exc:
            raise RunStopped(RunStatus.FAILED, str(exc)) from exc
        except BackendError as exc:
            raise RunStopped(RunStatus.PAUSED, f"{exc} Completed calls are kept; resume the run afterwards.") from exc
        changed = [m for m in models if self.digests.get(m) and self.digests[m] != digests[m]]
        if changed:
            log.warning("model digests changed since the run was created: %s", ", ".join(changed))
        self.digests.update(digests)

    def _phase(self, phase: Phase) -> None:
        steps: list[Step]
        parse: Callable[[str], ParsedAnswer]
        annotate: Callable[[Outcome], list[Written]]
        if phase.role == RunCall.Role.SUPERVISOR:
            plan = self.planner.supervisor_plan(phase.model)
            for answers in plan.unmerged:
                self.writer.unmerged_item(phase, answers)
            steps, parse = plan.steps, parse_supervisor_answer
            annotate = partial(self.writer.supervised_answer, phase.model, plan.items)
        else:
            steps, parse = self.planner.annotator_steps(phase.model, self.spec), self.spec.parse
            annotate = partial(self.writer.annotator_answer, phase.model, self.spec.score_scale)

        def on_batch(outcomes: list[Outcome], interrupted: bool) -> None:
            self.writer.record_batch(phase, outcomes, annotate)
            if not interrupted and self.writer.cancel_requested():
                raise RunStopped(RunStatus.CANCELLED, CANCELLED)

        try:
            run_phase(
                self.backend, phase.model, steps, parse=parse, parallel=self.run.parallel,
                on_answer=partial(self.writer.store_calls, phase.model), on_batch=on_batch,
            )
        except BackendUnavailable as exc:
            message = f"{exc} Completed calls are kept; resume the run when the server is back."
            raise RunStopped(RunStatus.PAUSED, message) from exc
        except BackendError as exc:  # a missing model or a refused request: waiting will not help
            raise RunStopped(RunStatus.FAILED, str(exc)) from exc


def run_execute(run_id: int, *, token: str = "sync", backend: OllamaBackend | None = None) -> str | None:
    """Claim and execute a run; return its final status, or None when another worker owns it."""
    run = run_claim(run_id, token)
    if run is None:
        return None
    return RunExecutor(run, backend).execute()
