"""Simulated is marked everywhere: the simulator says what it is, and what it answered is stored and shown so."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from annotator.models import Campaign
from comparison.services.jobs import comparison_create
from dhp.engine.kinds import parse_kinds
from dhp.services.runs import dhp_create
from evaluation.llm.servers import Server, ServerKind
from evaluation.llm.simulated import SIMULATOR_HEADER, server_simulated
from evaluation.models import EvaluatorRun
from evaluation.runs.launch import run_create
from jobs.kinds import job_execute
from jobs.models import JobStatus
from tests import factories
from tests.ollama_sim import OllamaSim, SimConfig

pytestmark = pytest.mark.django_db(transaction=True)
MODEL = "m-a:1b"


@pytest.fixture
def sim(allow_ollama):
    with OllamaSim(SimConfig(models=[MODEL, "judge:1b"])) as server:
        allow_ollama(server.url)
        yield server


@pytest.fixture
def dataset():
    return factories.dataset("sim-news", task="summarization", input_headers=["Article"], output_header="Summary",
                             score_aspects=["relevance"],
                             items=[{"external_id": str(i), "inputs": {"Article": f"Story {i}."},
                                     "output": f"A summary number {i} of the story.", "human_scores": {"relevance": i}}
                                    for i in range(3)])


class _RealShaped(BaseHTTPRequestHandler):
    """Answers /api/version the way a real Ollama does: a version and nothing else."""

    def do_GET(self):  # noqa: N802 - the stdlib's name
        body = json.dumps({"version": "0.12.0"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        return


@pytest.fixture
def real_shaped():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _RealShaped)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _simulated_run(dataset, url: str) -> EvaluatorRun:
    run = run_create(dataset=dataset, aspect_name="relevance", annotators=[MODEL], mode="single", ollama_url=url)
    assert job_execute(EvaluatorRun, run.pk) == JobStatus.DONE
    return EvaluatorRun.objects.get(pk=run.pk)


def test_simulator_says_what_it_is_in_version_and_header(sim):
    version = httpx.get(f"{sim.url}/api/version")
    assert version.json()["simulated"] is True
    assert version.headers[SIMULATOR_HEADER] == "tests.ollama_sim"
    # every answer carries the header, an error too
    assert httpx.get(f"{sim.url}/no/such/path").headers[SIMULATOR_HEADER] == "tests.ollama_sim"


def test_server_simulated_tells_the_simulator_from_a_real_shaped_server(sim, real_shaped):
    assert server_simulated(Server(ServerKind.OLLAMA, sim.url)) is True
    assert server_simulated(Server(ServerKind.OPENAI, sim.url)) is True  # its 404 carries the header
    assert server_simulated(Server(ServerKind.OLLAMA, real_shaped)) is False
    assert server_simulated(Server(ServerKind.OLLAMA, "http://127.0.0.1:9")) is False  # nobody there


def test_run_on_the_simulator_is_stored_simulated_and_one_on_a_real_shaped_server_is_not(dataset, sim, real_shaped):
    run = run_create(dataset=dataset, aspect_name="relevance", annotators=[MODEL], mode="single", ollama_url=sim.url)
    assert run.simulated is True
    unchecked = run_create(dataset=dataset, aspect_name="relevance", annotators=[MODEL], mode="single",
                           ollama_url=sim.url, check=False)
    assert unchecked.simulated is False  # nothing asked yet
    assert job_execute(EvaluatorRun, unchecked.pk) == JobStatus.DONE
    assert EvaluatorRun.objects.get(pk=unchecked.pk).simulated is True  # the executor asked the server


def test_dhp_run_and_comparison_on_the_simulator_are_stored_simulated(dataset, sim, settings):
    dhp = dhp_create(dataset=dataset, evaluator="judge:1b", metrics=["relevance"], kinds=parse_kinds("typo:minor"),
                     samples=1, ollama_url=sim.url)
    assert dhp.simulated is True
    job = comparison_create(dataset=dataset, metrics="annotator:judge:1b", aspects=["relevance"], ollama_url=sim.url)
    assert job.simulated is True
    baseline = comparison_create(dataset=dataset, metrics="length", aspects=["relevance"], ollama_url=sim.url)
    assert baseline.simulated is False  # no server asked: a length baseline is no simulated figure


def test_pages_lists_and_analytics_mark_a_simulated_run(dataset, sim, client, make_user):
    run = _simulated_run(dataset, sim.url)
    real = factories.run(dataset, "real-run", aspect="relevance")
    client.force_login(make_user("root", role="admin"))
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert "data-simulated" in page and 'id="simulated-note"' in page and 'id="delete-simulated"' in page
    assert "data-simulated" not in client.get(f"/runs/{real.pk}/").content.decode()
    home = client.get("/").content.decode()
    assert home.count("data-simulated") == 1  # the simulated run's row only
    analytics = client.get(f"/analytics/datasets/{dataset.pk}/").content.decode()
    assert 'id="simulated-note"' in analytics and f"<td>{run.label} (simulated)</td>" in analytics
    assert "<td>real-run (simulated)</td>" not in analytics
    table = client.get(f"/api/analytics/datasets/{dataset.pk}/tables/scores").json()
    rows = {r["run"]: r for r in table["rows"]}
    assert rows[run.label]["simulated"] is True  # the API keeps the bare label and says so beside it
    csv_text = client.get(f"/analytics/datasets/{dataset.pk}/tables/scores.csv").content.decode()
    assert f"{run.label} (simulated)" in csv_text


def test_exports_and_data_card_say_simulated(dataset, sim, client, make_user):
    run = _simulated_run(dataset, sim.url)
    client.force_login(make_user("root", role="admin"))
    body = b"".join(client.get(f"/datasets/{dataset.pk}/export.jsonl").streaming_content).decode()
    records = [json.loads(line) for line in body.splitlines()]
    with_run = [r for r in records if any(a["source"] == run.label for a in r["annotations"])]
    assert len(with_run) == 3
    assert all(r["simulated"] is True for r in with_run)
    assert all(a["simulated"] is True for r in with_run for a in r["annotations"] if a["source"] == run.label)
    assert not any("simulated" in r for r in records if r not in with_run)

    from analytics.exports.card import data_card
    from annotator.services.exporting import ExportFilter

    card = data_card(dataset, ExportFilter(), fmt="jsonl")
    assert card["simulated_runs"] == [run.label]
    assert [r["simulated"] for r in card["runs"]] == [True]


def test_campaign_from_a_simulated_run_warns_and_an_admin_deletes_both(dataset, sim, client, make_user):
    run = _simulated_run(dataset, sim.url)
    admin = make_user("root", role="admin")
    expert = make_user("ex1")
    client.force_login(admin)
    form = client.get(f"/campaigns/new/?run={run.pk}").content.decode()
    assert 'id="simulated-warning"' in form and "SIMULATED: no model was called" in form
    made = client.post("/campaigns/new/", {
        "name": "on-sim", "dataset": dataset.pk, "runs": [run.pk], "aspects": ["relevance"],
        "annotators": [expert.pk], "annotators_per_item": 1, "seed": 0, "guidelines": "x", "categories": "Other",
    }, follow=True)
    assert Campaign.objects.filter(name="on-sim").exists(), made.content.decode()[:3000]
    assert "Built on simulated evaluator run(s)" in made.content.decode()
    factories.campaign("second-on-sim", dataset, [run], [expert], aspects=["relevance"])

    confirm = client.get(f"/runs/{run.pk}/delete/").content.decode()
    assert "on-sim" in confirm and "second-on-sim" in confirm
    assert EvaluatorRun.objects.filter(pk=run.pk).exists()  # a GET deletes nothing
    done = client.post(f"/runs/{run.pk}/delete/", follow=True)
    assert done.status_code == 200
    assert not EvaluatorRun.objects.filter(pk=run.pk).exists()
    assert not Campaign.objects.filter(name__in=["on-sim", "second-on-sim"]).exists()


def test_only_an_admin_deletes_and_only_a_simulated_run(dataset, client, make_user):
    real = factories.run(dataset, "real-run", aspect="relevance")
    client.force_login(make_user("root", role="admin"))
    refused = client.post(f"/runs/{real.pk}/delete/")
    assert refused.status_code == 409 and "real server" in refused.content.decode()
    assert EvaluatorRun.objects.filter(pk=real.pk).exists()
    fake = factories.run(dataset, "fake-run", aspect="relevance", simulated=True)
    client.force_login(make_user("rita", role="researcher"))
    assert client.post(f"/runs/{fake.pk}/delete/").status_code == 403
    assert EvaluatorRun.objects.filter(pk=fake.pk).exists()
