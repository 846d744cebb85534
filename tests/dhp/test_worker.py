"""A DHP job on a real Celery worker (Redis) against the simulated Ollama; a rerun makes zero LLM calls."""

from __future__ import annotations

import pytest

from dhp.engine.kinds import parse_kinds
from dhp.models import DhpRun
from dhp.services.runs import dhp_create
from evaluation.models import LLMCall
from jobs.models import JobStatus
from tasks.jobs import TASKS
from tests.dhp.conftest import MODEL, N_ITEMS, make_dataset
from tests.integration.conftest import celery_worker_factory, wait_for  # noqa: F401 - the worker fixture
from tests.ollama_sim import OllamaSim

pytestmark = pytest.mark.integration


def _finished(run_id: int) -> bool:
    return DhpRun.objects.get(pk=run_id).is_finished()


def test_worker_runs_dhp_job_and_rerun_makes_no_call(celery_worker_factory, sim_config):  # noqa: F811
    dataset = make_dataset()
    with OllamaSim(sim_config) as sim:
        worker = celery_worker_factory().start()
        runs = []
        for _ in range(2):
            run = dhp_create(dataset=dataset, evaluator=MODEL, metrics=["coherence", "fluency"],
                             kinds=parse_kinds("char-delete:minor,word-delete:major,llm-grammar:major"), samples=3,
                             seed=1, ollama_url=sim.url, parallel=2)
            TASKS[DhpRun].apply_async((run.pk,), queue=worker.queue)
            assert wait_for(lambda run_id=run.pk: _finished(run_id), timeout=120), worker.log.read_text()[-3000:]
            runs.append(DhpRun.objects.get(pk=run.pk))
            if len(runs) == 1:
                after_first = sim.stats.requests
        first, second = runs
        assert first.status == JobStatus.DONE, first.message
        n_scores = N_ITEMS * 4 * 2 * 3
        assert first.llm_calls == n_scores + N_ITEMS and first.done == n_scores
        assert after_first == n_scores + N_ITEMS  # one LLM perturbation per item
        assert second.status == JobStatus.DONE and second.llm_calls == 0 and second.cache_hits == n_scores
        assert sim.stats.requests == after_first
        assert LLMCall.objects.count() == after_first
        assert second.results["summary"] == first.results["summary"]
        assert first.results["summary"]["D_min"] > 1
