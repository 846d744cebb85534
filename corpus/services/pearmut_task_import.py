"""Import the outputs of a Pearmut task file (campaign JSON) as a dataset: one item per (segment, system), the
segment's source as the item's input, so that a `cesa` campaign can judge them here. Scores come from Pearmut's
log (corpus.services.pearmut_import), not from a task file; ESA^AI's pre-filled spans are counted but not kept,
since pre-fill here comes from a campaign's runs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.db import transaction

from corpus.formats import FormatError, check_text
from corpus.interop.pearmut import read_pearmut_task
from corpus.models import Dataset, TaskType
from corpus.services.pearmut_import import OUTPUT_HEADER, SOURCE_HEADER, TASK, PearmutImportReport, outputs_items


@dataclass
class PearmutTaskReport:
    dataset: str
    tasks: int
    documents: int
    created_items: int
    reused_items: int
    prefilled: int

    def summary(self) -> str:
        text = (f"Imported the outputs of a Pearmut task file into {self.dataset!r}: {self.tasks} tasks, "
                f"{self.documents} documents, {self.created_items} new items, {self.reused_items} existing.")
        if self.prefilled:
            text += (f" {self.prefilled} pre-filled spans were not kept: a campaign here pre-fills from its runs' "
                     "spans.")
        return text


@transaction.atomic
def pearmut_task_import(*, path: Path, dataset_name: str, file_name: str = "", user=None) -> PearmutTaskReport:
    """Read the task file at `path` into dataset `dataset_name` (created if new; an existing one must hold the same
    texts for the same segment and system); raise FormatError and keep nothing when anything is wrong."""
    name = file_name or path.name
    check_text(dataset_name, "--dataset", "dataset")
    if not dataset_name.strip():
        raise FormatError("--dataset", "a dataset name is needed")
    if not path.is_file():
        raise FormatError(name, "no such file")
    try:
        task = read_pearmut_task(path.read_text(encoding="utf-8"), name=name)
    except UnicodeDecodeError as exc:
        raise FormatError(name, f"is not UTF-8 text (byte {exc.start})") from None
    seen: dict[tuple[str, str], str] = {}
    for output in task.outputs:
        key = (output.item_id or f"{output.user_id}:{output.item_i}:{output.k}", output.system)
        if seen.setdefault(key, output.output) != output.output:
            raise FormatError(f"{name}, data {output.user_id!r}, document {output.item_i}",
                              f"item {key[0]!r} of system {key[1]!r} has another text in an earlier task")
    dataset = Dataset.objects.select_for_update().filter(name=dataset_name).first()
    if dataset is None:
        kind = TaskType.objects.filter(slug=TASK).first()
        if kind is None:
            raise FormatError("--dataset", f"the built-in task {TASK!r} is missing (run migrate)")
        dataset = Dataset.objects.create(
            name=dataset_name, task=kind, source_file=name[:500], created_by=user, input_headers=[SOURCE_HEADER],
            output_header=OUTPUT_HEADER, description="Outputs imported from a Pearmut task file.")
    counts = PearmutImportReport(dataset=dataset.name, prefix="")
    outputs_items(dataset, task.outputs, name, counts)
    return PearmutTaskReport(dataset=dataset.name, tasks=task.tasks, documents=task.documents,
                             created_items=counts.created_items, reused_items=counts.reused_items,
                             prefilled=sum(len(o.prefill or []) for o in task.outputs))
