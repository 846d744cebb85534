"""Job page, launch form and API twins of ensemble runs; permissions by role."""

from __future__ import annotations

import pytest
from ninja.testing import TestClient

from config.api import api
from evaluation.models import EvaluatorRun
from evaluation.runs.launch import run_create
from jobs.kinds import job_execute
from jobs.models import JobStatus
from tests import factories
from tests.ollama_sim.config import SimConfig
from tests.ollama_sim.server import OllamaSim

pytestmark = pytest.mark.django_db(transaction=True)
MODELS = ["m-a:1b", "m-b:1b", "m-s:1b"]


@pytest.fixture
def sim(allow_ollama):
    with OllamaSim(SimConfig(models=MODELS, parallel=2)) as server:
        allow_ollama(server.url)
        yield server


@pytest.fixture
def dataset():
    return factories.dataset("news <b>bold</b>", task="summarization", input_headers=["Article"],
                             output_header="Summary", items=[
        {"external_id": str(i), "inputs": {"Article": f"Story {i}."},
         "output": f"A summary number {i} of the story, with <script>alert({i})</script>."} for i in range(3)
    ])


def _client(user):
    client = TestClient(api)
    return lambda method, path, **kw: getattr(client, method)(path, user=user, **kw)


def test_api_create_run_then_progress_reports_counts(dataset, sim, make_user):
    admin = make_user("root", role="admin")
    call = _client(admin)
    response = call("post", "/runs", json={"dataset": dataset.name, "aspect": "relevance", "annotators": MODELS[:2],
                                            "supervisor": MODELS[2], "ollama_url": sim.url, "parallel": 2})
    assert response.status_code == 201, response.content
    run_id = response.json()["id"]
    assert response.json()["total_calls"] == 3 * 3
    assert job_execute(EvaluatorRun, run_id) == JobStatus.DONE  # what the queued worker would run
    progress = call("get", f"/runs/{run_id}").json()
    assert progress["status"] == "done" and progress["done"] == progress["total"] == 9
    assert progress["llm_calls"] == 9 and progress["finished"] is True
    assert [m["done"] for m in progress["models"]] == [3, 3, 3]
    assert progress["completion_tokens"] > 0


def test_api_create_run_missing_model_is_422_with_pull_command(dataset, sim, make_user):
    call = _client(make_user("root", role="admin"))
    response = call("post", "/runs", json={"dataset": dataset.name, "aspect": "relevance",
                                            "annotators": ["nope:70b"], "supervisor": MODELS[2],
                                            "ollama_url": sim.url})
    assert response.status_code == 422
    assert "ollama pull nope:70b" in response.json()["detail"]
    assert not EvaluatorRun.objects.exists()


def test_api_create_run_takes_answer_format_and_repair_and_refuses_an_unknown_format(dataset, sim, make_user):
    call = _client(make_user("root", role="admin"))
    body = {"dataset": dataset.name, "aspect": "relevance", "annotators": MODELS[:1], "ollama_url": sim.url,
            "mode": "single"}
    response = call("post", "/runs", json={**body, "answer_format": "json", "repair": False})
    assert response.status_code == 201, response.content
    run = EvaluatorRun.objects.get(pk=response.json()["id"])
    assert run.config["answer_format"] == "json" and run.config["repair"] is False
    assert "format" in run.config["options"]
    refused = call("post", "/runs", json={**body, "answer_format": "xml"})
    assert refused.status_code == 422 and "expected one of text, json" in refused.json()["detail"]


def test_api_runs_forbidden_for_annotators_and_launch_for_researchers(dataset, sim, make_user):
    assert _client(make_user("ann"))("get", "/runs").status_code == 403
    research = _client(make_user("res", role="researcher"))
    assert research("get", "/runs").status_code == 200
    assert research("post", "/runs", json={"dataset": dataset.name, "aspect": "relevance"}).status_code == 403


def test_api_cancel_and_resume_follow_status_rules(dataset, sim, make_user):
    call = _client(make_user("root", role="admin"))
    run = run_create(dataset=dataset, aspect_name="relevance", annotators=MODELS[:2], supervisor=MODELS[2],
                     ollama_url=sim.url)
    assert call("post", f"/runs/{run.pk}/resume").status_code == 409  # pending, not paused
    assert call("post", f"/runs/{run.pk}/cancel").json()["status"] == "cancelled"
    assert call("post", f"/runs/{run.pk}/cancel").status_code == 409


def test_run_page_polls_until_finished_and_escapes_text(client, dataset, sim, make_user):
    admin = make_user("root", role="admin")
    client.force_login(admin)
    run = run_create(dataset=dataset, aspect_name="relevance", annotators=MODELS[:2], supervisor=MODELS[2],
                     ollama_url=sim.url)
    page = client.get(f"/runs/{run.pk}/")
    assert page.status_code == 200
    body = page.content.decode()
    assert 'hx-trigger="every 2s"' in body and "news &lt;b&gt;bold&lt;/b&gt;" in body
    job_execute(EvaluatorRun, run.pk)
    partial = client.get(f"/runs/{run.pk}/", headers={"HX-Request": "true"})
    assert partial.status_code == 286  # htmx: stop polling
    assert "every 2s" not in partial.content.decode() and "9 / 9" in partial.content.decode()


def test_run_new_form_refuses_unreachable_server(client, dataset, make_user, allow_ollama):
    allow_ollama("http://127.0.0.1:9")
    client.force_login(make_user("root", role="admin"))
    response = client.post("/runs/new/", {"dataset": dataset.pk, "aspect": "relevance", "annotators": "a:1b",
                                          "mode": "ensemble",
                                          "supervisor": "b:1b", "ollama_url": "http://127.0.0.1:9", "parallel": 2,
                                          "outlier_rule": "leave_one_out"})
    assert response.status_code == 200
    # Said once: in the red box, not again in a bullet list above the fields.
    assert response.content.decode().count("Cannot reach Ollama at http://127.0.0.1:9") == 1
    assert not EvaluatorRun.objects.exists()
    client.force_login(make_user("res", role="researcher"))
    assert client.get("/runs/new/").status_code == 403


@pytest.mark.parametrize("change,named", [
    ({"ollama_url": "http://169.254.169.254/latest"}, "not an allowed LLM server"),
    ({"parallel": 10**12}, "--parallel must be between 1 and 64"),
    ({"aspect": "a" * 5000}, "has no aspect"),
])
def test_api_create_run_bad_values_are_422_not_500(dataset, sim, make_user, change, named):
    call = _client(make_user("root", role="admin"))
    body = {"dataset": dataset.name, "aspect": "relevance", "annotators": MODELS[:2], "supervisor": MODELS[2],
            "ollama_url": sim.url, **change}
    response = call("post", "/runs", json=body)
    assert response.status_code == 422 and named in response.json()["detail"]
    assert not EvaluatorRun.objects.exists()


def test_run_new_form_offers_only_allowed_servers(client, dataset, make_user, settings):
    settings.OLLAMA_URLS = [settings.OLLAMA_URL, "http://gpu-box:11434"]
    client.force_login(make_user("root", role="admin"))
    page = client.get("/runs/new/").content.decode()
    assert "http://gpu-box:11434" in page  # the allowed servers are listed beside the field
    response = client.post("/runs/new/", {"dataset": dataset.pk, "aspect": "relevance", "annotators": "a:1b",
                                          "mode": "ensemble", "supervisor": "b:1b", "parallel": 2,
                                          "ollama_url": "http://10.0.0.1:11434", "outlier_rule": "leave_one_out"})
    assert response.status_code == 200
    assert "http://10.0.0.1:11434: not an allowed LLM server" in response.content.decode()
    assert not EvaluatorRun.objects.exists()
