"""Other tools' annotation files: readers and writers for our JSONL, factgenie campaigns and Label Studio tasks.

No Django here. Each reader yields one `RawAnnotation` per (output, annotator) in a common shape; the
import service matches it to an item and resolves its spans with `resolve_span`, which either returns
a span record or raises a FormatError saying what is wrong with it. The writers produce what the real
tools open as it is (tests/interop runs factgenie 1.2.1 and Label Studio 1.23 on it).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from slugify import slugify

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
    dataset: str | None = None  # the dataset and split a factgenie line names (None: the file does not say)
    split: str | None = None


def read_annotations(
    path: Path, fmt: str, *, name: str = "", annotators: dict[str, str] | None = None
) -> Iterator[RawAnnotation]:
    """Yield the annotations of a file (or of a factgenie campaign folder) in format `fmt`; `annotators`
    maps Label Studio user ids to our annotators' names."""
    if fmt not in FORMATS:
        raise FormatError("--format", f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")
    if fmt == "factgenie":
        yield from _factgenie(path, name)
    elif fmt == "labelstudio":
        yield from _labelstudio(path, name, annotators or {})
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


def _factgenie_files(path: Path) -> tuple[list[Path], dict[str, Any], str]:
    """A campaign folder (metadata.json + files/*.jsonl) or one of its JSONL files; with the campaign's
    config and the category name our exports list blank categories under."""
    if not path.is_dir():
        return [path], {}, ""
    metadata: dict[str, Any] = {}
    if (path / "metadata.json").exists():
        metadata = read_small_json(path / "metadata.json", "metadata.json")
    files = sorted((path / "files").glob("*.jsonl")) or sorted(path.glob("*.jsonl"))
    if not files:
        raise FormatError(path.name, "a factgenie campaign folder holds files/*.jsonl; none found")
    if not isinstance(metadata, dict):
        return files, {}, ""
    ours = metadata.get("spanjudge") if isinstance(metadata.get("spanjudge"), dict) else {}
    blank = ours.get("blank_category") if isinstance(ours.get("blank_category"), str) else ""
    return files, metadata.get("config", {}) if isinstance(metadata.get("config"), dict) else {}, blank


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
    categories = meta.get("annotation_span_categories") or []
    if not isinstance(categories, list):
        raise FormatError("metadata.json", "field 'annotation_span_categories' must be a list of categories, "
                                           f"not {type(categories).__name__}")
    for category in categories:
        names.append(str(category.get("name", "")) if isinstance(category, dict) else str(category))
    return names


def _factgenie(path: Path, name: str) -> Iterator[RawAnnotation]:
    files, campaign_config, blank = _factgenie_files(path)
    for file in files:
        prefix = f"{file.name}, " if len(files) > 1 else ""
        for place, obj in iter_objects(file, name=name or file.name):
            where = prefix + place
            if not isinstance(obj, dict):
                raise FormatError(where, f"expected a JSON object, found {type(obj).__name__}")
            meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
            ours = meta.get("spanjudge") if isinstance(meta.get("spanjudge"), dict) else {}
            categories = _category_names(meta) or _category_names(campaign_config)
            model = ours.get("model") if "model" in ours else (meta.get("model") or meta.get("annotator_id") or "")
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
                if blank and category == blank:
                    category = None
                spans.append({
                    "start": span.get("start"), "end": span.get("end"), "text": span.get("text"),
                    "category": category, "explanation": span.get("reason"), "severity": span.get("severity"),
                    "_index": index,
                })
            output = obj.get("output")
            item_id = str(ours["item_id"]) if isinstance(ours.get("item_id"), str) else _item_id(
                obj, where, "example_idx")
            system = ours["system"] if isinstance(ours.get("system"), str) else _str(obj, "setup_id", where, "system")
            machine = bool(ours["machine"]) if "machine" in ours else bool(meta.get("model"))
            yield RawAnnotation(
                where=where, item_id=item_id, system=system, aspect=str(ours.get("aspect") or ""), model=str(model),
                spans=spans, output=output if isinstance(output, str) else None, machine=machine,
                dataset=str(obj["dataset"]) if obj.get("dataset") is not None else None,
                split=str(obj["split"]) if obj.get("split") is not None else None,
            )


# --- Label Studio --------------------------------------------------------------------------------------


def _ls_user(value: Any) -> str:
    if isinstance(value, dict):
        email = value.get("email")
        if isinstance(email, str) and email.endswith("@" + LS_EMAIL_DOMAIN):
            return email.removesuffix("@" + LS_EMAIL_DOMAIN)  # the name our export wrote it for
        return str(email or value.get("username") or value.get("id") or "")
    return "" if value is None else str(value)


def _ls_model(annotation: dict[str, Any], annotators: dict[str, str]) -> str:
    """Who made a Label Studio annotation: the --map-annotator name of its user id, else what our export
    wrote in `meta` (Label Studio drops it on import), else Label Studio's `completed_by`."""
    user = annotation.get("completed_by")
    user_id = user.get("id") if isinstance(user, dict) else user
    if user_id is not None and str(user_id) in annotators:
        return annotators[str(user_id)]
    meta = annotation.get("meta")
    if isinstance(meta, dict) and isinstance(meta.get("model"), str):
        return meta["model"]
    return _ls_user(user)


def _labelstudio(path: Path, name: str, annotators: dict[str, str]) -> Iterator[RawAnnotation]:
    for where, task in iter_objects(path, name=name):
        if not isinstance(task, dict) or not isinstance(task.get("data"), dict):
            raise FormatError(where, "expected a Label Studio task: an object with 'data' and 'annotations'")
        data = task["data"]
        item_id = _item_id(data, where, "item_id", "id")
        entries = []
        for field_name in ("annotations", "predictions"):
            listed = task.get(field_name) or []
            if not isinstance(listed, list):
                raise FormatError(where, f"field '{field_name}' must be a list")
            entries.extend((field_name, number, entry) for number, entry in enumerate(listed))
        for field_name, number, annotation in entries:
            if not isinstance(annotation, dict) or annotation.get("was_cancelled"):
                continue
            place = f"{where}, {field_name}[{number}]"
            results = annotation.get("result") or []
            if not isinstance(results, list):
                raise FormatError(place, "field 'result' must be a list")
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
                    if not isinstance(texts, str) and not (
                            isinstance(texts, list) and all(isinstance(t, str) for t in texts)):
                        raise FormatError(f"{where}, annotations[{number}], result[{index}]",
                                          "a textarea's 'text' must be a string or a list of strings")
                    region["explanation"] = "\n".join(texts) if isinstance(texts, list) else texts
                elif result.get("type") == "rating":
                    region["severity"] = value.get("rating")
            prediction = field_name == "predictions"
            model = annotation.get("model_version") if prediction else _ls_model(annotation, annotators)
            yield RawAnnotation(
                where=place, item_id=item_id,
                system=_str(data, "system", where), aspect=_str(data, "aspect", where),
                model=model if isinstance(model, str) else "", machine=prediction,
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
    example_idx: int | None = None  # the item's place in its dataset (factgenie's integer example ids)


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


# --- factgenie campaigns ---------------------------------------------------------------------------------

FACTGENIE_SPLIT = "test"
BLANK_CATEGORY = "Error"  # the name a span without a category is listed under (read back as no category)
DB_COLUMNS = ("dataset", "split", "setup_id", "example_idx", "annotator_id", "annotator_group", "status", "start",
              "end")


def slug(text: str) -> str:
    """An id as factgenie makes it: it slugifies campaign, dataset, split and setup ids on reading."""
    return slugify(text)


def factgenie_category_names(categories: list[str]) -> list[str]:
    """The category list of a campaign: our categories in order, a blank one under BLANK_CATEGORY."""
    return list(dict.fromkeys(c or BLANK_CATEGORY for c in categories))


def factgenie_metadata(campaign: str, categories: list[str], *, created: str, about: dict[str, Any]) -> dict[str, Any]:
    """A campaign's metadata.json: factgenie numbers span categories by their place in this list, sorts
    campaigns by `created`, and reads `id` as the campaign's folder."""
    names = factgenie_category_names(categories)
    return {
        "id": campaign, "mode": "external", "created": created, "status": "finished",
        "config": {
            "annotation_span_categories": [{"name": c, "color": "#d62728"} for c in names],
            "annotation_granularity": "chars", "annotation_overlap_allowed": True,
        },
        "spanjudge": {**about, "blank_category": BLANK_CATEGORY},
    }


class FactgenieCampaignWriter:
    """Writes one source's annotations as a factgenie campaign folder that factgenie opens as it is.

    factgenie wants integer `example_idx` (we give the item's place in the dataset and keep our id in each
    line's metadata), slugified dataset/setup/campaign ids, a `db.csv` of finished examples, and one
    category list per campaign (the export passes the same list to every campaign it writes).
    """

    def __init__(self, folder: Path, *, campaign: str, dataset: str, source: str, categories: list[str],
                 created: str) -> None:
        if slug(campaign) != campaign or not campaign:
            raise FormatError("campaign", f"{campaign!r} is not a factgenie campaign id (try {slug(campaign)!r})")
        self.folder = folder
        self.campaign = campaign
        self.dataset = dataset
        self.source = source
        self.categories = categories
        self.names = factgenie_category_names(categories)
        self.created = created
        self.groups: dict[tuple[str, str], int] = {}
        self.rows: list[tuple[object, ...]] = []
        self.spans = 0
        self.unwritten = 0
        (folder / "files").mkdir(parents=True, exist_ok=True)
        self.handle = (folder / "files" / "annotations.jsonl").open("w", encoding="utf-8")

    def add(self, annotation: OutputAnnotation) -> None:
        if annotation.example_idx is None:
            raise ValueError("factgenie needs the item's place in the dataset (example_idx)")
        group = self.groups.setdefault((annotation.model, annotation.aspect), len(self.groups))
        annotator = annotation.model or annotation.source
        setup = slug(annotation.system) or "default"
        placed = [s for s in annotation.spans if s["start"] is not None]
        self.unwritten += len(annotation.spans) - len(placed)
        self.spans += len(placed)
        spans = []
        for span in placed:
            record: dict[str, Any] = {
                "start": span["start"], "text": annotation.output[span["start"]:span["end"]],
                "type": self.names.index(span["category"] or BLANK_CATEGORY), "reason": span["explanation"],
            }
            if span["severity"] is not None:
                record["severity"] = span["severity"]
            spans.append(record)
        metadata: dict[str, Any] = {
            "annotator_id": annotator, "annotator_group": group, "campaign_id": self.campaign,
            "spanjudge": {"dataset": self.dataset, "item_id": annotation.item_id, "system": annotation.system,
                          "aspect": annotation.aspect, "source": annotation.source, "model": annotation.model,
                          "machine": annotation.machine},
        }
        if annotation.machine and annotation.model:
            metadata["model"] = annotation.model
        line = {
            "dataset": slug(self.dataset), "split": FACTGENIE_SPLIT, "setup_id": setup,
            "example_idx": annotation.example_idx, "output": annotation.output, "annotations": spans,
            "flags": [], "options": [], "sliders": [], "text_fields": [], "metadata": metadata,
        }
        self.handle.write(json.dumps(line, ensure_ascii=False) + "\n")
        self.rows.append((slug(self.dataset), FACTGENIE_SPLIT, setup, annotation.example_idx, annotator, group,
                          "finished", "", ""))

    def close(self) -> dict[str, int]:
        """Finish the folder (metadata.json, db.csv); return what was written and what could not be."""
        self.handle.close()
        about = {"dataset": self.dataset, "source": self.source, "annotations": len(self.rows), "spans": self.spans,
                 "spans_without_position": self.unwritten}
        meta = factgenie_metadata(self.campaign, self.categories, created=self.created, about=about)
        (self.folder / "metadata.json").write_text(json.dumps(meta, indent=2, ensure_ascii=False), encoding="utf-8")
        with (self.folder / "db.csv").open("w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(DB_COLUMNS)
            writer.writerows(self.rows)
        return {"annotations": len(self.rows), "spans": self.spans, "spans_without_position": self.unwritten}


# --- Label Studio tasks --------------------------------------------------------------------------------


def _ls_result(annotation: OutputAnnotation) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = []
    for index, span in enumerate(s for s in annotation.spans if s["start"] is not None):
        region = f"r{index}"
        common = {"id": region, "to_name": "text", "origin": "manual"}
        offsets = {"start": span["start"], "end": span["end"], "text": annotation.output[span["start"]:span["end"]]}
        result.append({**common, "from_name": "label", "type": "labels",
                       "value": {**offsets, "labels": [span["category"] or BLANK_CATEGORY]}})
        if span["explanation"]:
            result.append({**common, "from_name": "explanation", "type": "textarea",
                           "value": {**offsets, "text": [span["explanation"]]}})
        if span["severity"] is not None:
            result.append({**common, "from_name": "severity", "type": "rating",
                           "value": {**offsets, "rating": span["severity"]}})
    return result


LS_EMAIL_DOMAIN = "annotators.spanjudge.invalid"


def labelstudio_email(person: str) -> str:
    """The Label Studio user (by email, as its import wants) standing for one of our annotators: the name
    itself when it is an email address, else NAME@annotators.spanjudge.invalid (read back as NAME)."""
    return person if "@" in person else f"{person}@{LS_EMAIL_DOMAIN}"


def labelstudio_task(task_id: int, annotations: list[OutputAnnotation], people: dict[str, str]) -> dict[str, Any]:
    """One Label Studio task (an output): machine sources as `predictions` (their model as `model_version`,
    where Label Studio keeps who made a prediction), people as completed `annotations` by a Label Studio
    user given by email (`completed_by`, where Label Studio keeps who made an annotation; it refuses
    emails that are not its users'). `people` collects the name -> email pairs written."""
    first = annotations[0]
    data: dict[str, Any] = {"text": first.output, "item_id": first.item_id, "system": first.system}
    if first.aspect:
        data["aspect"] = first.aspect
    predictions, done = [], []
    for annotation in annotations:
        result = _ls_result(annotation)
        if annotation.machine:
            predictions.append({"model_version": annotation.model or annotation.source, "result": result})
        else:
            who = annotation.model or annotation.source
            email = people.setdefault(who, labelstudio_email(who))
            done.append({"result": result, "was_cancelled": False, "ground_truth": False,
                         "completed_by": {"email": email}, "meta": {"source": annotation.source,
                                                                   "model": annotation.model}})
    task: dict[str, Any] = {"id": task_id, "data": data, "annotations": done}
    if predictions:
        task["predictions"] = predictions
    return task


def unwritten_spans(annotation: OutputAnnotation) -> int:
    """Spans the factgenie and Label Studio formats cannot hold (no place in the text)."""
    return sum(1 for s in annotation.spans if s["start"] is None)


def labelstudio_config(categories: list[str]) -> str:
    """The labeling config of a Label Studio project that the exported tasks import into."""
    labels = "\n".join(
        f'    <Label value="{_xml(c)}"/>' for c in factgenie_category_names(categories)
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
