"""Tests of the task and aspect catalogue."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluation.engine.aspects import ASPECTS, AspectSpec
from evaluation.engine.tasks import TASKS

# made-up samples shaped like the meta-eval files, one per task (tests/data/README.md)
SAMPLE_META_EVAL = Path(__file__).resolve().parents[1] / "data" / "meta_eval"

# human-score keys of the meta-evaluation files and the task each belongs to
SCORE_KEYS = {
    "summarization": {"factual consistency"},
    "data-to-text": {"informativeness", "naturalness"},
    "dialogue": {"naturalness", "groundedness", "coherence", "engagingness"},
    "story-generation": {"relevance", "coherence", "empathy", "engagement", "surprise", "complexity"},
    "simplification": {"fluency", "meaning preservation", "simplicity"},
}
# every aspect Appendix A of the paper lists per task
APPENDIX_A = {
    "summarization": {"consistency", "accuracy", "relevance", "coverage", "coherence", "fluency"},
    "data-to-text": {"faithfulness", "correctness", "coverage", "informativeness", "fluency",
                     "grammaticality", "naturalness"},
    "dialogue": {"coherence", "relevance", "appropriateness", "empathy", "interestingness", "engagingness",
                 "fluency", "understandability"},
    "story-generation": {"relevance", "coherence", "engagement", "empathy", "surprise", "complexity"},
    "question-answering": {"correctness", "informativeness", "completeness", "conciseness", "relevance",
                           "factuality", "faithfulness", "fluency", "naturalness", "grammaticality"},
}


def _aspects_of(task: str) -> list[AspectSpec]:
    return [a for a in ASPECTS if a.task == task]


def _aspect(task: str, name: str) -> AspectSpec:
    (aspect,) = (a for a in ASPECTS if (a.task, a.name) == (task, name))
    return aspect


def test_tasks_cover_the_seven_slugs() -> None:
    assert set(TASKS) == {
        "data-to-text", "summarization", "dialogue", "story-generation", "question-answering",
        "simplification", "translation",
    }
    assert TASKS["dialogue"].output_noun == "response"


@pytest.mark.parametrize("task", sorted(APPENDIX_A))
def test_aspects_include_appendix_a(task: str) -> None:
    assert APPENDIX_A[task] <= {a.name for a in _aspects_of(task)}


@pytest.mark.parametrize("task", sorted(SCORE_KEYS))
def test_aspects_include_meta_eval_score_keys(task: str) -> None:
    assert SCORE_KEYS[task] <= {a.name for a in _aspects_of(task)}


def test_meta_eval_files_use_these_keys(meta_eval_dir: Path) -> None:
    files = {"qags": "summarization", "sfres": "data-to-text", "sfhot": "data-to-text",
             "topical_chat": "dialogue", "hanna": "story-generation", "wiki_da": "simplification"}
    for name, task in files.items():
        items = json.loads((meta_eval_dir / f"{name}.json").read_text())
        for key in items[0]["score"]:
            assert _aspect(task, key).name == key


@pytest.mark.parametrize("task", ["dialogue", "simplification", "summarization"])
def test_sample_meta_eval_files_use_these_keys(task: str) -> None:
    items = json.loads((SAMPLE_META_EVAL / f"{task}.json").read_text())
    assert {key for item in items for key in item["score"]} == SCORE_KEYS[task]
    for key in items[0]["score"]:
        assert _aspect(task, key).name == key


def test_extra_aspects_present() -> None:
    assert _aspect("data-to-text", "accuracy").task == "data-to-text"
    assert {"accuracy", "fluency", "terminology", "style"} <= {a.name for a in _aspects_of("translation")}


def test_aspect_invariants() -> None:
    seen = set()
    for aspect in ASPECTS:
        assert aspect.task in TASKS
        assert aspect.name == aspect.name.lower().strip()
        assert (aspect.task, aspect.name) not in seen
        seen.add((aspect.task, aspect.name))
        same_task = {a.name for a in _aspects_of(aspect.task)}
        assert aspect.name not in aspect.confused_with
        assert set(aspect.confused_with) <= same_task, aspect
        assert aspect.definition and aspect.lowest and aspect.highest and len(aspect.steps) >= 3


def test_form_aspects_are_output_only_and_content_aspects_are_not() -> None:
    for aspect in ASPECTS:
        if aspect.name in {"fluency", "grammaticality"}:
            assert aspect.output_only, aspect
    assert not _aspect("summarization", "factual consistency").output_only
    assert not _aspect("dialogue", "groundedness").output_only
