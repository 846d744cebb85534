"""One job over several simulated servers: placement, both server dialects, a server lost mid-job."""

from __future__ import annotations

import io
import threading
import time
from collections import Counter

import pytest
from django.core.management import call_command
from ninja.testing import TestClient

from config.api import api
from corpus.models import Annotation
from errors import UserError
from evaluation.models import EvaluatorRun, LLMCall
from evaluation.runs.launch import run_create
from jobs.kinds import job_execute
from jobs.lifecycle import job_requeue
from jobs.models import JobStatus
from tests import factories
from tests.ollama_sim.config import FaultRule, SimConfig
from tests.ollama_sim.openai_api import CHAT
from tests.ollama_sim.server import OllamaSim

pytestmark = pytest.mark.django_db(transaction=True)

ANNOTATORS = ["ann-a:1b", "ann-b:1b", "ann-c:1b"]
SUPERVISOR = "sup:1b"
MODELS = [*ANNOTATORS, SUPERVISOR]
N = 6


@pytest.fixture
def dataset(db):
    return factories.dataset("multi", input_headers=["Data"], output_header="Text", items=[
        {"external_id": f"m{i}", "inputs": {"Data": f"record {i}"},
         "output": f"The Copper Kettle {i} is a cheap coffee shop in the city centre with {i + 2} tables."}
        for i in range(N)
    ])


def _sims(*model_lists: list[str], **config: object) -> list[OllamaSim]:
    return [OllamaSim(SimConfig(models=models, parallel=2, **config)).start() for models in model_lists]


def _ok(sims: list[OllamaSim]) -> Counter:
    """Answered calls over every server: (model, prompt, options) -> how often."""
    return Counter(
        (r.model, r.prompt_sha256, repr(sorted(r.options.items())))
        for sim in sims for r in sim.stats.log if r.status == "ok"
    )


def _create(dataset, urls, **kw) -> EvaluatorRun:
    return run_create(dataset=dataset, aspect_name="accuracy", annotators=ANNOTATORS, supervisor=SUPERVISOR,
                      ollama_url=urls, parallel=2, **kw)


def test_run_spreads_its_models_over_three_servers(dataset):
    sims = _sims(MODELS, MODELS, MODELS, call_time=0.02, swap_cost=0.05)
    try:
        run = _create(dataset, [s.url for s in sims])
        assert run.servers == [s.url for s in sims]
        placed = run.placement["models"]
        # four models of equal expected work over three servers: one each, the fourth on the first
        assert placed == {"ann-a:1b": sims[0].url, "ann-b:1b": sims[1].url, "ann-c:1b": sims[2].url,
                          "sup:1b": sims[0].url}
        assert job_execute(EvaluatorRun, run.pk) == JobStatus.DONE
        run.refresh_from_db()
        for sim in sims:  # each server loaded only what was placed on it, each once
            assert sorted(sim.stats.load_order) == sorted(m for m, url in placed.items() if url == sim.url)
        assert sum(_ok(sims).values()) == N * 4 == LLMCall.objects.count()
        assert Annotation.objects.filter(source=run, kind="ensemble").count() == N
        assert [entry["state"] for entry in run.placement["servers"]] == ["up"] * 3
    finally:
        for sim in sims:
            sim.stop()


def test_run_places_a_model_only_on_a_server_that_has_it(dataset):
    sims = _sims(["ann-a:1b", "ann-b:1b"], ["ann-c:1b", SUPERVISOR])
    try:
        run = _create(dataset, ",".join(s.url for s in sims))
        assert run.placement["models"] == {"ann-a:1b": sims[0].url, "ann-b:1b": sims[0].url,
                                           "ann-c:1b": sims[1].url, "sup:1b": sims[1].url}
        assert job_execute(EvaluatorRun, run.pk) == JobStatus.DONE
        assert sims[0].stats.load_order == ANNOTATORS[:2]
        assert sims[1].stats.load_order == ["ann-c:1b", SUPERVISOR]
    finally:
        for sim in sims:
            sim.stop()


def test_run_create_refuses_a_model_no_server_has_and_a_bad_address(dataset):
    sims = _sims(["ann-a:1b"], ["ann-b:1b"])
    try:
        urls = [s.url for s in sims]
        with pytest.raises(UserError) as caught:
            _create(dataset, urls)
        message = str(caught.value)
        assert "ollama pull ann-c:1b" in message and "ollama pull sup:1b" in message
        assert urls[0] in message and urls[1] in message
        with pytest.raises(UserError, match="'gpu1:11434' is not an address"):
            _create(dataset, f"{urls[0]},gpu1:11434")
        assert not EvaluatorRun.objects.exists()
    finally:
        for sim in sims:
            sim.stop()


def test_run_against_an_openai_compatible_server(dataset):
    (sim,) = _sims(MODELS)
    try:
        run = _create(dataset, f"openai+{sim.url}")
        assert run.placement["servers"][0]["kind"] == "openai"
        assert job_execute(EvaluatorRun, run.pk) == JobStatus.DONE
        stats = sim.stats
        assert stats.requests == N * 4 and {r.endpoint for r in stats.log} == {CHAT}  # only the /v1 dialect
        assert Annotation.objects.filter(source=run, kind="ensemble").count() == N
        assert set(LLMCall.objects.values_list("model_digest", flat=True)) == {""}  # no digest in this dialect
    finally:
        sim.stop()


def test_run_mixes_an_ollama_and_an_openai_compatible_server(dataset):
    ollama, vllm = _sims(MODELS, MODELS)
    try:
        run = _create(dataset, [ollama.url, f"openai+{vllm.url}"])
        assert job_execute(EvaluatorRun, run.pk) == JobStatus.DONE
        kinds = {entry["server"]: entry["kind"] for entry in run.placement["servers"]}
        assert kinds == {ollama.url: "ollama", f"openai+{vllm.url}": "openai"}
        assert ollama.stats.requests > 0 and vllm.stats.requests > 0
        assert sum(_ok([ollama, vllm]).values()) == N * 4
    finally:
        ollama.stop()
        vllm.stop()


def test_preannotate_takes_a_comma_separated_server_list(dataset):
    sims = _sims(MODELS, MODELS)
    try:
        out = io.StringIO()
        call_command("preannotate", dataset="multi", aspect="accuracy", annotators=",".join(ANNOTATORS),
                     supervisor=SUPERVISOR, ollama_url=f"{sims[0].url}, {sims[1].url}", parallel=2, sync=True,
                     stdout=out)
        text = out.getvalue()
        assert f"{sims[0].url}: ann-a:1b, ann-c:1b" in text and f"{sims[1].url}: ann-b:1b, sup:1b" in text
        assert "done" in text
    finally:
        for sim in sims:
            sim.stop()


@pytest.fixture
def fast(settings):
    """Clients that give a dead server up quickly: the settings every run's clients are made with."""
    settings.LLM_RETRY = {"transport_retries": 1, "backoff": 0.01}
    settings.LLM_LOAD_TIMEOUT = 5


def _kill_after(sim: OllamaSim, answered: int) -> threading.Thread:
    def watch() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and sum(r.status == "ok" for r in sim.stats.log) < answered:
            time.sleep(0.01)
        sim.stop()

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def test_a_server_killed_mid_job_hands_its_models_over_and_no_answered_call_is_repeated(dataset, fast):
    sims = _sims(MODELS, MODELS, MODELS, call_time=0.05)
    try:
        run = _create(dataset, [s.url for s in sims])
        doomed = sims[0]  # it runs ann-a, then the supervisor
        killer = _kill_after(doomed, 3)
        assert job_execute(EvaluatorRun, run.pk) == JobStatus.DONE
        killer.join()
        run.refresh_from_db()
        assert run.placement["handoffs"] and {h["from"] for h in run.placement["handoffs"]} == {doomed.url}
        moved = {h["model"] for h in run.placement["handoffs"]}
        assert "ann-a:1b" in moved
        state = next(e["state"] for e in run.placement["servers"] if e["server"] == doomed.url)
        assert state.startswith("lost mid-job")
        answered = _ok(sims)
        assert max(answered.values()) == 1  # no answered call was asked twice, on any server
        assert sum(answered.values()) == N * 4 == LLMCall.objects.count()
        assert Annotation.objects.filter(source=run, kind="ensemble").count() == N
    finally:
        for sim in sims:
            sim.stop()


def test_a_lost_server_whose_model_is_nowhere_else_pauses_the_job_naming_it(dataset, fast):
    only, other = _sims(MODELS, [m for m in MODELS if m != "ann-b:1b"], call_time=0.02)
    try:
        run = _create(dataset, [only.url, other.url])
        assert run.placement["models"]["ann-b:1b"] == only.url
        only.configure(faults=[FaultRule(kind="error", status=503)])  # it stops answering anything
        assert job_execute(EvaluatorRun, run.pk) == JobStatus.PAUSED
        run.refresh_from_db()
        assert f"The server {only.url} stopped answering" in run.message
        assert "No other server of this run has ann-b:1b" in run.message and "resume" in run.message
        only.configure(faults=[])
        only.reset_stats()
        other_before = _ok([other])
        assert job_requeue(run, enqueue=False)
        assert job_execute(EvaluatorRun, run.pk) == JobStatus.DONE
        assert not set(_ok([only])) & set(other_before)  # nothing answered before was asked again
        assert Annotation.objects.filter(source=run, kind="ensemble").count() == N
    finally:
        only.stop()
        other.stop()


def test_api_takes_a_server_list_and_reports_the_placement(dataset, make_user):
    sims = _sims(MODELS, MODELS)
    try:
        client = TestClient(api)
        admin = make_user("root", role="admin")
        body = {"dataset": dataset.name, "aspect": "accuracy", "annotators": ANNOTATORS, "supervisor": SUPERVISOR,
                "ollama_url": [sims[0].url, f"openai+{sims[1].url}"], "parallel": 2}
        response = client.post("/runs", json=body, user=admin)
        assert response.status_code == 201, response.content
        run_id = response.json()["id"]
        assert job_execute(EvaluatorRun, run_id) == JobStatus.DONE
        progress = client.get(f"/runs/{run_id}", user=admin).json()
        assert progress["servers"] == [sims[0].url, f"openai+{sims[1].url}"]
        # 6 calls in rounds of 2 at 20 s each: 60 s a model, plus a 30 s load on the Ollama server only (an
        # OpenAI-compatible server holds its models from its start): ann-a 0+60 on openai, ann-b 90 on Ollama,
        # ann-c 120 on openai (180 on Ollama), sup 180 either way, so the first server (Ollama) by order.
        assert [e["models"] for e in progress["placement"]["servers"]] == [["ann-b:1b", "sup:1b"],
                                                                           ["ann-a:1b", "ann-c:1b"]]
        bad = client.post("/runs", json={**body, "ollama_url": ["http://a:1", "ftp://b"]}, user=admin)
        assert bad.status_code == 422 and "'ftp://b'" in bad.json()["detail"]
    finally:
        for sim in sims:
            sim.stop()


def test_run_form_launches_on_several_servers_and_the_page_shows_where_each_model_runs(client, dataset, make_user):
    sims = _sims(MODELS, MODELS)
    try:
        client.force_login(make_user("root", role="admin"))
        response = client.post("/runs/new/", {
            "dataset": dataset.pk, "aspect": "accuracy", "annotators": ",".join(ANNOTATORS), "mode": "ensemble",
            "supervisor": SUPERVISOR, "ollama_url": f"{sims[0].url}, {sims[1].url}", "parallel": 2,
            "outlier_rule": "leave_one_out",
        })
        assert response.status_code == 302, response.content.decode()[-2000:]
        run = EvaluatorRun.objects.get()
        page = client.get(f"/runs/{run.pk}/").content.decode()
        assert 'id="run-placement"' in page
        assert f"<td><code>{sims[1].url}</code></td><td>ollama</td><td>ann-b:1b, sup:1b</td>" in page
        assert f"LLM servers {sims[0].url}, {sims[1].url}" in page
        # The placement is part of what the page polls, so a hand-over mid-job shows without a reload.
        polled = client.get(f"/runs/{run.pk}/", HTTP_HX_REQUEST="true").content.decode()
        assert 'id="run-placement"' in polled and "<h1>" not in polled
    finally:
        for sim in sims:
            sim.stop()


def test_a_model_that_annotates_and_supervises_is_placed_once_with_both_phases(dataset):
    sims = _sims(MODELS, MODELS)
    try:
        run = run_create(dataset=dataset, aspect_name="accuracy", annotators=["ann-a:1b", "ann-b:1b"],
                         supervisor="ann-a:1b", ollama_url=[s.url for s in sims], parallel=2)
        # ann-a has twice the calls of ann-b (both phases), so it is placed first, on its own server
        assert run.placement["models"] == {"ann-a:1b": sims[0].url, "ann-b:1b": sims[1].url}
        assert job_execute(EvaluatorRun, run.pk) == JobStatus.DONE
        assert sims[0].stats.load_order == ["ann-a:1b"]  # loaded once for both of its phases
        assert Annotation.objects.filter(source=run, kind="ensemble").count() == N
        assert sum(_ok(sims).values()) == N * 3
    finally:
        for sim in sims:
            sim.stop()


def _run_asking_four(dataset, url: str) -> EvaluatorRun:
    return run_create(dataset=dataset, aspect_name="accuracy", annotators=ANNOTATORS, supervisor=SUPERVISOR,
                      ollama_url=url, parallel=4)


def test_a_run_sends_a_server_no_more_than_its_props_say_it_serves(dataset, client, make_user):
    """llama.cpp's llama-server says in /props how many requests it serves at once (total_slots): a run asked
    for four in flight sends one at a time to a one-slot server, plans its time for that, and says why."""
    (sim,) = _sims(MODELS, profile="llamacpp")
    sim.configure(parallel=1)
    try:
        run = _run_asking_four(dataset, f"openai+{sim.url}")
        planned = run.placement["servers"][0]
        assert planned["parallel"] == 1 and planned["parallel_source"] == "1 at once: the server's /props (total_slots)"
        assert job_execute(EvaluatorRun, run.pk) == JobStatus.DONE
        held = sim.stats.peak_held_per_model
        assert set(held) == set(MODELS) and max(held.values()) == 1  # nothing queued on the server
        run.refresh_from_db()
        assert run.placement["servers"][0]["parallel"] == 1
        client.force_login(make_user("boss", role="admin"))
        page = client.get(f"/runs/{run.pk}/").content.decode()
        assert 'data-parallel="1">1 <span class="muted small">(1 at once: the server&#x27;s /props' in page
    finally:
        sim.stop()


def test_a_run_keeps_the_asked_parallel_where_the_server_says_nothing_and_the_setting_where_it_is_set(
        dataset, settings):
    (sim,) = _sims(MODELS)  # an Ollama: its /api says nothing of OLLAMA_NUM_PARALLEL
    sim.configure(parallel=4)
    try:
        run = _run_asking_four(dataset, sim.url)
        assert run.placement["servers"][0]["parallel"] == 4
        assert run.placement["servers"][0]["parallel_source"].startswith("the run's Parallel")
        settings.LLM_SERVER_SLOTS = [f"{sim.url}=2", "not an address=3", f"{sim.url}x=zero"]
        limited = _run_asking_four(dataset, sim.url)
        assert limited.placement["servers"][0]["parallel"] == 2
        assert limited.placement["servers"][0]["parallel_source"] == "2 at once: LLM_SERVER_SLOTS"
        # four calls of 20 s (the default before anything is measured) in rounds of 2, then of 4
        assert limited.placement["servers"][0]["expected_seconds"] > run.placement["servers"][0]["expected_seconds"]
        assert job_execute(EvaluatorRun, limited.pk) == JobStatus.DONE
        assert max(sim.stats.peak_held_per_model.values()) == 2
    finally:
        sim.stop()


def test_the_small_model_server_is_sent_one_request_at_a_time(dataset, settings):
    (sim,) = _sims(MODELS, profile="vllm")  # no /props: only the small model's declaration limits it
    sim.configure(parallel=4)
    settings.SPANJUDGE_SMALL_MODEL_URL = settings.SMALL_MODEL_URL = f"openai+{sim.url}"
    try:
        run = _run_asking_four(dataset, f"openai+{sim.url}")
        assert run.placement["servers"][0]["parallel"] == 1
        assert "llama-cpp-python's server answers one request at a time" in run.placement["servers"][0][
            "parallel_source"]
        assert job_execute(EvaluatorRun, run.pk) == JobStatus.DONE
        assert max(sim.stats.peak_held_per_model.values()) == 1
    finally:
        sim.stop()
