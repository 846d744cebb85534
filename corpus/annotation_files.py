"""Other tools' annotation files: readers for our JSONL, factgenie campaigns and Label Studio exports.

No Django here. Each reader yields one `RawAnnotation` per (output, annotator) in a common shape; the
import service matches it to an item and resolves its spans with `resolve_span`, which either returns
a span record or raises a FormatError saying what is wrong with it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from corpus.formats import MAX_DEPTH, FormatError, SpanRecord, check_depth, check_text, iter_objects

FORMATS = ("jsonl", "factgenie", "labelstudio")
# how far past `start + len(text)` a whitespace-normalized match may end (the text may have lost spaces)
_SLACK = 64


@dataclass
class RawAnnotation:
    """One output's spans by one annotator or model, as a file gives them."""

    where: str
    item_id: str
    system: str
    aspect: str
    model: str
    spans: list[Any]  # dicts with start, end?, text, category?, explanation?, severity?
    output: str | None = None  # the output text the file carries, checked against the item's
    machine: bool = False  # `model` names a model (else a person or nothing)


def read_annotations(path: Path, fmt: str, *, name: str = "") -> Iterator[RawAnnotation]:
    """Yield the annotations of a file (or of a factgenie campaign folder) in format `fmt`."""
    if fmt not in FORMATS:
        raise FormatError("--format", f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")
    if fmt == "factgenie":
        yield from _factgenie(path, name)
    elif fmt == "labelstudio":
        yield from _labelstudio(path, name)
    else:
        yield from _jsonl(path, name)


def _item_id(obj: dict[str, Any], where: str, *keys: str) -> str:
    for key in keys:
        value = obj.get(key)
        if value is not None and not isinstance(value, bool) and isinstance(value, str | int):
            return str(value)
    raise FormatError(where, f"field '{keys[0]}' is missing or not a string/integer")


def _str(obj: dict[str, Any], key: str, where: str, name: str | None = None) -> str:
    value = obj.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise FormatError(where, f"field '{name or key}' must be a string, not {type(value).__name__}")
    return value  # lengths and NULs are checked per record by the importer, so that all problems are listed


def _spans(obj: dict[str, Any], where: str) -> list[Any]:
    spans = obj.get("spans")
    if not isinstance(spans, list):
        raise FormatError(where, "field 'spans' is missing or not a list ([] records that no error was found)")
    return spans


# --- our JSONL -----------------------------------------------------------------------------------------


def _jsonl(path: Path, name: str) -> Iterator[RawAnnotation]:
    for where, obj in iter_objects(path, name=name):
        if not isinstance(obj, dict):
            raise FormatError(where, f"expected a JSON object, found {type(obj).__name__}")
        item_id = _item_id(obj, where, "item_id", "id")
        yield RawAnnotation(
            where=where, item_id=item_id, system=_str(obj, "system", where), aspect=_str(obj, "aspect", where),
            model=_str(obj, "model", where), spans=_spans(obj, where), machine=bool(obj.get("model")),
        )


# --- factgenie -----------------------------------------------------------------------------------------


def _factgenie_files(path: Path) -> tuple[list[Path], dict[str, Any]]:
    """A campaign folder (metadata.json + files/*.jsonl) or one of its JSONL files."""
    if not path.is_dir():
        return [path], {}
    metadata: dict[str, Any] = {}
    if (path / "metadata.json").exists():
        metadata = read_small_json(path / "metadata.json", "metadata.json")
    files = sorted((path / "files").glob("*.jsonl")) or sorted(path.glob("*.jsonl"))
    if not files:
        raise FormatError(path.name, "a factgenie campaign folder holds files/*.jsonl; none found")
    return files, metadata.get("config", {}) if isinstance(metadata, dict) else {}


MAX_SMALL_JSON = 1 << 20


def read_small_json(path: Path, where: str) -> Any:
    """A small JSON file (a campaign's metadata), size and depth bounded before and while decoding."""
    with path.open("rb") as handle:
        raw = handle.read(MAX_SMALL_JSON + 1)
    if len(raw) > MAX_SMALL_JSON:
        raise FormatError(where, f"larger than {MAX_SMALL_JSON >> 20} MB; a metadata file is a few kilobytes")
    try:
        value = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FormatError(where, f"not a JSON file ({exc})") from None
    except RecursionError:
        raise FormatError(where, f"invalid JSON: nested deeper than {MAX_DEPTH} levels") from None
    check_depth(value, where)
    return value


def _category_names(meta: Any) -> list[str]:
    if not isinstance(meta, dict):
        return []
    names = []
    for category in meta.get("annotation_span_categories") or []:
        names.append(str(category.get("name", "")) if isinstance(category, dict) else str(category))
    return names


def _factgenie(path: Path, name: str) -> Iterator[RawAnnotation]:
    files, campaign_config = _factgenie_files(path)
    for file in files:
        prefix = f"{file.name}, " if len(files) > 1 else ""
        for place, obj in iter_objects(file, name=name or file.name):
            where = prefix + place
            if not isinstance(obj, dict):
                raise FormatError(where, f"expected a JSON object, found {type(obj).__name__}")
            meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
            categories = _category_names(meta) or _category_names(campaign_config)
            model = meta.get("model") or meta.get("annotator_id") or ""
            spans = []
            annotations = obj.get("annotations")
            if not isinstance(annotations, list):
                raise FormatError(where, "field 'annotations' is missing or not a list")
            for index, span in enumerate(annotations):
                if not isinstance(span, dict):
                    spans.append(span)  # resolve_span names the problem
                    continue
                category = span.get("type")
                if isinstance(category, int) and not isinstance(category, bool) and 0 <= category < len(categories):
                    category = categories[category]
                elif category is not None:
                    category = str(category)
                spans.append({
                    "start": span.get("start"), "end": span.get("end"), "text": span.get("text"),
                    "category": category, "explanation": span.get("reason"), "severity": span.get("severity"),
                    "_index": index,
                })
            output = obj.get("output")
            yield RawAnnotation(
                where=where, item_id=_item_id(obj, where, "example_idx"), system=_str(obj, "setup_id", where, "system"),
                aspect="", model=str(model), spans=spans,
                output=output if isinstance(output, str) else None, machine=bool(meta.get("model")),
            )


# --- Label Studio --------------------------------------------------------------------------------------


def _ls_user(value: Any) -> str:
    if isinstance(value, dict):
        return str(value.get("email") or value.get("username") or value.get("id") or "")
    return "" if value is None else str(value)


def _ls_model(annotation: dict[str, Any]) -> str:
    """Who made a Label Studio annotation: our exports say it in `meta`, Label Studio in `completed_by`."""
    meta = annotation.get("meta")
    if isinstance(meta, dict) and isinstance(meta.get("model"), str):
        return meta["model"]
    return _ls_user(annotation.get("completed_by"))


def _labelstudio(path: Path, name: str) -> Iterator[RawAnnotation]:
    for where, task in iter_objects(path, name=name):
        if not isinstance(task, dict) or not isinstance(task.get("data"), dict):
            raise FormatError(where, "expected a Label Studio task: an object with 'data' and 'annotations'")
        data = task["data"]
        item_id = _item_id(data, where, "item_id", "id")
        annotations = task.get("annotations") or []
        if not isinstance(annotations, list):
            raise FormatError(where, "field 'annotations' must be a list")
        for number, annotation in enumerate(annotations):
            if not isinstance(annotation, dict) or annotation.get("was_cancelled"):
                continue
            results = annotation.get("result") or []
            if not isinstance(results, list):
                raise FormatError(f"{where}, annotations[{number}]", "field 'result' must be a list")
            regions: dict[str, dict[str, Any]] = {}
            order: list[str] = []
            for index, result in enumerate(results):
                if not isinstance(result, dict) or not isinstance(result.get("value"), dict):
                    continue
                key = str(result.get("id", f"#{index}"))
                value = result["value"]
                region = regions.setdefault(key, {"_index": index})
                if result.get("type") == "labels":
                    labels = value.get("labels") or []
                    region.update(
                        start=value.get("start"), end=value.get("end"), text=value.get("text"),
                        category=labels[0] if isinstance(labels, list) and labels else None,
                    )
                    order.append(key)
                elif result.get("type") == "textarea":
                    texts = value.get("text") or []
                    region["explanation"] = "\n".join(texts) if isinstance(texts, list) else texts
                elif result.get("type") == "rating":
                    region["severity"] = value.get("rating")
            yield RawAnnotation(
                where=f"{where}, annotations[{number}]", item_id=item_id,
                system=_str(data, "system", where), aspect=_str(data, "aspect", where),
                model=_ls_model(annotation),
                spans=[regions[key] for key in order],
                output=data.get("text") if isinstance(data.get("text"), str) else None,
            )


# --- spans ---------------------------------------------------------------------------------------------


def normalize(text: str) -> str:
    """Case and whitespace folded: the comparison behind `match: normalized`."""
    return " ".join(text.split()).casefold()


def _int(value: Any, where: str, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise FormatError(where, f"field '{name}' must be an integer character offset, not {value!r}")
    return value


def resolve_span(raw: Any, output: str, where: str) -> SpanRecord:
    """Place one span in `output`: `end` defaults to start + len(text); case/whitespace differences match
    as 'normalized'. Raise FormatError for an empty or impossible span."""
    if not isinstance(raw, dict):
        raise FormatError(where, "a span must be an object with start and text")
    check_depth(raw, where)
    start, end = _int(raw.get("start"), where, "start"), _int(raw.get("end"), where, "end")
    text = raw.get("text")
    if text is not None and not isinstance(text, str):
        raise FormatError(where, f"field 'text' must be a string, not {type(text).__name__}")
    if text is not None:
        check_text(text, where, "text")
    severity = raw.get("severity")
    if severity is not None and (isinstance(severity, bool) or severity not in (1, 2, 3, 4, 5)):
        raise FormatError(where, f"field 'severity' must be an integer 1-5 or null, not {severity!r}")
    category = raw.get("category")
    category = "" if category is None else check_text(str(category), where, "category")
    explanation = raw.get("explanation")
    if explanation is not None and not isinstance(explanation, str):
        raise FormatError(where, f"field 'explanation' must be a string, not {type(explanation).__name__}")
    explanation = check_text(explanation or "", where, "explanation")
    base = SpanRecord(
        start=None, end=None, text=text or "", explanation=explanation, severity=severity, category=category,
        match="none", judgments=[],
    )
    if start is None:
        if end is not None:
            raise FormatError(where, "field 'end' is given without 'start'")
        if not (text or "").strip():
            raise FormatError(where, "empty span: no offsets and no text")
        return base  # a location not in the text
    if not 0 <= start < len(output):
        raise FormatError(where, f"impossible span: start {start} is outside the output (length {len(output)})")
    derived = end is None
    if derived:
        if not text:
            raise FormatError(where, "empty span: no 'end' and an empty 'text'")
        end = start + len(text)
    if end <= start:
        raise FormatError(where, f"empty span: start {start}, end {end}")
    if text is None or (text == "" and not derived):
        text = output[start:end]
    if end > len(output) and not derived:
        raise FormatError(where, f"impossible span: end {end} is past the end of the output (length {len(output)})")
    selected = output[start:end]
    if selected == text:
        return {**base, "start": start, "end": end, "text": text, "match": "exact"}
    wanted = normalize(text)
    if wanted and normalize(selected) == wanted:
        return {**base, "start": start, "end": end, "text": text, "match": "normalized"}
    if wanted and derived:
        # whitespace may differ in length: find the end whose text folds to the same string
        for candidate in range(start + 1, min(len(output), end + _SLACK) + 1):
            if normalize(output[start:candidate]) == wanted and not output[candidate - 1].isspace():
                return {**base, "start": start, "end": candidate, "text": text, "match": "normalized"}
    if end > len(output):
        raise FormatError(
            where, f"impossible span: start {start} + len(text) {len(text)} runs past the output (length {len(output)})"
        )
    raise FormatError(where, f"offsets {start}-{end} select {selected[:80]!r} but field 'text' is {text[:80]!r}")


# --- writers -------------------------------------------------------------------------------------------


@dataclass
class OutputAnnotation:
    """One stored annotation with what the writers need of its item."""

    item_id: str
    system: str
    output: str
    aspect: str
    model: str
    source: str
    machine: bool
    spans: list[SpanRecord]


def to_jsonl(annotation: OutputAnnotation) -> str:
    """Our JSONL: the import format exactly, so an export re-imports to the same annotations."""
    record: dict[str, Any] = {"item_id": annotation.item_id, "system": annotation.system}
    if annotation.aspect:
        record["aspect"] = annotation.aspect
    if annotation.model:
        record["model"] = annotation.model
    record["spans"] = [
        {key: span[key] for key in ("start", "end", "text", "category", "explanation", "severity")}
        for span in annotation.spans
    ]
    return json.dumps(record, ensure_ascii=False) + "\n"


def factgenie_metadata(campaign: str, categories: list[str]) -> dict[str, Any]:
    """The campaign's metadata.json: factgenie numbers span categories by their place in this list."""
    return {
        "id": campaign, "mode": "external",
        "config": {"annotation_span_categories": [{"name": c or "Error", "color": "#d62728"} for c in categories]},
    }


def to_factgenie(annotation: OutputAnnotation, *, dataset: str, categories: list[str]) -> str:
    """One line of a factgenie campaign file; spans without offsets have no place there and are left out."""
    example = int(annotation.item_id) if annotation.item_id.isdigit() else annotation.item_id
    metadata: dict[str, Any] = {
        "annotator_id": annotation.model or annotation.source, "annotator_group": 0, "campaign_id": annotation.source,
        "annotation_span_categories": [{"name": c or "Error", "color": "#d62728"} for c in categories],
    }
    if annotation.machine and annotation.model:
        metadata["model"] = annotation.model
    record = {
        "dataset": dataset, "split": "test", "setup_id": annotation.system, "example_idx": example,
        "output": annotation.output,
        "annotations": [
            {"start": s["start"], "text": annotation.output[s["start"]:s["end"]],
             "type": categories.index(s["category"]), "reason": s["explanation"]}
            for s in annotation.spans
            if s["start"] is not None
        ],
        "flags": [], "options": [], "sliders": [], "text_fields": [], "metadata": metadata,
    }
    return json.dumps(record, ensure_ascii=False) + "\n"


def labelstudio_task(task_id: int, annotations: list[OutputAnnotation]) -> dict[str, Any]:
    """One Label Studio task (an output) with one completed annotation per stored annotation of it."""
    first = annotations[0]
    data: dict[str, Any] = {"text": first.output, "item_id": first.item_id, "system": first.system}
    if first.aspect:
        data["aspect"] = first.aspect
    exported = []
    for annotation in annotations:
        result: list[dict[str, Any]] = []
        for index, span in enumerate(s for s in annotation.spans if s["start"] is not None):
            region = f"r{index}"
            common = {"id": region, "to_name": "text", "origin": "manual"}
            offsets = {"start": span["start"], "end": span["end"], "text": annotation.output[span["start"]:span["end"]]}
            result.append({**common, "from_name": "label", "type": "labels",
                           "value": {**offsets, "labels": [span["category"] or "Error"]}})
            if span["explanation"]:
                result.append({**common, "from_name": "explanation", "type": "textarea",
                               "value": {**offsets, "text": [span["explanation"]]}})
            if span["severity"] is not None:
                result.append({**common, "from_name": "severity", "type": "rating",
                               "value": {**offsets, "rating": span["severity"]}})
        exported.append({"result": result, "was_cancelled": False, "ground_truth": False,
                         "meta": {"source": annotation.source, "model": annotation.model}})
    return {"id": task_id, "data": data, "annotations": exported}


def labelstudio_config(categories: list[str]) -> str:
    """The labeling config of a Label Studio project that the exported tasks import into."""
    labels = "\n".join(
        f'    <Label value="{_xml(c or "Error")}"/>' for c in dict.fromkeys(c or "Error" for c in categories)
    )
    return (
        "<View>\n"
        '  <Labels name="label" toName="text">\n' + (labels or '    <Label value="Error"/>') + "\n  </Labels>\n"
        '  <Text name="text" value="$text"/>\n'
        '  <TextArea name="explanation" toName="text" perRegion="true" editable="true"/>\n'
        '  <Rating name="severity" toName="text" perRegion="true" maxRating="5"/>\n'
        "</View>\n"
    )


def _xml(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")
