"""The ensemble job on a real Celery worker (Redis) against the simulated Ollama running as a process."""

from __future__ import annotations

import hashlib
import json
from collections import Counter

import pytest

from corpus.models import Annotation, Dataset
from evaluation.models import EvaluatorRun, LLMCall
from evaluation.runs.launch import run_create
from jobs.models import JobStatus
from tasks.jobs import TASKS
from tests import factories
from tests.integration.conftest import wait_for
from tests.ollama_sim.config import FaultRule, SimConfig, normalize_name
from tests.ollama_sim.process import SimProcess

pytestmark = pytest.mark.integration

ANNOTATORS = ["ann-a:1b", "ann-b:1b", "ann-c:1b"]
SUPERVISOR = "sup:1b"
N_ITEMS = 10


def _dataset(name: str = "worker-set") -> Dataset:
    return factories.dataset(name, input_headers=["Data"], output_header="Text", items=[
        {"external_id": f"w{i}", "inputs": {"Data": f"team {i} | points {90 + i}"},
         "output": f"Team {i} scored {95 + i} points in a close game, and their coach praised the defence."}
        for i in range(N_ITEMS)
    ])


def _call_id(model: str, prompt_sha256: str, options: dict) -> tuple[str, str, str]:
    return normalize_name(model), prompt_sha256, json.dumps(options, sort_keys=True)


def _repeated(stats) -> Counter:
    """Calls the simulator answered more than once, with the number of extra answers."""
    seen = Counter(_call_id(r.model, r.prompt_sha256, r.options) for r in stats.log if r.status == "ok")
    return Counter({call: n - 1 for call, n in seen.items() if n > 1})


def _ok_repeats(stats) -> int:
    return sum(_repeated(stats).values())


def _stored_calls() -> set[tuple[str, str, str]]:
    return {
        _call_id(model, hashlib.sha256(prompt.encode()).hexdigest(), options)
        for model, prompt, options in LLMCall.objects.values_list("model", "prompt", "options")
    }


def test_worker_runs_full_ensemble_job_through_server_faults(celery_worker_factory, allow_ollama):
    faults = [
        FaultRule(kind="error", nth=(2, 9), status=500),  # HTTP 500 twice
        FaultRule(kind="drop", nth=(15,)),  # a dropped connection
        FaultRule(kind="error", model=SUPERVISOR, first=1, status=503),
    ]
    config = SimConfig(models=[*ANNOTATORS, SUPERVISOR], parallel=2, call_time=0.02, swap_cost=0.05, faults=faults)
    with SimProcess(config) as sim:
        allow_ollama(sim.url)
        worker = celery_worker_factory().start()
        run = run_create(dataset=_dataset(), aspect_name="accuracy", annotators=ANNOTATORS,
                         supervisor=SUPERVISOR, ollama_url=sim.url, parallel=2)
        TASKS[EvaluatorRun].apply_async((run.pk,), queue=worker.queue)
        assert wait_for(lambda: EvaluatorRun.objects.get(pk=run.pk).is_finished(), timeout=60), (
            worker.log.read_text()[-3000:]
        )
        run.refresh_from_db()
        assert run.status == JobStatus.DONE, run.message
        stats = sim.stats()
        assert sum(stats.faults_injected.values()) == 4
        assert stats.requests == N_ITEMS * 4 + 4  # every fault cost exactly one retry
        assert LLMCall.objects.count() == N_ITEMS * 4
        assert stats.load_order == [*ANNOTATORS, SUPERVISOR]
        assert Annotation.objects.filter(source=run, kind="ensemble").count() == N_ITEMS


def test_worker_killed_mid_job_resumes_without_repeating_calls(celery_worker_factory, allow_ollama):
    config = SimConfig(models=[*ANNOTATORS, SUPERVISOR], parallel=2, call_time=0.25, swap_cost=0.1)
    with SimProcess(config) as sim:
        allow_ollama(sim.url)
        first = celery_worker_factory({"RUN_STALE_SECONDS": "3"}).start()
        run = run_create(dataset=_dataset(), aspect_name="accuracy", annotators=ANNOTATORS,
                         supervisor=SUPERVISOR, ollama_url=sim.url, parallel=2)
        TASKS[EvaluatorRun].apply_async((run.pk,), queue=first.queue)
        # Let it get well into the second model, then pull the plug.
        assert wait_for(lambda: LLMCall.objects.count() >= N_ITEMS + 4, timeout=60), first.log.read_text()[-3000:]
        first.kill()
        stored_at_kill = LLMCall.objects.count()
        stored_calls = _stored_calls()
        assert EvaluatorRun.objects.get(pk=run.pk).status == JobStatus.RUNNING
        assert stored_at_kill < N_ITEMS * 4

        second = celery_worker_factory({"RUN_STALE_SECONDS": "3"}).start()
        assert wait_for(lambda: EvaluatorRun.objects.get(pk=run.pk).is_finished(), timeout=120), (
            second.log.read_text()[-3000:]
        )
        run.refresh_from_db()
        assert run.status == JobStatus.DONE, run.message
        stats = sim.stats()
        # No stored call is asked again. The only answers a kill -9 can lose are those that reached the
        # dying worker but were not stored yet: at most the requests in flight (parallel=2).
        repeated = _repeated(stats)
        assert not set(repeated) & stored_calls
        assert sum(repeated.values()) <= 2
        assert LLMCall.objects.count() == N_ITEMS * 4
        assert sum(1 for r in stats.log if r.status == "ok") == N_ITEMS * 4 + sum(repeated.values())
        # The identities compare like with like: every stored call is one the simulator answered.
        assert _stored_calls() == {_call_id(r.model, r.prompt_sha256, r.options) for r in stats.log if r.status == "ok"}
        assert Annotation.objects.filter(source=run, kind="ensemble").count() == N_ITEMS
        assert Annotation.objects.filter(source=run, kind="annotator").count() == N_ITEMS * 3


def test_worker_job_refused_up_front_when_model_missing(celery_worker_factory, allow_ollama):
    with SimProcess(SimConfig(models=ANNOTATORS)) as sim:
        allow_ollama(sim.url)
        from evaluation.runs.launch import LaunchError

        with pytest.raises(LaunchError, match="ollama pull sup:1b"):
            run_create(dataset=_dataset(), aspect_name="accuracy", annotators=ANNOTATORS, supervisor=SUPERVISOR,
                       ollama_url=sim.url)
        assert not EvaluatorRun.objects.exists()
        assert sim.stats().requests == 0
