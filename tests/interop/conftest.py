"""Two datasets with string ids and several sources (a person's gold, two models, two experts), built through the
importers. Each dataset has spans in four categories, two people's annotations of every output (source
'experts'), spans without a position (which factgenie and Label Studio cannot hold), explanations and
severities, and an output where a source found nothing.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.core.management import call_command

from corpus.models import ErrorSpan

DATASETS = {
    "Game Summaries A": {
        ("T001", "Sys A"): "The Hawks beat the Nets 102-98 on Monday night at home.",
        ("T002", "Sys A"): "Trae Young scored 30 points and 9 assists today.",
        ("T003", "sys b.2"): "Atlanta led by ten points at the half, then lost.",
        ("T004", "sys b.2"): "Brooklyn lost again on the road.",
    },
    "reviews-2": {
        ("r-alpha", "gpt"): "The soup was cold but the service was quick.",
        ("r-beta", "gpt"): "Great pasta, awful dessert, friendly staff.",
        ("R_3", "llama"): "Parking is free after six in the evening.",
    },
}


def _span(text: str, part: str, category: str, explanation: str = "", severity: int | None = None,
          occurrence: int = 0) -> dict:
    start = -1
    for _ in range(occurrence + 1):
        start = text.index(part, start + 1)
    return {"start": start, "end": start + len(part), "text": part, "category": category,
            "explanation": explanation, "severity": severity}


def _annotations(texts: dict[tuple[str, str], str]) -> dict[str, list[dict]]:
    """Per source, the JSONL records to import: gold by a person, llm-a and llm-b by models."""
    keys = list(texts)
    out: dict[str, list[dict]] = {"gold": [], "llm-a": [], "llm-b": []}
    words = {key: texts[key].split() for key in keys}
    for n, key in enumerate(keys):
        text = texts[key]
        first, second, last = words[key][1], words[key][3], words[key][-1].rstrip(".")
        out["gold"].append({"item_id": key[0], "system": key[1], "spans": [
            _span(text, first, "Incorrect", "wrong name", 3),
            _span(text, last, "Not checkable", "", None),
        ] + ([{"start": None, "end": None, "text": "the coach", "category": "Omission", "explanation": "missing",
               "severity": 2}] if n == 0 else [])})
        out["llm-a"].append({"item_id": key[0], "system": key[1], "model": "llama3.1:8b", "spans": [
            _span(text, first, "Incorrect", "the name is wrong", 4),
            _span(text, second, "Misleading", "misleads", 2),
        ] if n != 2 else []})
        out["llm-b"].append({"item_id": key[0], "system": key[1], "model": "qwen2.5:7b", "spans": [
            _span(text, f"{first} {words[key][2]}", "Not checkable", "cannot check", 1),
        ] + ([{"start": None, "end": None, "text": "a quote", "category": "Incorrect", "explanation": "",
               "severity": None}] if n == 1 else [])})
    return out


def _experts(texts: dict[tuple[str, str], str]) -> list[dict]:
    """A Label Studio project file where two people (alice, bob) annotated every output."""
    tasks = []
    for n, (key, text) in enumerate(texts.items()):
        words = text.split()
        done = []
        for who, part, category in (("alice", words[0], "Incorrect"), ("bob", words[-2], "Misleading")):
            start = text.index(part)
            value = {"start": start, "end": start + len(part), "text": part}
            result = [{"id": "a", "from_name": "label", "to_name": "text", "type": "labels",
                       "value": {**value, "labels": [category]}}]
            if who == "alice":
                result.append({"id": "a", "from_name": "explanation", "to_name": "text", "type": "textarea",
                               "value": {**value, "text": [f"{who} says no"]}})
                result.append({"id": "a", "from_name": "severity", "to_name": "text", "type": "rating",
                               "value": {**value, "rating": 1 + n % 5}})
            done.append({"completed_by": {"email": f"{who}@example.org"}, "result": result})
        tasks.append({"data": {"text": text, "item_id": key[0], "system": key[1]}, "annotations": done})
    return tasks


@dataclass
class Interop:
    datasets: list[str]
    sources: list[str]
    root: Path


def spans_of(dataset: str, source: str) -> list[tuple]:
    """Everything a round trip must keep: item, system, offsets, text, category, explanation, severity, who."""
    return sorted(
        ErrorSpan.objects.filter(annotation__item__dataset__name=dataset, annotation__source__label=source)
        .values_list("annotation__item__external_id", "annotation__item__system", "start", "end", "text", "category",
                     "explanation", "severity", "annotation__model", "annotation__kind"),
        key=repr,
    )


@pytest.fixture
def interop(db, tmp_path) -> Interop:
    for name, texts in DATASETS.items():
        items = tmp_path / f"{name}.jsonl"
        items.write_text("".join(
            json.dumps({"id": key[0], "system": key[1], "inputs": {"data": "d"}, "outputs": {"text": text}}) + "\n"
            for key, text in texts.items()
        ))
        call_command("import_items", str(items), dataset=name, task="data-to-text", stdout=io.StringIO())
        for source, records in _annotations(texts).items():
            path = tmp_path / f"{name}-{source}.jsonl"
            path.write_text("".join(json.dumps(r) + "\n" for r in records))
            call_command("import_annotations", str(path), dataset=name, source=source, stdout=io.StringIO())
        experts = tmp_path / f"{name}-experts.json"
        experts.write_text(json.dumps(_experts(texts)))
        call_command("import_annotations", str(experts), dataset=name, source="experts", format="labelstudio",
                     stdout=io.StringIO())
    return Interop(datasets=list(DATASETS), sources=["gold", "llm-a", "llm-b", "experts"], root=tmp_path)
