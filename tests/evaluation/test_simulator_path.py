"""The GPU-less path: the simulator started by run.sh, offered in every LLM form, and honest time estimates."""

from __future__ import annotations

import io
import os
import re
import signal
import socket
import subprocess
import time

import httpx
import pytest
from django.core.management import call_command

from comparison.models import ComparisonJob
from dhp.models import DhpRun
from evaluation.models import EvaluatorRun
from evaluation.runs.backends import SIMULATOR_LABEL, allowed_server_names
from tests import factories
from tests.conftest import REPO
from tests.ollama_sim import OllamaSim, SimConfig

pytestmark = pytest.mark.django_db(transaction=True)
MODEL = "m-a:1b"


@pytest.fixture
def simulator(settings):
    """The simulator as run.sh offers it: SPANJUDGE_SIMULATOR_URL, not the loopback allowance of the tests."""
    settings.LLM_ALLOW_LOOPBACK = False
    with OllamaSim(SimConfig(models=[MODEL])) as sim:
        settings.SIMULATOR_URL = sim.url
        yield sim


@pytest.fixture
def dataset():
    return factories.dataset("path-news", task="summarization", input_headers=["Article"], output_header="Summary",
                             score_aspects=["relevance"],
                             items=[{"external_id": str(i), "inputs": {"Article": f"Story {i}."},
                                     "output": f"A summary number {i} of the story.", "human_scores": {"relevance": i}}
                                    for i in range(3)])


def test_the_simulator_url_is_allowed_and_nothing_else_is(simulator, settings):
    assert simulator.url in allowed_server_names()
    settings.SIMULATOR_URL = ""
    assert simulator.url not in allowed_server_names()


@pytest.mark.strict_allowlist
def test_run_dhp_and_comparison_forms_offer_and_use_the_simulated_server(simulator, dataset, client, make_user):
    client.force_login(make_user("root", role="admin"))
    label = f"{SIMULATOR_LABEL}: {simulator.url}"
    for path in ("/runs/new/", "/dhp/runs/new/", "/comparisons/new/"):
        page = client.get(path).content.decode()
        assert f'<option value="{simulator.url}">{label}</option>' in page, path
    made = client.post("/runs/new/", {"dataset": dataset.pk, "aspect": "relevance", "annotators": MODEL,
                                      "server": simulator.url, "parallel": 1, "mode": "single",
                                      "outlier_rule": "leave_one_out", "preset": "laptop"})
    assert made.status_code == 302, made.content.decode()[-2000:]
    run = EvaluatorRun.objects.get()
    assert run.servers == [simulator.url] and run.simulated is True
    made = client.post("/comparisons/new/", {"dataset": dataset.name, "metrics": f"annotator:{MODEL}",
                                             "aspects": "relevance", "server": simulator.url})
    assert made.status_code == 302, made.content.decode()[-2000:]
    job = ComparisonJob.objects.get()
    assert job.options["ollama_url"] == simulator.url and job.simulated is True
    made = client.post("/dhp/runs/new/", {"dataset": dataset.pk, "evaluator": MODEL, "metrics": "relevance",
                                          "kinds": ["typo:minor"], "samples": 1, "seed": 0,
                                          "ollama_url": simulator.url, "preset": "laptop"})
    assert made.status_code == 302, made.content.decode()[-2000:]
    assert DhpRun.objects.get().simulated is True


def test_run_and_dhp_forms_default_to_the_laptop_preset(client, make_user):
    client.force_login(make_user("root", role="admin"))
    for path in ("/runs/new/", "/dhp/runs/new/"):
        page = client.get(path).content.decode()
        assert re.search(r'<option value="laptop"[^>]*selected', page), path


def test_preannotate_says_a_simulated_run_has_no_real_time_estimate(simulator, dataset):
    out = io.StringIO()
    call_command("preannotate", dataset="path-news", aspect="relevance", annotators=MODEL, mode="single",
                 ollama_url=simulator.url, sync=True, stdout=out)
    text = out.getvalue()
    assert f"{simulator.url}: {MODEL} (simulated server: no model runs, so no real time estimate)" in text
    assert "about " not in text


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.integration
def test_run_sh_with_the_simulator_starts_it_allowlisted_and_says_where(tmp_path):
    """run.sh --simulator as a newcomer starts it (embedded SQLite and broker, as on a fresh clone)."""
    dropped = ("DATABASE_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    port = _free_port()
    env.update(PORT=str(port), SPANJUDGE_SIMULATOR="1")
    out = tmp_path / "out.txt"
    with out.open("w") as handle:
        proc = subprocess.Popen(["bash", "scripts/run.sh"], cwd=REPO, env=env, stdout=handle,
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        url = None
        while time.monotonic() < deadline and url is None:
            found = re.search(r"Simulated server \(no model\) at (http://127\.0\.0\.1:\d+):", out.read_text())
            url = found.group(1) if found else None
            time.sleep(0.5)
        assert url, out.read_text()[-3000:]
        version = httpx.get(f"{url}/api/version", timeout=10)
        assert version.json()["simulated"] is True
        while time.monotonic() < deadline:  # the app answers once runserver is up
            try:
                login = httpx.get(f"http://127.0.0.1:{port}/accounts/login/", timeout=5)
                break
            except httpx.HTTPError:
                time.sleep(1)
        assert login.status_code == 200
        text = out.read_text()
        assert "researcher: datasets, campaigns, analytics, exports (sees runs, cannot start LLM jobs)" in text
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    with pytest.raises(httpx.HTTPError):  # the simulator went with the app
        time.sleep(1)
        httpx.get(f"{url}/api/version", timeout=3)
