"""A newcomer's first hour in the browser: the simulator from the run form with its badge on the run page,
the analytics and the export; a researcher on admin-only pages; the demo's analytics right after load_demo;
a form error shown once."""

from __future__ import annotations

import io
import json

import pytest
from celery import current_app
from django.core.management import call_command

from evaluation.models import EvaluatorRun
from tests import factories
from tests.integration.conftest import celery_worker_factory  # noqa: F401 - the fixture, used by name below
from tests.ollama_sim import OllamaSim, SimConfig

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MODEL = "llama3.2:3b"


@pytest.fixture(autouse=True)
def _patient(page):
    page.set_default_timeout(30_000)  # a loaded two-core machine serves the first page slowly


@pytest.mark.integration
def test_a_run_on_the_simulated_server_from_the_form_is_marked_on_its_page_analytics_and_export(
        page, live_server, login, make_user, settings, celery_worker_factory, monkeypatch):  # noqa: F811
    make_user("boss", role="admin")
    dataset = factories.dataset("first-hour", task="summarization", input_headers=["Article"],
                                output_header="Summary", items=[
        {"external_id": str(i), "inputs": {"Article": f"Story {i} about a flood."},
         "output": f"Summary {i}: the river flooded the mill."} for i in range(3)])
    with OllamaSim(SimConfig(models=[MODEL])) as sim:
        settings.SIMULATOR_URL = sim.url
        worker = celery_worker_factory(extra_env={"SPANJUDGE_SIMULATOR_URL": sim.url}).start()
        monkeypatch.setitem(current_app.conf, "task_default_queue", worker.queue)
        login("boss")
        page.goto(f"{live_server.url}/runs/new/")
        page.select_option("select[name='server']", label=f"Simulated server (no model): {sim.url}")
        page.select_option("select[name='mode']", "single")
        page.fill("input[name='annotators']", MODEL)
        # Picking the dataset swaps in its task's aspects; what was typed in the other fields stays.
        with page.expect_response(lambda r: "/runs/new/" in r.url and r.request.method == "GET"):
            page.select_option("select[name='dataset']", label=dataset.name)
        page.select_option("select[name='aspect']", "relevance")
        assert page.input_value("input[name='annotators']") == MODEL
        assert page.input_value("select[name='mode']") == "single"
        page.get_by_role("button", name="Check models and start").click()
        page.wait_for_url(f"{live_server.url}/runs/*/")
        page.locator("#run-progress .status-done").wait_for(timeout=120_000)
    run = EvaluatorRun.objects.get(dataset=dataset)
    assert run.simulated
    assert page.locator("h1 [data-simulated]").inner_text() == "Simulated"
    assert "not from a model" in page.locator("#simulated-note").inner_text()
    page.goto(f"{live_server.url}/analytics/datasets/{dataset.pk}/")
    assert run.label in page.locator("#simulated-note").inner_text()
    assert page.get_by_text(f"{run.label} (simulated)").count() >= 1
    exported = page.request.get(f"{live_server.url}/datasets/{dataset.pk}/export.jsonl").text()
    records = [json.loads(line) for line in exported.splitlines()]
    assert records and all(r["simulated"] is True for r in records)


@pytest.mark.parametrize("path", ["/runs/new/", "/dhp/runs/new/", "/comparisons/new/"])
def test_a_researcher_on_an_admin_only_page_reads_why_inside_the_layout(page, live_server, login, make_user, path):
    make_user("rita", role="researcher")
    login("rita")
    response = page.goto(f"{live_server.url}{path}")
    assert response.status == 403
    assert page.locator("header.topbar nav").is_visible()
    reason = page.locator("#error-reason").inner_text()
    assert "Only admins start, cancel or resume LLM jobs" in reason and "ask an admin" in reason
    page.get_by_role("link", name="The evaluator runs that exist").click()
    page.wait_for_url(f"{live_server.url}/#runs")


def test_the_demo_analytics_show_figures_right_after_load_demo(page, live_server, login):
    call_command("load_demo", stdout=io.StringIO())
    login("researcher", "demo-pass-2026")
    page.get_by_role("link", name="Demo campaign: restaurant accuracy").first.click()
    page.get_by_role("link", name="Analytics").first.click()
    accuracy = page.locator("#table-accuracy")
    assert "No machine error has both verdicts yet" not in accuracy.inner_text()
    row = accuracy.locator("tr", has_text="All evaluators").inner_text()
    assert "20" in row and "85.0" in row  # 20 sample judgments, 17 of them "Error"


def test_a_form_error_is_shown_once_beside_its_field(page, live_server, login, make_user):
    make_user("boss", role="admin")
    factories.dataset("d2t-set")  # a data-to-text dataset: relevance is a summarization aspect
    login("boss")
    page.goto(f"{live_server.url}/runs/new/")
    with page.expect_response(lambda r: "/runs/new/" in r.url and r.request.method == "GET"):
        page.select_option("select[name='dataset']", label="d2t-set")  # the form comes back with its task's aspects
    assert page.locator("select[name='aspect'] option[value='relevance']").count() == 0
    with page.expect_response(lambda r: "/runs/new/" in r.url and r.request.method == "GET"):
        page.check("input[name='all_aspects']")  # every task's aspects, to pick one of another task
    page.select_option("select[name='aspect']", "relevance")
    page.get_by_role("button", name="Check models and start").click()
    page.wait_for_load_state()
    errors = page.locator(".field-error")
    assert errors.count() == 1
    message = errors.inner_text()
    assert "is not an aspect of data-to-text" in message
    assert page.locator("main").inner_text().count(message) == 1
    assert page.locator("#id_aspect_error").is_visible()


def test_an_import_lists_several_bad_lines(page, live_server, login, make_user, tmp_path):
    make_user("rita", role="researcher")
    good = json.dumps({"id": "1", "inputs": {"Data": "a"}, "outputs": {"Text": "b"}})
    path = tmp_path / "three-bad.jsonl"
    path.write_text("\n".join([good, "{broken", json.dumps({"id": "3", "inputs": {"Data": "a"}}), good, "[1, 2"]))
    login("rita")
    page.goto(f"{live_server.url}/datasets/import/")
    page.set_input_files("input[name='file']", str(path))
    page.fill("input[name='dataset']", "Three bad lines")
    page.select_option("select[name='task']", "data-to-text")
    page.get_by_role("button", name="Import").click()
    page.wait_for_load_state()
    errors = page.locator("#id_file_error").inner_text()  # a problem of the file is shown at the file
    assert "3 bad objects" in errors
    assert "line 2: invalid JSON" in errors and "line 3, id '3': field 'outputs' is missing" in errors
    assert "line 5: invalid JSON" in errors and "nothing was imported" in errors


@pytest.mark.integration
def test_a_comparison_on_the_simulated_server_from_the_form_is_marked(
        page, live_server, login, make_user, settings, celery_worker_factory, monkeypatch):  # noqa: F811
    from comparison.models import ComparisonJob

    make_user("boss", role="admin")
    dataset = factories.dataset("cmp-first-hour", task="summarization", input_headers=["Article"],
                                output_header="Summary", score_aspects=["relevance"], items=[
        {"external_id": str(i), "inputs": {"Article": f"Story {i} about a flood."},
         "output": f"Summary {i}: the river flooded the mill.", "human_scores": {"relevance": i % 3 + 1}}
        for i in range(4)])
    with OllamaSim(SimConfig(models=[MODEL])) as sim:
        settings.SIMULATOR_URL = sim.url
        worker = celery_worker_factory(extra_env={"SPANJUDGE_SIMULATOR_URL": sim.url}).start()
        monkeypatch.setitem(current_app.conf, "task_default_queue", worker.queue)
        login("boss")
        page.goto(f"{live_server.url}/comparisons/new/")
        page.select_option("#id_dataset", label=dataset.name)
        page.check("input[name=metrics][value=length]")
        page.fill("#id_model_metrics", f"annotator:{MODEL}")
        page.select_option("select[name='server']", label=f"Simulated server (no model): {sim.url}")
        page.get_by_role("button", name="Check and start").click()
        page.wait_for_url(f"{live_server.url}/comparisons/*/")
        page.locator("#job-progress .status-done").wait_for(timeout=120_000)
    job = ComparisonJob.objects.get(dataset=dataset)
    assert job.simulated
    page.reload()
    assert page.locator("h1 [data-simulated]").inner_text() == "Simulated"
    page.goto(f"{live_server.url}/comparisons/")
    assert page.locator("table [data-simulated]").count() == 1
