"""A DHP run started from the browser form on the shipped simulator (no scripted answers) ends with figures:
the form offers the survey, the preset and the servers; a real Celery worker runs the job."""

from __future__ import annotations

import pytest
from celery import current_app

from dhp.models import DhpRun
from jobs.models import JobStatus
from tests.dhp.conftest import make_dataset
from tests.integration.conftest import celery_worker_factory  # noqa: F401 - the fixture, used by name below
from tests.ollama_sim import OllamaSim, SimConfig

pytestmark = [pytest.mark.browser, pytest.mark.integration, pytest.mark.django_db(transaction=True)]

MODEL = "judge:1b"


def test_dhp_run_from_the_browser_on_the_simulator_completes(page, live_server, login, make_user, settings,
                                                              celery_worker_factory, monkeypatch):  # noqa: F811
    make_user("dhp-boss", role="admin")
    dataset = make_dataset("dhp-browser", n=5)
    with OllamaSim(SimConfig(models=[MODEL], parallel=2)) as sim:
        settings.OLLAMA_URL = sim.url
        settings.OLLAMA_URLS = [sim.url]
        worker = celery_worker_factory(extra_env={"OLLAMA_URL": sim.url, "OLLAMA_URLS": sim.url}).start()
        monkeypatch.setitem(current_app.conf, "task_default_queue", worker.queue)
        login("dhp-boss")
        page.goto(f"{live_server.url}/dhp/runs/new/")
        for field in ("survey", "preset", "ollama_url"):
            assert page.locator(f"select[name='{field}']").count() == 1, field
        assert "laptop" in page.locator("select[name='preset']").inner_text()
        assert sim.url in page.locator("select[name='ollama_url']").inner_text()
        page.select_option("select[name='dataset']", label=dataset.name)
        page.fill("input[name='evaluator']", MODEL)
        page.locator("input[name='metrics'][value='coherence']").first.check()
        for kind in ("typo:major", "llm-insert:major"):  # checkboxes grouped by level
            page.check(f"input[name='kinds'][value='{kind}']")
        assert page.locator("#id_kinds").get_by_text("character level").count() == 1
        page.fill("input[name='samples']", "1")
        page.locator("button[type='submit']", has_text="Queue the DHP run").click()
        page.wait_for_url(f"{live_server.url}/dhp/runs/*/")
        run = DhpRun.objects.get(dataset=dataset)
        page.locator("#dhp-progress .status-done").wait_for(timeout=120_000)
    run.refresh_from_db()
    assert run.status == JobStatus.DONE, run.message
    kinds = {p["kind"] for p in run.results["perturbations"]}
    assert kinds == {"typo:major", "llm-insert:major"}
    page.reload()
    body = page.locator("main").inner_text()
    assert "llm-insert:major" in body and "typo:major" in body
