"""`--answer-format json`: the schema of our error list goes to Ollama's `format` and the OpenAI-compatible
`response_format`, and the JSON answer is read by the same parser."""

from __future__ import annotations

import json

import pytest

from corpus.models import Annotation
from evaluation.engine.answer_schema import ERROR_LIST_SCHEMA, JSON_ANSWER_NOTE
from evaluation.llm.openai_backend import OpenAICompatBackend, request_options
from evaluation.llm.policy import RetryPolicy
from evaluation.models import EvaluatorRun, LLMCall
from evaluation.runs.launch import LaunchError, run_create
from jobs.kinds import job_execute
from jobs.models import JobStatus
from tests import factories
from tests.ollama_sim.config import ReplyRule, SimConfig
from tests.ollama_sim.server import OllamaSim

MODEL = "strict:7b"
OUTPUT = "Orla Venn scored 31 points on Tuesday night."
ANSWER = json.dumps({"errors": [{"location": "scored 31 points", "explanation": "27 points.", "severity": 4}],
                     "overall_score": "Fair", "explanation_of_the_score": "One slip."})


def test_openai_compatible_requests_carry_the_schema_as_response_format() -> None:
    fields, _ = request_options({"temperature": 0.0, "format": ERROR_LIST_SCHEMA})
    assert fields["response_format"] == {"type": "json_schema",
                                         "json_schema": {"name": "answer", "schema": ERROR_LIST_SCHEMA}}
    with OllamaSim(SimConfig(models=[MODEL], rules=(ReplyRule(reply=ANSWER),))) as sim, \
            OpenAICompatBackend(sim.url, timeout=10, policy=RetryPolicy(transport_retries=0)) as backend:
        backend.chat(MODEL, "Judge this.", options={"temperature": 0.0, "format": ERROR_LIST_SCHEMA})
        (record,) = sim.stats.log
        assert record.answer_format["json_schema"]["schema"] == ERROR_LIST_SCHEMA


@pytest.mark.django_db(transaction=True)
def test_a_json_format_run_sends_the_schema_and_reads_the_answer(allow_ollama) -> None:
    dataset = factories.dataset("strict", input_headers=["Data"], output_header="Text", items=[
        {"external_id": "i0", "inputs": {"Data": "box score"}, "output": OUTPUT}])
    with OllamaSim(SimConfig(models=[MODEL], rules=(ReplyRule(model=MODEL, reply=ANSWER),))) as sim:
        allow_ollama(sim.url)
        with pytest.raises(LaunchError, match="expected one of text, json"):
            run_create(dataset=dataset, aspect_name="accuracy", annotators=[MODEL], ollama_url=sim.url,
                       mode="single", answer_format="yaml")
        run = run_create(dataset=dataset, aspect_name="accuracy", annotators=[MODEL], ollama_url=sim.url,
                         mode="single", answer_format="json")
        assert job_execute(EvaluatorRun, run.pk) == JobStatus.DONE
        (record,) = sim.stats.log
        assert record.answer_format == ERROR_LIST_SCHEMA  # Ollama's top-level `format`
    (annotation,) = Annotation.objects.filter(source=run, kind="annotator")
    assert annotation.parse_status == "ok" and annotation.score == 3.0
    assert [s.text for s in annotation.spans.all()] == ["scored 31 points"]
    call = LLMCall.objects.get(model=MODEL)
    assert call.options["format"] == ERROR_LIST_SCHEMA and call.prompt.endswith(JSON_ANSWER_NOTE)
