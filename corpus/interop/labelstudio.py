"""Label Studio tasks: reading its task exports, and writing tasks (and a labeling config) it imports as they are.

No Django here. tests/interop runs Label Studio 1.23 on what the writer produces.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from corpus.formats import FormatError, iter_objects
from corpus.interop.records import (
    BLANK_CATEGORY,
    OutputAnnotation,
    RawAnnotation,
    category_names,
    item_id,
    text_field,
)

LS_EMAIL_DOMAIN = "annotators.spanjudge.invalid"


# --- reading -------------------------------------------------------------------------------------------


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


def read_labelstudio(path: Path, name: str, annotators: dict[str, str]) -> Iterator[RawAnnotation]:
    """The annotations and predictions of each task; `annotators` maps Label Studio user ids to our names."""
    for where, task in iter_objects(path, name=name):
        if not isinstance(task, dict) or not isinstance(task.get("data"), dict):
            raise FormatError(where, "expected a Label Studio task: an object with 'data' and 'annotations'")
        data = task["data"]
        ident = item_id(data, where, "item_id", "id")
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
                where=place, item_id=ident,
                system=text_field(data, "system", where), aspect=text_field(data, "aspect", where),
                model=model if isinstance(model, str) else "", machine=prediction,
                spans=[regions[key] for key in order],
                output=data.get("text") if isinstance(data.get("text"), str) else None,
            )


# --- writing -------------------------------------------------------------------------------------------


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


def labelstudio_config(categories: list[str]) -> str:
    """The labeling config of a Label Studio project that the exported tasks import into."""
    labels = "\n".join(
        f'    <Label value="{_xml(c)}"/>' for c in category_names(categories)
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
