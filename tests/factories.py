"""Builders of test data for every test package: users, datasets and items, runs, spans, campaigns, judgments.

Plain functions over the ORM: each creates what its arguments say, with the defaults most tests want, and
returns the model it made. `build_campaign` at the end is the annotation UI's scenario, built from them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from accounts.models import User
from annotator.models import AddedSource, Assignment, Campaign, CampaignRun, SpanJudgment
from annotator.services.campaigns import neutral_labels
from corpus.models import (
    Annotation,
    AnnotationKind,
    Dataset,
    ErrorSpan,
    Item,
    MatchKind,
    Source,
    SourceKind,
    TaskType,
)
from evaluation.models import Aspect, Evaluator, EvaluatorRun
from jobs.models import JobStatus
from studies.setup import CampaignSpec, campaign_create

PASSWORD = "pass-1234"


# --- accounts and the catalogue -------------------------------------------------------------------


def user(username: str, role: str = "annotator", password: str = PASSWORD) -> User:
    return User.objects.create_user(username=username, password=password, role=role)


def task(slug: str = "data-to-text") -> TaskType:
    """A built-in task type (the migrations install them)."""
    return TaskType.objects.get(slug=slug)


def aspect(name: str = "accuracy", task_slug: str = "data-to-text") -> Aspect:
    return Aspect.objects.get(task__slug=task_slug, name=name)


# --- corpus ---------------------------------------------------------------------------------------


def dataset(name: str, *, task: str | TaskType = "data-to-text", items: Iterable[Mapping[str, Any]] = (),
            **fields: Any) -> Dataset:
    """A dataset of a task (slug or model); `items` are Item fields, positioned in order from 0."""
    task_type = task if isinstance(task, TaskType) else TaskType.objects.get(slug=task)
    made = Dataset.objects.create(name=name, task=task_type, **fields)
    for values in items:
        item(made, **values)
    return made


def item(dataset: Dataset, external_id: str, output: str, *, position: int | None = None, **fields: Any) -> Item:
    """An item of the dataset; without a position it goes after the items already there."""
    if position is None:
        position = dataset.items.count()
    return Item.objects.create(dataset=dataset, position=position, external_id=external_id, output=output, **fields)


def annotation(item: Item, source: Source, *, kind: str = AnnotationKind.ENSEMBLE, aspect: str = "accuracy",
               **fields: Any) -> Annotation:
    """An annotation of the item by a source (a run, an import's source, an expert's additions)."""
    return Annotation.objects.create(item=item, source=source, kind=kind, aspect=aspect, **fields)


def span(annotation: Annotation, position: int, start: int | None = None, end: int | None = None, *,
         text: str = "", **fields: Any) -> ErrorSpan:
    """An error span at the given offsets (an exact match), or without offsets (a location not in the text)."""
    match = MatchKind.EXACT if start is not None else MatchKind.NONE
    return ErrorSpan.objects.create(annotation=annotation, position=position, text=text, start=start, end=end,
                                    match=fields.pop("match", match), **fields)


def offsets_of(output: str, text: str) -> tuple[int, int]:
    """Where `text` first occurs in `output` (a ValueError if it does not)."""
    start = output.index(text)
    return start, start + len(text)


def span_at(annotation: Annotation, position: int, text: str, **fields: Any) -> ErrorSpan:
    """An error span on the first occurrence of `text` in the annotated item's output."""
    start, end = offsets_of(annotation.item.output, text)
    return span(annotation, position, start, end, text=text, **fields)


def gold(item: Item, spans: Sequence[tuple[int, int] | str], *, label: str = "gold", **span_fields: Any) -> Annotation:
    """The gold annotation of an item (blank aspect) from an imported source; spans are offsets or texts."""
    source, _ = Source.objects.get_or_create(label=label, kind=SourceKind.IMPORT)
    made = annotation(item, source, kind=AnnotationKind.GOLD, aspect="")
    for position, where in enumerate(spans):
        if isinstance(where, str):
            span_at(made, position, where, **span_fields)
        else:
            span(made, position, *where, **span_fields)
    return made


# --- evaluation -----------------------------------------------------------------------------------


def run(dataset: Dataset, label: str, *, evaluator: str = "", evaluator_kind: str = Evaluator.Kind.ENSEMBLE,
        aspect: str | Aspect = "accuracy", status: str = JobStatus.DONE, **fields: Any) -> EvaluatorRun:
    """A run on the dataset; its evaluator (default '<label>-evaluator') is made if missing.

    Run labels are unique project-wide: a label already taken gets a suffix (label-1, label-2, ...)."""
    judge, _ = Evaluator.objects.get_or_create(name=evaluator or f"{label}-evaluator",
                                               defaults={"kind": evaluator_kind})
    if not isinstance(aspect, Aspect):
        aspect = Aspect.objects.get(task=dataset.task, name=aspect)
    unique, n = label, 0
    while Source.objects.filter(kind=SourceKind.RUN, label=unique).exists():
        n += 1
        unique = f"{label}-{n}"
    return EvaluatorRun.objects.create(evaluator=judge, dataset=dataset, aspect=aspect, label=unique, status=status,
                                       **fields)


def ensemble_answer(item: Item, run: EvaluatorRun, marks: Sequence[tuple[str, int]], *,
                    models: Sequence[str] = ("m1", "m2", "m3"), aspect: str = "accuracy",
                    **span_fields: Any) -> list[ErrorSpan]:
    """An ensemble run's stored answer on an item: each model's own annotation, the supervisor's, and the merged
    one. `marks` are (text in the output, k): the merged span on that text, flagged by the first k models.
    Returns the merged spans, in order."""
    for m, name in enumerate(models):
        own = annotation(item, run, kind=AnnotationKind.ANNOTATOR, model=name, aspect=aspect)
        for position, (text, k) in enumerate(marks):
            if m < k:
                span_at(own, position, text)
    annotation(item, run, kind=AnnotationKind.SUPERVISOR, model="supervisor", aspect=aspect)
    merged = annotation(item, run, kind=AnnotationKind.ENSEMBLE, model="supervisor", aspect=aspect)
    return [span_at(merged, position, text, explanation=f"{text} is wrong.", **span_fields)
            for position, (text, _) in enumerate(marks)]


# --- annotator: campaigns, assignments, judgments, added errors -----------------------------------


def campaign(name: str, dataset: Dataset, runs: Sequence[EvaluatorRun], annotators: Sequence[User], *,
             per_item: int = 1, aspects: Sequence[str] = ("accuracy",), status: str = Campaign.Status.OPEN,
             **fields: Any) -> Campaign:
    """A campaign made directly, without assignments: runs get 'Evaluator A', 'B', ... in the order given.

    Use annotator.services.campaigns.campaign_create instead to test how campaigns are set up."""
    made = Campaign.objects.create(name=name, dataset=dataset, aspects=list(aspects), annotators_per_item=per_item,
                                   status=status, **fields)
    made.annotators.set(annotators)
    for label, judged in zip(neutral_labels(len(runs)), runs, strict=True):
        CampaignRun.objects.create(campaign=made, run=judged, label=label)
    return made


def assignment(campaign: Campaign, annotator: User, item: Item, order: int, **fields: Any) -> Assignment:
    return Assignment.objects.create(campaign=campaign, annotator=annotator, item=item, order=order, **fields)


def judgment(span: ErrorSpan, assignment: Assignment, span_verdict: str = "", explanation_verdict: str = "", *,
             corrected_severity: int | None = None, **fields: Any) -> SpanJudgment:
    """The assignment's annotator's verdicts on a span; flags and the comment go in as keywords."""
    return SpanJudgment.objects.create(span=span, assignment=assignment, annotator_id=assignment.annotator_id,
                                       span_verdict=span_verdict, explanation_verdict=explanation_verdict,
                                       corrected_severity=corrected_severity, **fields)


def added_error(campaign: Campaign, annotator: User, item: Item, start: int, end: int, *, aspect: str = "accuracy",
                **span_fields: Any) -> ErrorSpan:
    """An error an expert added in a campaign: a span of their human annotation, under their AddedSource."""
    source, _ = AddedSource.objects.get_or_create(campaign=campaign, annotator=annotator,
                                                  defaults={"label": annotator.username})
    human, _ = Annotation.objects.get_or_create(item=item, aspect=aspect, source=source, kind=AnnotationKind.HUMAN,
                                                model="", defaults={"author": annotator})
    return span(human, human.spans.count(), start, end, **span_fields)


# --- the annotation UI's campaign -----------------------------------------------------------------

# Names no annotator may ever see: run labels, evaluator names, model names.
SECRET_NAMES = ("secret-run-alpha", "secret-run-beta", "SecretModel Ensemble", "HiddenEval Judge",
                "llama-secret:70b", "qwen-hidden:32b")

OUTPUT_1 = "The Copper Kettle is a cheap coffee shop near the river. It is not family-friendly."
OUTPUT_2 = "Blue Spice serves Italian food in the city centre and has a rating of 5 out of 5."
INPUTS_1 = {"Data": "name[The Copper Kettle] | eatType[coffee shop] | priceRange[cheap] | area[riverside] | "
                    "familyFriendly[yes]"}
INPUTS_2 = {"Data": "name[Blue Spice] | food[Italian] | area[city centre] | customerRating[3 out of 5]"}


@dataclass
class Built:
    campaign: Campaign
    dataset: Dataset
    items: list[Item]
    runs: list[EvaluatorRun]
    spans: dict[str, ErrorSpan] = field(default_factory=dict)


def build_campaign(
    annotators: list[User], *, per_item: int = 1, control_first: bool = False, output_1: str = OUTPUT_1,
    explanation_1: str = "Family friendliness is 'yes' in the data.", name: str = "UI campaign",
) -> Built:
    """Two items; two runs. Item 1: both runs mark 'not family-friendly' (one place, two evaluators) and run
    alpha also has a location that is not in the text. Item 2: run beta marks '5 out of 5'.
    Made with campaign_create (seed 3), so assignments and neutral labels are the service's."""
    data = dataset(f"{name} data", input_headers=["Data"], output_header="Text")
    item1 = item(data, "i1", output_1, position=1, system="sys-visible-only-to-staff", inputs=INPUTS_1)
    item2 = item(data, "i2", OUTPUT_2, position=2, system="sys-b", inputs=INPUTS_2)
    alpha = run(data, "secret-run-alpha", evaluator="SecretModel Ensemble")
    beta = run(data, "secret-run-beta", evaluator="HiddenEval Judge")

    def poor(on: Item, by: EvaluatorRun, model: str) -> Annotation:
        return annotation(on, by, model=model, score=2.0, score_label="Poor",
                          score_explanation=f"{model} thinks this is poor")

    a1 = poor(item1, alpha, "llama-secret:70b")
    b1 = poor(item1, beta, "qwen-hidden:32b")
    b2 = poor(item2, beta, "qwen-hidden:32b")
    spans = {
        "a1_family": span_at(a1, 1, "not family-friendly", explanation=explanation_1, severity=4),
        "a1_missing": span(a1, 2, text="serves French food", explanation="The text claims French food.", severity=2),
        "b1_family": span_at(b1, 1, "is not family-friendly", explanation="Contradicts familyFriendly[yes].",
                             severity=3),
        "b2_rating": span_at(b2, 1, "5 out of 5", explanation="The rating in the data is 3 out of 5.", severity=4),
    }
    made = campaign_create(CampaignSpec(
        name=name, dataset=data, runs=[alpha, beta], annotators=annotators, aspects=["accuracy"],
        annotators_per_item=per_item, seed=3, control_item_ids=[item1.pk] if control_first else ()),
    )
    return Built(campaign=made, dataset=data, items=[item1, item2], runs=[alpha, beta], spans=spans)
