"""The worked paths, as written: every bash block of the docs' first run on your data, in order, in a shell,
and the commands of the README's ten minutes with the demo.

The blocks run in the checkout with HOME in a temporary folder (they write `~/...` files), against the test
database and a real Celery worker on Redis. Step 3 starts the simulated Ollama itself, exactly as the page
says. Step 4 talks to "a real Ollama server": here a second simulated server named by OLLAMA_URL, with the
`ollama` command replaced by a shell function that records what it was asked to pull. The browser steps
(5: a campaign, then an expert's verdicts; 6: analytics) go through the same pages and API in-process.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import re
import signal
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client

from accounts.models import User
from annotator.models import Assignment, Campaign
from annotator.services.campaigns import DEFAULT_GUIDELINES
from corpus.models import Annotation, Dataset
from evaluation.engine.presets import PRESETS
from evaluation.models import EvaluatorRun
from jobs.models import JobStatus
from tests.conftest import REPO
from tests.integration.conftest import _database_url
from tests.ollama_sim.config import SimConfig
from tests.ollama_sim.process import SimProcess

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

README = REPO / "README.md"
WORKED_PATH = REPO / "docs" / "getting-started" / "first-real-run.md"
TEN_MINUTES = "## Ten minutes with the demo"
# What the reader runs before either path starts (the README's first command): this test does its parts itself.
RUN_COMMAND = "bash scripts/run.sh"
DEMO = "Demo: restaurants (data-to-text)"
DATASET = "My restaurants"
PASSWORD = "demo-pass-2026"
# Leaves no background job behind when a block fails halfway (step 3 starts the simulation with `&`).
PRELUDE = """set -euo pipefail
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT
ollama() { echo "ollama $*" >> "$HOME/ollama.log"; }
"""


def readme_blocks() -> list[tuple[str, str]]:
    """Return (step heading, code) for every bash block of the worked path, in page order."""
    section = WORKED_PATH.read_text()
    blocks, heading = [], ""
    for match in re.finditer(r"^## ([^\n]+)$|^```bash\n(.*?)^```$", section, re.MULTILINE | re.DOTALL):
        if match.group(1):
            heading = match.group(1)
        else:
            blocks.append((heading, match.group(2)))
    return blocks


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _sign_in(client: Client, username: str) -> None:
    """Through the login page, as the reader does (django-axes checks every attempt)."""
    response = client.post("/accounts/login/", {"username": username, "password": PASSWORD})
    assert response.status_code == 302, response.content.decode()[:500]


def _run(code: str, env: dict[str, str]) -> str:
    """Run one documented block with bash. Output goes to files, not pipes, so a background process of the block
    that outlives bash cannot hold the test; whatever is left of the block's session is killed afterwards."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(["bash", "-c", PRELUDE + code], cwd=REPO, env=env, stdout=out, stderr=err,
                                start_new_session=True)
        try:
            returncode = proc.wait(timeout=180)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    assert returncode == 0, f"documented block failed:\n{code}\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    return stdout


def test_readme_worked_path_blocks_cover_every_command_step():
    steps = [heading.split(".")[0] for heading, _ in readme_blocks()]
    assert steps == ["1", "2", "3", "4", "7"]  # 5 and 6 are browser steps, exercised below through the pages
    laptop = PRESETS["laptop"]
    pulls = re.findall(r"^ollama pull (\S+)$", dict(readme_blocks())["4. Run against a real Ollama server (the "
                                                                     "`laptop` preset)"], re.MULTILINE)
    assert set(pulls) == {*laptop.annotators, laptop.supervisor}


def test_readme_worked_path_runs_as_written(celery_worker_factory, tmp_path: Path):
    call_command("load_demo")  # what `bash scripts/run.sh` does before the worked path starts
    blocks = dict(readme_blocks())
    laptop = PRESETS["laptop"]
    sim_port = _free_port()  # the documented 11435 may be taken on a shared machine
    with SimProcess(SimConfig(models=[*laptop.annotators, laptop.supervisor])) as real_ollama:
        worker = celery_worker_factory().start()
        # A clean shell, as in the reader's second terminal: nothing of this test run's environment (no
        # DJANGO_SECRET_KEY, no DJANGO_DEBUG) except where this test's own servers are: its database and
        # worker queue (the reader's commands find run.sh's defaults) and the "real" Ollama (the reader's
        # is at the default address).
        env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "LANG": "C.UTF-8", "PYTHONUNBUFFERED": "1",
               "DATABASE_URL": _database_url(), "DATABASE_CONN_MAX_AGE": "0",
               "CELERY_BROKER_URL": os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0"),
               "CELERY_QUEUE": worker.queue, "OLLAMA_URL": real_ollama.url}
        _run("bash scripts/local_env.sh", env)  # what `bash scripts/run.sh` does on its first start
        outputs = {}
        for heading, code in blocks.items():
            if heading.startswith("7."):
                continue
            outputs[heading[:1]] = _run(code.replace("11435", str(sim_port)), env)

        # 1. The file was written and imported: three items, the gold span where the page says.
        dataset = Dataset.objects.get(name=DATASET)
        assert dataset.task.slug == "data-to-text" and dataset.items.count() == 3
        gold = Annotation.objects.get(item__dataset=dataset, kind="gold")
        assert [s.text for s in gold.spans.all()] == ["where children are welcome"]
        # 2. Aspect names, then the definitions of one task.
        assert "accuracy" in outputs["2"] and "summarization" in outputs["2"]
        assert "accuracy: Whether the facts in the text" in outputs["2"]
        # 3. A simulated laptop-preset run, finished; its explanations say they are simulated; the server is gone.
        simulated = EvaluatorRun.objects.get(dataset=dataset, ollama_url=f"http://127.0.0.1:{sim_port}")
        assert simulated.status == JobStatus.DONE and simulated.config["preset"] == "laptop"
        assert f"Run {simulated.label} (id {simulated.pk})" in outputs["3"] and "preset laptop" in outputs["3"]
        explanations = [s.explanation for a in Annotation.objects.filter(source=simulated, kind="annotator")
                        for s in a.spans.all()]
        assert explanations and all(e.startswith("(simulated)") for e in explanations)
        with socket.socket() as sock:
            assert sock.connect_ex(("127.0.0.1", sim_port)) != 0, "`kill %1; wait` left the simulation running"
        # 4. Exactly the preset's models were pulled, then a worker ran the ensemble against OLLAMA_URL.
        pulled = (tmp_path / "ollama.log").read_text().splitlines()
        assert pulled == [f"ollama pull {m}" for m in dict.fromkeys([*laptop.annotators, laptop.supervisor])]
        real = EvaluatorRun.objects.get(dataset=dataset, ollama_url=real_ollama.url)
        assert real.status == JobStatus.DONE and real.config["annotators"] == list(laptop.annotators)
        assert f"{real.label}: done; 15/15 steps" in outputs["4"]

    # 5. The researcher opens a campaign on the real run; expert1 judges every machine error of its queue.
    researcher, expert = Client(), Client()
    _sign_in(researcher, "researcher")
    page = researcher.get("/campaigns/new/", {"dataset": dataset.pk})
    assert real.label in page.content.decode()
    response = researcher.post("/campaigns/new/", {
        "name": "My first campaign", "dataset": dataset.pk, "runs": [real.pk], "aspects": ["accuracy"],
        "annotators": [User.objects.get(username=u).pk for u in ("expert1", "expert2")],
        "annotators_per_item": 2, "seed": 0, "guidelines": DEFAULT_GUIDELINES, "control_items": "",
    })
    campaign = Campaign.objects.get(name="My first campaign")
    assert response.status_code == 302 and response.url == f"/campaigns/{campaign.pk}/"
    _sign_in(expert, "expert1")
    assert "My first campaign" in expert.get("/").content.decode()
    judged = 0
    for assignment in Assignment.objects.filter(campaign=campaign, annotator__username="expert1"):
        detail = expert.get(f"/api/assignments/{assignment.pk}").json()
        for error in detail["errors"]:
            saved = expert.post(f"/api/assignments/{assignment.pk}/judgments", {
                "span_id": error["span_id"], "span_verdict": "error", "explanation_verdict": "correct",
            }, content_type="application/json")
            assert saved.status_code == 200, saved.content
            judged += 1
        assert expert.post(f"/api/assignments/{assignment.pk}/finish", {}, content_type="application/json"
                           ).status_code == 200
    assert judged > 0

    # 6. The analytics page answers, and the accuracy table counts expert1's verdicts.
    assert researcher.get(f"/analytics/campaigns/{campaign.pk}/").status_code == 200
    table = researcher.get(f"/api/analytics/campaigns/{campaign.pk}/tables/accuracy").json()
    (row,) = [r for r in table["rows"] if r["run"] == real.label]
    assert row["judged"] == judged and row["span_ok_pct"] == 100 and row["exp_correct_pct"] == 100

    # 7. Both exports carry expert1's verdicts.
    _run(blocks["7. Export"], env)
    records = [json.loads(line) for line in (tmp_path / "my-restaurants.jsonl").read_text().splitlines()]
    verdicts = [j["span_verdict"] for r in records for a in r["annotations"] for s in a["spans"]
                for j in s["judgments"] if j["annotator"] == "expert1"]
    assert verdicts == ["error"] * judged
    with (tmp_path / "my-restaurants.csv").open(newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if r.get("annotator") == "expert1"]
    assert len(rows) == judged


def ten_minute_blocks() -> list[str]:
    """The bash blocks of the README's ten minutes with the demo, in order."""
    text = README.read_text()
    start = text.index(TEN_MINUTES)
    section = text[start : text.index("\n## ", start + 1)]
    return re.findall(r"^```bash\n(.*?)^```$", section, re.MULTILINE | re.DOTALL)


def test_readme_ten_minutes_runs_as_written(tmp_path: Path):
    call_command("load_demo")  # what the README's first command, `bash scripts/run.sh`, does first
    simulated, export = ten_minute_blocks()
    sim_port = _free_port()
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "LANG": "C.UTF-8", "PYTHONUNBUFFERED": "1",
           "DATABASE_URL": _database_url(), "DATABASE_CONN_MAX_AGE": "0",
           "CELERY_BROKER_URL": os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0")}
    _run("bash scripts/local_env.sh", env)
    out = _run(simulated.replace("11435", str(sim_port)), env)
    # A simulated laptop-preset run over the demo's items, finished; the simulation is gone.
    dataset = Dataset.objects.get(name=DEMO)
    run = EvaluatorRun.objects.get(dataset=dataset, ollama_url=f"http://127.0.0.1:{sim_port}")
    assert run.status == JobStatus.DONE and run.config["preset"] == "laptop"
    # As the README says: one line begins "Run ensemble-N (id N)" (the simulated server printed its address first).
    assert [line for line in out.splitlines() if line.startswith("Run ")] == [
        line for line in out.splitlines() if line.startswith(f"Run {run.label} (id {run.pk})")] != []
    with socket.socket() as sock:
        assert sock.connect_ex(("127.0.0.1", sim_port)) != 0, "`kill %1; wait` left the simulation running"
    # The export holds every demo item with the new run's ensemble annotation on each.
    _run(export, env)
    records = [json.loads(line) for line in (tmp_path / "demo.jsonl").read_text().splitlines()]
    assert {r["item_id"] for r in records} == set(dataset.items.values_list("external_id", flat=True))
    sources = {a["source"] for r in records for a in r["annotations"] if a["kind"] == "ensemble"}
    assert run.label in sources and "sample-ensemble" in sources
