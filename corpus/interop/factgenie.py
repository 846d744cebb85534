"""factgenie campaigns: reading a campaign folder (or one of its JSONL files) and writing one factgenie opens as it is.

No Django here. tests/interop runs factgenie 1.2.1 on what the writer produces.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from slugify import slugify

from corpus.formats import MAX_DEPTH, FormatError, check_depth, iter_objects
from corpus.interop.records import (
    BLANK_CATEGORY,
    OutputAnnotation,
    RawAnnotation,
    category_names,
    item_id,
    text_field,
)
from corpus.spreadsheet import interchange_writer

FACTGENIE_SPLIT = "test"
DB_COLUMNS = ("dataset", "split", "setup_id", "example_idx", "annotator_id", "annotator_group", "status", "start",
              "end")
MAX_SMALL_JSON = 1 << 20


def slug(text: str) -> str:
    """An id as factgenie makes it: it slugifies campaign, dataset, split and setup ids on reading."""
    return slugify(text)


# --- reading -------------------------------------------------------------------------------------------


def _campaign_files(path: Path) -> tuple[list[Path], dict[str, Any], str]:
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


def read_factgenie(path: Path, name: str) -> Iterator[RawAnnotation]:
    files, campaign_config, blank = _campaign_files(path)
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
            ident = str(ours["item_id"]) if isinstance(ours.get("item_id"), str) else item_id(
                obj, where, "example_idx")
            system = (ours["system"] if isinstance(ours.get("system"), str)
                      else text_field(obj, "setup_id", where, "system"))
            machine = bool(ours["machine"]) if "machine" in ours else bool(meta.get("model"))
            yield RawAnnotation(
                where=where, item_id=ident, system=system, aspect=str(ours.get("aspect") or ""), model=str(model),
                spans=spans, output=output if isinstance(output, str) else None, machine=machine,
                dataset=str(obj["dataset"]) if obj.get("dataset") is not None else None,
                split=str(obj["split"]) if obj.get("split") is not None else None,
            )


# --- writing -------------------------------------------------------------------------------------------


def factgenie_metadata(campaign: str, categories: list[str], *, created: str, about: dict[str, Any]) -> dict[str, Any]:
    """A campaign's metadata.json: factgenie numbers span categories by their place in this list, sorts
    campaigns by `created`, and reads `id` as the campaign's folder."""
    names = category_names(categories)
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
            raise FormatError("campaign", f"{campaign!r} is not a factgenie campaign id (try {slug(campaign)!r})",
                              field="campaign")
        self.folder = folder
        self.campaign = campaign
        self.dataset = dataset
        self.source = source
        self.categories = categories
        self.names = category_names(categories)
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
            writer = interchange_writer(handle)  # factgenie reads it back: byte-exact, not for spreadsheets
            writer.writerow(DB_COLUMNS)
            writer.writerows(self.rows)
        return {"annotations": len(self.rows), "spans": self.spans, "spans_without_position": self.unwritten}
