"""Issue 21 end to end on a real Celery worker: a run on the `ollama` profile (a separate simulator process)
with long items and one item longer than the model sends no prompt that gets cut, reports the too-long pair,
completes, and `preannotate`'s counts, the API and the export say so."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from corpus.models import Annotation, ParseStatus
from evaluation.models import EvaluatorRun
from evaluation.runs.launch import run_create
from evaluation.selectors import run_problems
from jobs.models import JobStatus
from tasks.jobs import TASKS
from tests import factories
from tests.integration.conftest import celery_worker_factory, wait_for  # noqa: F401 - the worker fixture
from tests.ollama_sim.config import SimConfig
from tests.ollama_sim.process import SimProcess

pytestmark = pytest.mark.integration

ANNOTATORS = ["ann-a:1b", "ann-b:1b"]
SUPERVISOR = "sup:1b"
SENTENCE = "The home team scored 23 points in the third quarter while the guests missed 7 of 9 attempts. "


def test_worker_run_on_the_ollama_profile_cuts_nothing_and_reports_the_too_long_pair(
    celery_worker_factory, allow_ollama, tmp_path,  # noqa: F811
):
    dataset = factories.dataset("rw", input_headers=["Data"], output_header="Text", items=[
        {"external_id": f"g{i}", "inputs": {"Data": f"game {i}"}, "output": SENTENCE * n}
        for i, n in enumerate([560, 40, 3_000, 600])  # ~9k words over 8192; item g2 exceeds the model
    ])
    config = SimConfig(models=[*ANNOTATORS, SUPERVISOR], parallel=2, profile="ollama", context_length=32_768)
    with SimProcess(config) as sim:
        allow_ollama(sim.url)
        worker = celery_worker_factory().start()
        run = run_create(dataset=dataset, aspect_name="accuracy", annotators=ANNOTATORS, supervisor=SUPERVISOR,
                         ollama_url=sim.url, parallel=2)
        TASKS[EvaluatorRun].apply_async((run.pk,), queue=worker.queue)
        assert wait_for(lambda: EvaluatorRun.objects.get(pk=run.pk).is_finished(), timeout=120), (
            worker.log.read_text()[-3000:]
        )
        run.refresh_from_db()
        assert run.status == JobStatus.DONE, run.message
        stats = sim.stats()
        assert stats.truncated == 0 and stats.refused_too_long == 0  # the simulator's log: nothing was cut
        assert stats.requests == 3 * 3  # the too-long item was never sent
    assert run_problems(run.pk) == {"prompt_too_long": 2, "answer_cut": 0}
    long_ones = Annotation.objects.filter(source=run, kind="annotator", item__external_id="g2")
    assert {a.parse_status for a in long_ones} == {ParseStatus.FAILED}
    others = Annotation.objects.filter(source=run, kind="annotator").exclude(item__external_id="g2")
    assert others.count() == 6 and all(a.parse_status != ParseStatus.FAILED for a in others)

    out = tmp_path / "items.jsonl"
    call_command("export_items", dataset="rw", format="jsonl", output=out, stdout=StringIO())
    records = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    annotations = [a for r in records for a in r["annotations"] if a["source"] == run.label]
    assert annotations and all({"parse_status", "problems"} <= set(a) for a in annotations)
    too_long = [a for a in annotations if any(p.startswith("prompt_too_long:") for p in a["problems"])]
    assert len(too_long) == 2 and {a["parse_status"] for a in too_long} == {"failed"}
