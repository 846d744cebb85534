"""The repair step: an answer that cannot be read, or whose errors lack a location, goes back once to the same
model to be restated; both answers are kept in the call ledger, and a rerun asks nothing again."""

from __future__ import annotations

import pytest

from corpus.models import Annotation
from evaluation.engine.parsing import parse_annotator_answer
from evaluation.engine.repair import REPAIR_REQUEST, needs_repair, repaired_is_better
from evaluation.models import EvaluatorRun, LLMCall, RunCall
from evaluation.runs.attempts import AttemptKind, repair_number
from evaluation.runs.launch import run_create
from jobs.kinds import job_execute
from jobs.models import JobStatus
from tests import factories
from tests.ollama_sim.config import ReplyRule, SimConfig
from tests.ollama_sim.server import OllamaSim

MODEL = "sloppy:7b"
OUTPUT = "Orla Venn scored 31 points on Tuesday night."
NO_LOCATIONS = ("Error 1:\nExplanation: 27 points, not 31.\nSeverity: 4\n\nError 2:\nExplanation: It was Saturday.\n"
                "Severity: 2\n\nOverall score: Fair\nExplanation of the score: Two slips.")
RESTATED = ("Error 1:\nLocation: \"scored 31 points\"\nExplanation: 27 points, not 31.\nSeverity: 4\n\nError 2:\n"
            "Location: \"on Tuesday night\"\nExplanation: It was Saturday.\nSeverity: 2\n\nOverall score: Fair\n"
            "Explanation of the score: Two slips.")


def test_needs_repair_reads_missing_locations_not_declared_omissions() -> None:
    assert needs_repair(parse_annotator_answer(NO_LOCATIONS))
    assert needs_repair(parse_annotator_answer("I would rather not say."))
    omission = ("Error 1:\nLocation: None (omission)\nExplanation: The score is missing.\nSeverity: 3\n"
                "Overall score: Fair")
    assert not needs_repair(parse_annotator_answer(omission))
    assert not needs_repair(parse_annotator_answer(RESTATED))


def test_a_restated_answer_is_used_only_when_it_reads_better() -> None:
    first, fixed = parse_annotator_answer(NO_LOCATIONS), parse_annotator_answer(RESTATED)
    assert repaired_is_better(first, fixed)
    assert not repaired_is_better(first, parse_annotator_answer("Sorry, I cannot."))
    assert not repaired_is_better(fixed, first)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("repair", [True, False])
def test_a_model_that_answers_badly_once_is_asked_to_restate(allow_ollama, repair: bool) -> None:
    dataset = factories.dataset("sloppy", input_headers=["Data"], output_header="Text", items=[
        {"external_id": f"i{n}", "inputs": {"Data": f"box score {n}"}, "output": OUTPUT} for n in range(3)
    ])
    rules = (ReplyRule(model=MODEL, contains=REPAIR_REQUEST, reply=RESTATED),
             ReplyRule(model=MODEL, reply=NO_LOCATIONS))
    with OllamaSim(SimConfig(models=[MODEL], rules=rules)) as sim:
        allow_ollama(sim.url)
        run = run_create(dataset=dataset, aspect_name="accuracy", annotators=[MODEL], ollama_url=sim.url,
                         mode="single", repair=repair)
        assert job_execute(EvaluatorRun, run.pk) == JobStatus.DONE
        asked = sim.stats.requests
        annotations = list(Annotation.objects.filter(source=run, kind="annotator").prefetch_related("spans"))
        assert len(annotations) == 3
        if not repair:
            assert asked == 3
            assert all(a.parse_status == "partial" and a.raw_answer == NO_LOCATIONS for a in annotations)
            return
        assert asked == 6  # one answer and one restatement per item
        for annotation in annotations:
            assert annotation.parse_status == "ok" and annotation.raw_answer == RESTATED
            assert sorted(s.text for s in annotation.spans.all()) == ["on Tuesday night", "scored 31 points"]
            assert any("restated" in p for p in annotation.parse_problems)
        # both answers are in the ledger, the restatement with its own prompt
        assert LLMCall.objects.filter(model=MODEL, response=NO_LOCATIONS).count() == 3
        assert set(RunCall.objects.filter(run=run).values_list("attempt", flat=True)) == {0, repair_number(0)}
        assert {c.attempt_kind for c in RunCall.objects.filter(run=run)} == {AttemptKind.FIRST, AttemptKind.REPAIR}
        repair_calls = LLMCall.objects.filter(model=MODEL, response=RESTATED)
        assert repair_calls.count() == 3 and all(REPAIR_REQUEST in c.prompt and NO_LOCATIONS in c.prompt
                                             for c in repair_calls)
        # a second run of the same configuration asks nothing: the answers and their repairs are cached
        again = run_create(dataset=dataset, aspect_name="accuracy", annotators=[MODEL], ollama_url=sim.url,
                           mode="single")
        assert job_execute(EvaluatorRun, again.pk) == JobStatus.DONE
        assert sim.stats.requests == asked
        assert all(a.raw_answer == RESTATED for a in Annotation.objects.filter(source=again, kind="annotator"))
