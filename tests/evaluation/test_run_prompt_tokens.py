"""What a run shows of the servers' prompt caches: prompt tokens sent, evaluated and cached on the run page and
in `GET /api/runs/ID`, `cached_tokens` per LLM call in the ledger and in `export_items`, and a server that cannot
tell a cut named once among the run's problems."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.db.models import Sum
from django.test import Client

from accounts.services.tokens import token_create
from evaluation.models import EvaluatorRun, LLMCall
from evaluation.runs.launch import run_create
from jobs.kinds import job_execute
from jobs.models import JobStatus
from tests import factories
from tests.ollama_sim import OllamaSim, SimConfig

pytestmark = pytest.mark.django_db(transaction=True)

ANNOTATORS = ["ann-a:1b", "ann-b:1b"]
SUPERVISOR = "sup:1b"


def _run(name: str, **sim) -> tuple[EvaluatorRun, str]:
    dataset = factories.dataset(name, input_headers=["Data"], output_header="Text", items=[
        {"external_id": f"i{i}", "inputs": {"Data": f"game {i}: home 101, away 99"},
         "output": f"The home side won game {i} by two points."} for i in range(3)
    ])
    config = SimConfig(models=[*ANNOTATORS, SUPERVISOR], parallel=2, cache_slots=2, profile="ollama", **sim)
    with OllamaSim(config) as server:
        run = run_create(dataset=dataset, aspect_name="accuracy", annotators=ANNOTATORS, supervisor=SUPERVISOR,
                         ollama_url=server.url, parallel=2)
        job_execute(EvaluatorRun, run.pk)
        url = server.url
    run = EvaluatorRun.objects.get(pk=run.pk)
    assert run.status == JobStatus.DONE, run.message
    return run, url


def _api(run: EvaluatorRun) -> dict:
    token = token_create(user=factories.user("res", role="researcher"), name="t")
    return Client().get(f"/api/runs/{run.pk}", HTTP_AUTHORIZATION=f"Bearer {token}").json()


def test_the_run_shows_prompt_tokens_sent_evaluated_and_cached(tmp_path):
    run, _ = _run("cached", count="full", version="0.33.0")
    calls = LLMCall.objects.filter(run_calls__run=run).distinct()
    sums = calls.aggregate(sent=Sum("prompt_tokens"), cached=Sum("cached_tokens"))
    assert sums["cached"] > 0  # items share the prompt's instructions: the slots kept them
    body = _api(run)
    assert body["prompt_tokens"] == {"sent": sums["sent"], "evaluated": sums["sent"] - sums["cached"],
                                     "cached": sums["cached"]}
    assert not any(key.startswith("truncation_unchecked") for key in body["problems"])
    client = Client()
    client.force_login(factories.user("boss", role="admin"))
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert f"{sums['sent']} / {sums['sent'] - sums['cached']} / {sums['cached']}" in page

    path = tmp_path / "cached.jsonl"
    call_command("export_items", dataset="cached", format="jsonl", output=path, stdout=StringIO())
    exported = [a for line in path.read_text().splitlines() for a in json.loads(line)["annotations"]]
    by_model = {a["model"]: a["llm_calls"] for a in exported if a["kind"] == "annotator"}
    assert set(by_model) == set(ANNOTATORS)
    stored = {(c.model, c.prompt_tokens, c.cached_tokens) for c in calls}
    for model, answered in by_model.items():
        assert answered and all((model, c["prompt_tokens"], c["cached_tokens"]) in stored for c in answered)


def test_a_server_that_cannot_tell_a_cut_is_named_once_among_the_runs_problems():
    run, url = _run("unchecked", count="zero", version="0.1.30")
    body = _api(run)
    unchecked = {key: n for key, n in body["problems"].items() if key.startswith("truncation_unchecked:")}
    answered = LLMCall.objects.filter(run_calls__run=run, run_calls__from_cache=False).distinct().count()
    assert unchecked == {f"truncation_unchecked: {url}": answered}  # one entry for the server, every answer in it
    assert body["problems"]["prompt_too_long"] == 0
    client = Client()
    client.force_login(factories.user("boss", role="admin"))
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert page.count(f"truncation_unchecked: {url}") == 1
