"""One ensemble job over three simulated servers (each its own process) on a real Celery worker (Redis)."""

from __future__ import annotations

from collections import Counter

import pytest

from corpus.models import Annotation, Dataset
from evaluation.models import EvaluatorRun, LLMCall
from evaluation.runs.launch import run_create
from jobs.models import JobStatus
from tasks.jobs import TASKS
from tests import factories
from tests.integration.conftest import wait_for
from tests.ollama_sim.config import SimConfig
from tests.ollama_sim.process import SimProcess
from tests.ollama_sim.stats import SimStats

pytestmark = pytest.mark.integration

ANNOTATORS = ["ann-a:1b", "ann-b:1b", "ann-c:1b", "ann-d:1b", "ann-e:1b"]
SUPERVISOR = "sup:1b"
MODELS = [*ANNOTATORS, SUPERVISOR]
N_ITEMS = 8


def _dataset() -> Dataset:
    return factories.dataset("spread-set", input_headers=["Data"], output_header="Text", items=[
        {"external_id": f"s{i}", "inputs": {"Data": f"team {i} | points {80 + i}"},
         "output": f"Team {i} scored {85 + i} points at home, and their coach praised the bench."}
        for i in range(N_ITEMS)
    ])


def _answered(logs: list[SimStats]) -> Counter:
    return Counter(
        (r.model, r.prompt_sha256, repr(sorted(r.options.items()))) for s in logs for r in s.log if r.status == "ok"
    )


def test_worker_runs_one_job_on_three_servers(celery_worker_factory):
    config = SimConfig(models=MODELS, parallel=2, call_time=0.05, swap_cost=0.1)
    with SimProcess(config) as one, SimProcess(config) as two, SimProcess(config) as three:
        sims = [one, two, three]
        worker = celery_worker_factory().start()
        run = run_create(dataset=_dataset(), aspect_name="accuracy", annotators=ANNOTATORS, supervisor=SUPERVISOR,
                         ollama_url=[s.url for s in sims], parallel=2)
        TASKS[EvaluatorRun].apply_async((run.pk,), queue=worker.queue)
        assert wait_for(lambda: EvaluatorRun.objects.get(pk=run.pk).is_finished(), timeout=90), (
            worker.log.read_text()[-3000:]
        )
        run.refresh_from_db()
        assert run.status == JobStatus.DONE, run.message
        logs = [s.stats() for s in sims]
        # six models of equal work: two on each server, each loaded once there
        assert [sorted(log.load_order) for log in logs] == [sorted(e["models"]) for e in run.placement["servers"]]
        assert all(len(log.load_order) == 2 for log in logs)
        assert max(_answered(logs).values()) == 1
        assert sum(_answered(logs).values()) == N_ITEMS * 6 == LLMCall.objects.count()
        assert Annotation.objects.filter(source=run, kind="ensemble").count() == N_ITEMS


def test_worker_job_survives_a_server_process_killed_mid_job(celery_worker_factory):
    # Slow enough calls (a doomed server's 16 calls take ~4 s) that the kill lands mid-job even on a loaded
    # machine, where polling for "3 answers" can lag by a second: at 0.15 s the server could finish first.
    config = SimConfig(models=MODELS, parallel=2, call_time=0.5, swap_cost=0.1)
    with SimProcess(config) as one, SimProcess(config) as two, SimProcess(config) as three:
        worker = celery_worker_factory().start()
        run = run_create(dataset=_dataset(), aspect_name="accuracy", annotators=ANNOTATORS, supervisor=SUPERVISOR,
                         ollama_url=[one.url, two.url, three.url], parallel=2)
        doomed_models = set(run.placement["servers"][0]["models"])
        TASKS[EvaluatorRun].apply_async((run.pk,), queue=worker.queue)
        # Once the first server has answered a few calls, its process is killed (SIGTERM, then gone).
        assert wait_for(lambda: sum(r.status == "ok" for r in one.stats().log) >= 3, timeout=60), (
            worker.log.read_text()[-3000:]
        )
        before_kill = one.stats()
        one.stop()
        assert wait_for(lambda: EvaluatorRun.objects.get(pk=run.pk).is_finished(), timeout=120), (
            worker.log.read_text()[-3000:]
        )
        run.refresh_from_db()
        assert run.status == JobStatus.DONE, run.message
        handed = {h["model"] for h in run.placement["handoffs"]}
        assert handed and handed <= doomed_models
        assert {h["from"] for h in run.placement["handoffs"]} == {one.url}
        logs = [before_kill, two.stats(), three.stats()]
        assert max(_answered(logs).values()) == 1  # no call answered before the kill was asked again
        assert LLMCall.objects.count() == N_ITEMS * 6
        assert Annotation.objects.filter(source=run, kind="ensemble").count() == N_ITEMS
        assert Annotation.objects.filter(source=run, kind="annotator").count() == N_ITEMS * 5
