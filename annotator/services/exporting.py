"""Export a dataset as JSONL (one record per item and aspect) or CSV (one row per span judgment), streaming."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

from django.core.exceptions import ObjectDoesNotExist
from django.db.models import F, Prefetch, QuerySet, Value
from django.db.models.functions import Coalesce, NullIf

from accounts.models import User
from annotator import checks
from annotator.models import Adjudication, Assignment, Campaign, SpanJudgment
from annotator.selectors.review import campaign_votes
from corpus.consensus import Consensus, Offsets, Vote, consensus_label
from corpus.formats import (
    AnnotationRecord,
    ConsensusRecord,
    ExportRecord,
    JudgmentRecord,
    LLMCallRecord,
    OccurrenceRecord,
    SpanRecord,
)
from corpus.models import Annotation, Dataset, ErrorSpan, Item, ParseStatus, SourceKind
from corpus.protocols.opennlgauge import FLAG_VALUES as FLAGS
from corpus.spreadsheet import sheet_writer
from errors import UserError
from evaluation.llm.budget import STABLE_PREFIXES, UNPARSED
from evaluation.models import RunCall

CHUNK = 200
KIND_ORDER = {"gold": 0, "human": 1, "ensemble": 2, "supervisor": 3, "annotator": 4}
CSV_COLUMNS = [
    "dataset", "item_id", "system", "aspect", "source", "kind", "model", "score", "score_label",
    "span_index", "start", "end", "text", "explanation", "severity", "category", "match", "ambiguous",
    "annotator", "span_verdict", "explanation_verdict", *FLAGS, "comment", "occurrence",
]


def _ordered(mapping: dict, order: list[str]) -> dict:
    """Return `mapping` with keys in `order` first (PostgreSQL's jsonb does not keep key order)."""
    result = {key: mapping[key] for key in order if key in mapping}
    result.update((key, value) for key, value in mapping.items() if key not in result)
    return result


@dataclass(frozen=True)
class ExportFilter:
    """What an export keeps; every field left empty keeps everything.

    campaign: its items and only its judgments; aspect: records of that aspect; source: annotations by that
    source label; annotator: only that person's judgments (and, with a campaign, the items assigned to them);
    system: items of that system; status: items whose assignment (in the campaign, if one is given) has it.
    """

    campaign_id: int | None = None
    aspect: str = ""
    source: str = ""
    annotator: str = ""
    system: str = ""
    status: str = ""

    def problems(self, dataset: Dataset) -> list[tuple[str, str]]:
        """(field, problem) for each filter value that matches nothing that exists (a typo would otherwise export
        silently without the rows it was meant to keep)."""
        found = []
        if self.annotator and not User.objects.filter(username=self.annotator).exists():
            known = ", ".join(SpanJudgment.objects.filter(span__annotation__item__dataset=dataset)
                              .order_by().values_list("annotator__username", flat=True).distinct()[:20])
            found.append(("annotator", f"no user named {self.annotator!r} (annotators with judgments here: "
                                       f"{known or 'none yet'})"))
        if self.source and not Annotation.objects.filter(item__dataset=dataset, source__label=self.source).exists():
            found.append(("source", f"no annotation of this dataset comes from {self.source!r}"))
        return found

    def refusal(self, dataset: Dataset) -> UserError | None:
        """The problems as one refusal naming every field (None when the filter matches what exists)."""
        problems = self.problems(dataset)
        if not problems:
            return None
        return UserError("; ".join(f"{field}: {problem}" for field, problem in problems),
                         field=[field for field, _ in problems])

    def items(self, dataset: Dataset) -> QuerySet[Item]:
        items = Item.objects.filter(dataset=dataset, derived_from__isnull=True)  # DHP perturbations are not exported
        if self.system:
            items = items.filter(system=self.system)
        assignments = Assignment.objects.all()
        if self.campaign_id is not None:
            assignments = assignments.filter(campaign_id=self.campaign_id)
        if self.annotator and self.campaign_id is not None:
            assignments = assignments.filter(annotator__username=self.annotator)
        if self.status:
            assignments = assignments.filter(status=self.status)
        if self.campaign_id is not None or self.status:
            items = items.filter(pk__in=assignments.values("item_id"))
        return items

    def annotations(self) -> QuerySet[Annotation]:
        # A campaign's checks (decoys, spans copied onto planted outputs) are never real data.
        annotations = Annotation.objects.exclude(source__kind=SourceKind.CHECK)
        if self.source:
            annotations = annotations.filter(source__label=self.source)
        if self.aspect:
            annotations = annotations.filter(aspect__in=[self.aspect, ""])
        return annotations

    def judgments(self) -> QuerySet[SpanJudgment]:
        judgments = SpanJudgment.objects.filter(assignment__is_training=False)
        if self.campaign_id is not None:
            judgments = judgments.filter(assignment__campaign_id=self.campaign_id).exclude(
                annotator_id__in=checks.installed().excluded_annotator_ids(self.campaign_id))
        if self.annotator:
            judgments = judgments.filter(annotator__username=self.annotator)
        return judgments


EVERYTHING = ExportFilter()


def consensus_campaign(dataset: Dataset, keep: ExportFilter = EVERYTHING) -> Campaign | None:
    """The one campaign whose judges and reviewers give an export's consensus: the campaign the export names,
    else the dataset's labeling campaign (a researcher marks it), else none (then the consensus is the
    exported judges' majority, and no reviewer decision applies: two campaigns' reviewers never compete)."""
    campaigns = Campaign.objects.filter(dataset=dataset)
    if keep.campaign_id is not None:
        return campaigns.filter(pk=keep.campaign_id).first()
    return campaigns.filter(is_labeling=True).first()


def _items(dataset: Dataset, keep: ExportFilter = EVERYTHING, labeling: Campaign | None = None) -> Iterator[Item]:
    # By the name written in the export (an import identity's original name, else the username).
    export_name = Coalesce(NullIf("annotator__imported_name", Value("")), "annotator__username")
    judgments = (keep.judgments().select_related("annotator").annotate(campaign_of=F("assignment__campaign_id"))
                 .order_by(export_name, "pk"))
    decisions = Adjudication.objects.none() if labeling is None else Adjudication.objects.filter(campaign=labeling)
    spans = ErrorSpan.objects.order_by("position", "pk").prefetch_related(
        Prefetch("judgments", queryset=judgments), Prefetch("adjudications", queryset=decisions))
    annotations = (
        keep.annotations().select_related("source__run").order_by("pk")
        .prefetch_related(Prefetch("spans", queryset=spans))
    )
    calls = RunCall.objects.select_related("call").order_by("attempt", "pk").only(
        "item_id", "run_id", "role", "model", "attempt", "from_cache",
        "call__prompt_tokens", "call__cached_tokens", "call__completion_tokens")
    return (
        keep.items(dataset)
        .order_by("position")
        .prefetch_related(Prefetch("annotations", queryset=annotations), Prefetch("run_calls", queryset=calls))
        .iterator(chunk_size=CHUNK)
    )


CallsOf = Mapping[tuple[int, str, str], list[LLMCallRecord]]


def _calls_of(item: Item) -> dict[tuple[int, str, str], list[LLMCallRecord]]:
    """(run, role, model) -> the LLM calls that answered this item, with the server's token counts."""
    found: dict[tuple[int, str, str], list[LLMCallRecord]] = {}
    for run_call in item.run_calls.all():
        call = run_call.call
        found.setdefault((run_call.run_id, run_call.role, run_call.model), []).append(LLMCallRecord(
            attempt=run_call.attempt, from_cache=run_call.from_cache, prompt_tokens=call.prompt_tokens,
            cached_tokens=call.cached_tokens, completion_tokens=call.completion_tokens,
        ))
    return found


def _judgment_record(judgment: SpanJudgment) -> JudgmentRecord:
    record = JudgmentRecord(
        annotator=judgment.annotator.export_name,
        span_verdict=judgment.span_verdict or None,
        explanation_verdict=judgment.explanation_verdict or None,
        flags=judgment.flags(),
        comment=judgment.comment,
    )
    if judgment.is_picked():
        record["occurrence"] = {"start": judgment.picked_start, "end": judgment.picked_end}
    return record


def _pick(judgment: SpanJudgment) -> Offsets | None:
    return (judgment.picked_start, judgment.picked_end) if judgment.is_picked() else None


def _span_consensus(span: ErrorSpan, added: Mapping[int, Consensus], labeling: Campaign | None) -> ConsensusRecord:
    """The span's final label (corpus.consensus): an added error's from its campaign's grouping, a machine
    span's from the consensus campaign's judges and its reviewers' decision (`consensus_campaign`; without
    one, the exported judges' majority)."""
    if span.pk in added:
        return added[span.pk].as_record()
    decision = next((Vote(d.span_verdict or None, d.explanation_verdict or None, d.decided_place())
                     for d in span.adjudications.all() if d.is_decided()), None)  # at most one: its campaign's
    judgments = [j for j in span.judgments.all() if labeling is None or j.campaign_of == labeling.pk]
    votes = [Vote(j.span_verdict, j.explanation_verdict, _pick(j)) for j in judgments]
    return consensus_label(votes, decision).as_record()


def _span_record(span: ErrorSpan, added: Mapping[int, Consensus] | None = None,
                 labeling: Campaign | None = None) -> SpanRecord:
    record = SpanRecord(
        start=span.start, end=span.end, text=span.text, explanation=span.explanation, severity=span.severity,
        category=span.category, match=span.match,
        judgments=[_judgment_record(j) for j in span.judgments.all()],
        consensus=_span_consensus(span, added or {}, labeling),
    )
    if span.ambiguous:
        # only on such spans, so files of spans that were never ambiguous keep their old shape
        record["ambiguous"] = True
    return record


def annotation_simulated(annotation: Annotation) -> bool:
    """Return whether the annotation's source is a run the simulated server answered."""
    try:
        return bool(annotation.source.run.simulated)
    except ObjectDoesNotExist:  # a gold, human or imported source is no run
        return False


def annotation_record(annotation: Annotation, added: Mapping[int, Consensus] | None = None,
                      labeling: Campaign | None = None, calls: CallsOf | None = None) -> AnnotationRecord:
    record = AnnotationRecord(
        source=annotation.source.label, kind=annotation.kind, model=annotation.model, score=annotation.score,
        score_label=annotation.score_label, score_explanation=annotation.score_explanation,
        parse_status=annotation.parse_status, problems=export_problems(annotation),
        spans=[_span_record(s, added, labeling) for s in annotation.spans.all()],
    )
    answered = (calls or {}).get((annotation.source_id, annotation.kind, annotation.model))
    if answered:
        # only on annotations an LLM call answered, so other files keep their old shape
        record["llm_calls"] = answered
    if annotation_simulated(annotation):
        record["simulated"] = True  # only then, so real exports keep their shape
    return record


def _added_consensus(dataset: Dataset, keep: ExportFilter) -> dict[int, Consensus]:
    """The consensus of every added error in the exported campaigns (added errors are grouped per campaign)."""
    campaigns = Campaign.objects.filter(dataset=dataset)
    if keep.campaign_id is not None:
        campaigns = campaigns.filter(pk=keep.campaign_id)
    result: dict[int, Consensus] = {}
    for campaign in campaigns.filter(added_sources__isnull=False).distinct():
        result.update(campaign_votes(campaign, machine_spans=False).consensus_by_span())
    return result


def export_problems(annotation: Annotation) -> list[str]:
    """The annotation's problems with stable prefixes (the export contract): the budget's keep theirs
    (prompt_too_long:, answer_cut:); the parser's notes on an answer it could not read whole get unparsed:."""
    problems = []
    for problem in annotation.parse_problems or []:
        text = str(problem)
        if not text.startswith(STABLE_PREFIXES):
            if annotation.parse_status == ParseStatus.OK:
                continue  # a note on an answer read whole (a retry that worked) is no problem
            text = f"{UNPARSED}: {text}"
        problems.append(text)
    return problems


def _aspects_of(item: Item, annotations: list[Annotation], score_order: list[str]) -> list[str | None]:
    named = {a.aspect for a in annotations if a.aspect} | set(item.human_scores)
    ordered: list[str | None] = [a for a in score_order if a in named]
    ordered += sorted(named - set(ordered))
    if any(not a.aspect for a in annotations) or not ordered:
        ordered.insert(0, None)
    return ordered


Progress = Callable[[int], None]
"""Told the number of items exported so far (every PROGRESS_EVERY items)."""
PROGRESS_EVERY = 50


def dataset_records(
    dataset: Dataset, keep: ExportFilter = EVERYTHING, progress: Progress | None = None
) -> Iterator[ExportRecord]:
    """Yield one export record per (item, aspect), items in file order, annotations in a stable order."""
    added = _added_consensus(dataset, keep)
    labeling = consensus_campaign(dataset, keep)
    for number, item in enumerate(_items(dataset, keep, labeling), start=1):
        if progress is not None and number % PROGRESS_EVERY == 0:
            progress(number)
        annotations = sorted(item.annotations.all(), key=lambda a: (KIND_ORDER[a.kind], a.source.label, a.model))
        calls = _calls_of(item)
        inputs = _ordered(item.inputs, dataset.input_headers)
        scores = _ordered(item.human_scores, dataset.score_aspects)
        for aspect in _aspects_of(item, annotations, dataset.score_aspects):
            if keep.aspect and aspect not in (keep.aspect, None):
                continue
            record = ExportRecord(
                dataset=dataset.name, item_id=item.external_id, system=item.system, inputs=inputs,
                outputs={dataset.output_header: item.output}, aspect=aspect, human_scores=scores,
                annotations=[annotation_record(a, added, labeling, calls) for a in annotations
                             if (a.aspect or None) == aspect],
            )
            if any(a.get("simulated") for a in record["annotations"]):
                record["simulated"] = True
            yield record


def export_jsonl(dataset: Dataset, keep: ExportFilter = EVERYTHING, progress: Progress | None = None) -> Iterator[str]:
    for record in dataset_records(dataset, keep, progress):
        yield json.dumps(record, ensure_ascii=False) + "\n"


def csv_rows(
    dataset: Dataset, keep: ExportFilter = EVERYTHING, progress: Progress | None = None
) -> Iterator[list[object]]:
    """One row per span judgment (CSV_COLUMNS); a span nobody judged yet gets one row with empty judgment cells."""
    for record in dataset_records(dataset, keep, progress):
        base = [record["dataset"], record["item_id"], record["system"], record["aspect"] or ""]
        for annotation in record["annotations"]:
            head = [*base, annotation["source"], annotation["kind"], annotation["model"],
                    "" if annotation["score"] is None else annotation["score"], annotation["score_label"]]
            for index, span in enumerate(annotation["spans"]):
                span_cells = [
                    index, _blank(span["start"]), _blank(span["end"]), span["text"], span["explanation"],
                    _blank(span["severity"]), span["category"], span["match"],
                    "true" if span.get("ambiguous") else "",
                ]
                # A span nobody judged yet still gets its row, so the sheet loses nothing.
                for judgment in span["judgments"] or [None]:
                    if judgment is None:
                        yield [*head, *span_cells, "", "", "", *([""] * len(FLAGS)), "", ""]
                    else:
                        yield [
                            *head, *span_cells, judgment["annotator"], judgment["span_verdict"] or "",
                            judgment["explanation_verdict"] or "",
                            *[int(flag in judgment["flags"]) for flag in FLAGS], judgment["comment"],
                            _occurrence_cell(judgment.get("occurrence")),
                        ]


def _occurrence_cell(picked: OccurrenceRecord | None) -> str:
    """The CSV form of an expert's pick: blank (not picked), 'none', or 'start-end'."""
    if picked is None:
        return ""
    return "none" if picked["start"] is None else f"{picked['start']}-{picked['end']}"


def _blank(value: object) -> object:
    return "" if value is None else value


def export_csv(dataset: Dataset, keep: ExportFilter = EVERYTHING, progress: Progress | None = None) -> Iterator[str]:
    buffer = io.StringIO()
    writer = sheet_writer(buffer)

    def emit(rows: Iterable[list[object]]) -> Iterator[str]:
        for row in rows:
            writer.writerow(row)
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate(0)

    yield from emit([CSV_COLUMNS])
    yield from emit(csv_rows(dataset, keep, progress))
