"""The parsing corpus through a whole single-model run: the simulated model answers each item with one of
the corpus's answers (every shape), and the export holds every error with its location text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotator.services.exporting import dataset_records
from bench.parsing_accuracy import DEFAULT_CORPUS, norm
from evaluation.models import EvaluatorRun
from evaluation.runs.launch import run_create
from jobs.kinds import job_execute
from jobs.models import JobStatus
from tests import factories
from tests.ollama_sim.config import ReplyRule, SimConfig
from tests.ollama_sim.server import OllamaSim

pytestmark = pytest.mark.django_db(transaction=True)
MODEL = "shapes:7b"
RECORDS = [json.loads(line) for line in Path(DEFAULT_CORPUS).read_text(encoding="utf-8").splitlines() if line]


def _output(record: dict) -> str:
    """An output that holds every location the answer points at, so each one aligns."""
    return " ".join(f"Then {e['location']} happened." for e in record["errors"]) or "A faultless text."


def test_every_corpus_answer_reads_through_a_single_model_run(allow_ollama):
    dataset = factories.dataset("shapes", input_headers=["Data"], output_header="Text", items=[
        {"external_id": r["id"], "inputs": {"Data": f"record «{r['id']}»"}, "output": _output(r)} for r in RECORDS
    ])
    rules = tuple(ReplyRule(model=MODEL, contains=f"record «{r['id']}»", reply=r["text"]) for r in RECORDS)
    with OllamaSim(SimConfig(models=[MODEL], parallel=4, rules=rules)) as sim:
        allow_ollama(sim.url)
        run = run_create(dataset=dataset, aspect_name="accuracy", annotators=[MODEL], ollama_url=sim.url,
                         mode="single", parallel=4)
        assert job_execute(EvaluatorRun, run.pk) == JobStatus.DONE
        assert sim.stats.requests == len(RECORDS)  # every answer parsed at the first try
    exported = {rec["item_id"]: rec for rec in dataset_records(dataset)}
    missing: list[str] = []
    for record in RECORDS:
        (annotation,) = [a for a in exported[record["id"]]["annotations"] if a["source"] == run.label]
        spans = annotation["spans"]
        texts = sorted(norm(s["text"]) for s in spans)
        if sorted(norm(e["location"]) for e in record["errors"]) != texts:
            missing.append(f"{record['id']}: {texts}")
        assert all(s["start"] is not None and s["match"] != "none" for s in spans), record["id"]
        if record["score"] is not None:
            assert annotation["score"] == record["score"], record["id"]
    assert not missing
