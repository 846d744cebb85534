"""The API script of docs/guides/api.md, run as written against a live server, a real worker and simulated Ollama."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from celery import current_app

from accounts.services.tokens import token_create
from corpus.models import Annotation
from tests import factories
from tests.conftest import REPO
from tests.ollama_sim.config import SimConfig
from tests.ollama_sim.process import SimProcess

pytestmark = pytest.mark.integration
MODELS = ["ann-a:1b", "ann-b:1b"]


def _script() -> str:
    page = (REPO / "docs" / "guides" / "api.md").read_text()
    found = re.search(r"<!-- readme-script -->\n```python\n(.*?)```", page, re.S)
    assert found, "docs/guides/api.md lost its script"
    return found.group(1)


def test_readme_script_imports_preannotates_waits_and_downloads(
    celery_worker_factory, live_server, settings, tmp_path, monkeypatch
):
    exports = tmp_path / "exports"
    settings.EXPORT_DIR = exports
    items = tmp_path / "summaries.jsonl"
    items.write_text("".join(
        json.dumps({"id": f"s{i}", "inputs": {"Article": f"The council met on day {i} and voted on the budget."},
                    "outputs": {"Summary": f"The council voted on the budget on day {i}."}}) + "\n"
        for i in range(3)
    ))
    (tmp_path / "example.py").write_text(_script())
    with SimProcess(SimConfig(models=MODELS, parallel=2, call_time=0.01, swap_cost=0.01)) as sim:
        settings.OLLAMA_URL = sim.url
        settings.OLLAMA_URLS = [sim.url]  # a job given no server uses every known server
        worker = celery_worker_factory({"SPANJUDGE_EXPORT_DIR": str(exports)}).start()
        monkeypatch.setitem(current_app.conf, "task_default_queue", worker.queue)
        token = token_create(user=factories.user("scripter", role="admin"))
        env = dict(os.environ, SPANJUDGE_URL=live_server.url, SPANJUDGE_TOKEN=token, MODELS=",".join(MODELS))
        done = subprocess.run(
            [sys.executable, "example.py", str(items), "council", "summarization", "relevance"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240,
        )
    assert done.returncode == 0, done.stderr[-3000:] + worker.log.read_text()[-2000:]
    assert re.search(r"run \S+ done", done.stdout), done.stdout
    export = next(tmp_path.glob("*-council-export*.jsonl"))
    records = [json.loads(line) for line in export.read_text().splitlines()]
    assert {r["item_id"] for r in records} == {"s0", "s1", "s2"}
    assert any(a["kind"] == "ensemble" for r in records for a in r["annotations"])
    card = json.loads(next(tmp_path.glob("*-council-export*.jsonl.card.json")).read_text())
    assert card["counts"]["items"] == 3 and card["runs"][0]["models"]
    assert Annotation.objects.filter(kind="ensemble", item__dataset__name="council").count() == 3
