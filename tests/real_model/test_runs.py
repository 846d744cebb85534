"""Pre-annotation runs on a real model (SmolLM2-135M through llama-cpp-python's server): every call stored with the
server's own counts, every answer parsed or kept raw as unparseable, every span's offsets on its text, and a prompt
over the context named per item instead of a crash or a cut.

With SPANJUDGE_COLLECT_ANSWERS=PATH the runs' answers are written there as JSON lines (the source of
tests/data/smollm2_answers.jsonl, which tests/real_model/test_answers.py reads without a server)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from django.core.management import call_command

from corpus.models import Annotation, Dataset, Item, ParseStatus
from evaluation.llm.budget import PROMPT_TOO_LONG
from evaluation.models import EvaluatorRun, LLMCall, RunCall
from evaluation.runs.launch import run_create
from evaluation.selectors import run_problems
from jobs.kinds import job_execute
from jobs.models import JobStatus
from tests import factories
from tests.real_model.conftest import ALIASES, SmallModel

pytestmark = [pytest.mark.real_model, pytest.mark.django_db(transaction=True)]

DEMO = "Demo: restaurants (data-to-text)"
ITEMS = 4  # demo outputs per run: the tier's time budget (scripts/test.sh) is 15 minutes on 2 cores, build included


@pytest.fixture
def tier_settings(settings, small_model: SmallModel):
    """The product's settings for a 135M model on a CPU: short answers, one retry and no repair request (each
    unreadable answer costs one more call, not two), the server allowed as run.sh allows it."""
    settings.LLM_ANSWER_TOKENS = 320
    settings.LLM_RETRY = {"answer_attempts": 2, "repair": False, "backoff": 0.1}
    settings.OLLAMA_URLS = [small_model.server]
    settings.OLLAMA_PARALLEL = 1  # the server answers one request at a time
    return settings


def _demo_items(n: int = ITEMS) -> list[int]:
    call_command("load_demo", stdout=open(os.devnull, "w"))  # noqa: SIM115 - closed with the process
    return list(Item.objects.filter(dataset__name=DEMO).order_by("pk").values_list("pk", flat=True)[:n])


def _run(small_model: SmallModel, *, dataset: Dataset, aspect: str, item_ids: list[int], mode: str,
         annotators: list[str], supervisor: str | None = None) -> EvaluatorRun:
    run = run_create(dataset=dataset, aspect_name=aspect, annotators=annotators, supervisor=supervisor,
                     ollama_url=small_model.server, mode=mode, item_ids=item_ids, parallel=1)
    status = job_execute(EvaluatorRun, run.pk)
    run.refresh_from_db()
    assert status == JobStatus.DONE, run.message
    return run


def _check_calls(run: EvaluatorRun, small_model: SmallModel) -> None:
    """Every call of the run carries the server's own counts: the prompt's tokens as its tokenizer counts them
    plus one fixed chat-template overhead (our estimate would differ from item to item)."""
    calls = LLMCall.objects.filter(run_calls__run=run).distinct()
    assert calls.exists()
    overheads = set()
    for call in calls:
        assert call.status == LLMCall.Status.OK, call.error
        assert call.prompt_tokens and call.completion_tokens is not None and call.done_reason in ("stop", "length")
        assert call.cached_tokens is None  # the server reports no cache
        overheads.add(call.prompt_tokens - small_model.tokens(call.prompt, call.model))
    assert len(overheads) == 1 and 0 < overheads.pop() < 64


def _check_annotations(run: EvaluatorRun) -> list[Annotation]:
    """Every answer parsed, or kept raw and marked unparseable; every located span cuts its own text."""
    annotations = list(Annotation.objects.filter(source=run.source).select_related("item").prefetch_related("spans"))
    assert annotations
    for annotation in annotations:
        if annotation.kind in ("annotator", "supervisor"):  # the ensemble's merged list has no answer of its own
            assert annotation.raw_answer.strip() or any(
                str(p).startswith(PROMPT_TOO_LONG) for p in annotation.parse_problems), annotation.pk
        assert annotation.parse_status in (ParseStatus.OK, ParseStatus.PARTIAL, ParseStatus.FAILED)
        if annotation.parse_status == ParseStatus.FAILED and annotation.kind in ("annotator", "supervisor"):
            assert annotation.parse_problems and not annotation.spans.exists()  # kept raw, with the reasons
        for span in annotation.spans.all():
            if span.start is not None:  # offsets on the output; an exact match cuts the words the model wrote
                assert 0 <= span.start < span.end <= len(annotation.item.output)
                assert span.match != "exact" or annotation.item.output[span.start:span.end] in span.text, span.pk
            else:
                assert span.match == "none"
    return annotations


def _collect(run: EvaluatorRun) -> None:
    target = os.environ.get("SPANJUDGE_COLLECT_ANSWERS")
    if not target:
        return
    with Path(target).open("a") as out:
        for rc in RunCall.objects.filter(run=run).select_related("item", "call").order_by("pk"):
            out.write(json.dumps({
                "item": rc.item.external_id, "system": rc.item.system, "aspect": run.aspect.name,
                "mode": run.config["mode"], "role": rc.role, "model": rc.model, "attempt": rc.attempt,
                "prompt_tokens": rc.call.prompt_tokens, "completion_tokens": rc.call.completion_tokens,
                "done_reason": rc.call.done_reason, "answer": rc.call.response,
            }) + "\n")


@pytest.mark.parametrize("aspect", ["accuracy", "fluency"])
def test_a_single_model_run_over_the_demo_reads_every_real_answer_or_keeps_it_raw(
    small_model: SmallModel, tier_settings, aspect: str, tmp_path: Path,
):
    item_ids = _demo_items()
    dataset = Dataset.objects.get(name=DEMO)
    run = _run(small_model, dataset=dataset, aspect=aspect, item_ids=item_ids, mode="single",
               annotators=[ALIASES[0]])
    _collect(run)
    _check_calls(run, small_model)
    annotations = _check_annotations(run)
    assert len(annotations) == len(item_ids) and run.done == run.total
    assert run.failed_calls == sum(a.parse_status == ParseStatus.FAILED for a in annotations)
    # The export says what was read: each parsed answer's spans, none for an unparseable one.
    exported = [json.loads(line) for line in _export(dataset, tmp_path) if json.loads(line)["aspect"] == aspect]
    by_output = {(r["item_id"], r["system"]): r for r in exported}
    for annotation in annotations:
        record = by_output[(annotation.item.external_id, annotation.item.system)]
        ours = [a for a in record["annotations"] if a["source"] == run.label]
        assert len(ours) == 1 and len(ours[0]["spans"]) == annotation.spans.count()
        assert ours[0]["parse_status"] == annotation.parse_status  # an unreadable answer is exported as such


def _export(dataset: Dataset, folder: Path) -> list[str]:
    target = folder / "export.jsonl"
    call_command("export_items", dataset=dataset.name, format="jsonl", output=target)
    return [line for line in target.read_text().splitlines() if line.strip()]


def test_an_ensemble_of_the_same_model_under_two_names_runs_to_the_end(small_model: SmallModel, tier_settings):
    item_ids = _demo_items(2)
    dataset = Dataset.objects.get(name=DEMO)
    run = _run(small_model, dataset=dataset, aspect="accuracy", item_ids=item_ids, mode="ensemble",
               annotators=list(ALIASES), supervisor=ALIASES[0])
    _collect(run)
    _check_calls(run, small_model)
    annotations = _check_annotations(run)
    models = {a.model for a in annotations}
    assert set(ALIASES) <= models  # both names answered, each as itself
    kinds = {a.kind for a in annotations}
    assert "annotator" in kinds


def test_an_item_over_the_context_is_named_and_the_others_are_answered(small_model: SmallModel, tier_settings):
    box = _rotowire_size_box_score()
    dataset = factories.dataset("real-long", task="data-to-text", input_headers=["Data"], output_header="Text", items=[
        {"external_id": "short", "inputs": {"Data": "name[Blue Door] | food[Thai]"},
         "output": "Blue Door serves Thai food."},
        {"external_id": "box-score", "inputs": {"Data": box},
         "output": "The Herons beat the Foxes 101-97 behind 31 points from their guard."},
    ])
    run = _run(small_model, dataset=dataset, aspect="accuracy", mode="single", annotators=[ALIASES[0]],
               item_ids=list(dataset.items.values_list("pk", flat=True)))
    assert small_model.tokens(box) > 2048
    long_one = Annotation.objects.get(source=run.source, item__external_id="box-score")
    short = Annotation.objects.get(source=run.source, item__external_id="short")
    assert any(str(p).startswith(f"{PROMPT_TOO_LONG}:") for p in long_one.parse_problems), long_one.parse_problems
    assert not long_one.spans.exists()
    assert short.raw_answer.strip() and not any(str(p).startswith(PROMPT_TOO_LONG) for p in short.parse_problems)
    assert run_problems(run)[PROMPT_TOO_LONG] == 1


def _rotowire_size_box_score() -> str:
    """A box score as long as a RotoWire one (26 players x 16 columns, about 13k characters), invented."""
    columns = ["MIN", "PTS", "FGM", "FGA", "FG_PCT", "FG3M", "FG3A", "FG3_PCT", "FTM", "FTA", "FT_PCT", "OREB",
               "DREB", "REB", "AST", "STL"]
    players = {}
    for p in range(26):
        players[f"Player {p:02d} of the {'Herons' if p < 13 else 'Foxes'}"] = {
            c: str((p * 7 + i * 13) % 41) for i, c in enumerate(columns)}
    return json.dumps({"home_name": "Herons", "vis_name": "Foxes", "box_score": players})


def test_the_tiny_preset_asks_for_structured_answers_the_way_this_server_takes_them(
    small_model: SmallModel, tier_settings,
):
    """llama-cpp-python refuses response_format json_schema (HTTP 500 with its validation error): the run falls
    back to json_object with the schema, once, and runs to its end; as the small model's server it is sent one
    request at a time whatever the run asks."""
    tier_settings.SMALL_MODEL_URL = small_model.server
    item_ids = _demo_items(3)
    dataset = Dataset.objects.get(name=DEMO)
    run = run_create(dataset=dataset, aspect_name="accuracy", preset="tiny", mode="single",
                     ollama_url=small_model.server, item_ids=item_ids, parallel=4)
    assert run.config["answer_format"] == "json" and run.config["options"]["format"]
    assert run.placement["servers"][0]["parallel"] == 1
    status = job_execute(EvaluatorRun, run.pk)
    run.refresh_from_db()
    assert status == JobStatus.DONE, run.message
    annotations = _check_annotations(run)
    answers = [a for a in annotations if a.kind == "annotator"]
    assert len(answers) == 3
    # The grammar holds the answer to the schema: each answer is a JSON object the parser reads at least in part.
    assert all(json.loads(a.raw_answer) is not None for a in answers if a.parse_status != ParseStatus.FAILED)
    assert any(a.parse_status != ParseStatus.FAILED for a in answers)
    # The preset's bounds hold where the grammar enforces them: every answer whole within the 320 tokens (none
    # cut and asked again), at most 3 errors, each severity 1-5 (an enum: the converter ignores min/max).
    for answer in answers:
        errors = json.loads(answer.raw_answer)["errors"]
        assert len(errors) <= 3 and all(error["severity"] in (1, 2, 3, 4, 5) for error in errors), answer.raw_answer
        assert all(len(error["explanation"]) <= 160 and len(error["location"]) <= 80 for error in errors)
