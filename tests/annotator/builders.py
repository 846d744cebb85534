"""Small builders of campaigns with known machine spans, shared by the annotator and browser tests."""

from __future__ import annotations

from dataclasses import dataclass, field

from accounts.models import User
from annotator.models import Campaign
from annotator.services.campaigns import campaign_create
from corpus.models import Annotation, AnnotationKind, Dataset, ErrorSpan, Item, MatchKind, TaskType
from evaluation.models import Aspect, Evaluator, EvaluatorRun, RunStatus

# Names no annotator may ever see: run labels, evaluator names, model names.
SECRET_NAMES = ("secret-run-alpha", "secret-run-beta", "SecretModel Ensemble", "HiddenEval Judge",
                "llama-secret:70b", "qwen-hidden:32b")

OUTPUT_1 = "The Copper Kettle is a cheap coffee shop near the river. It is not family-friendly."
OUTPUT_2 = "Blue Spice serves Italian food in the city centre and has a rating of 5 out of 5."
INPUTS_1 = {"Data": "name[The Copper Kettle] | eatType[coffee shop] | priceRange[cheap] | area[riverside] | "
                    "familyFriendly[yes]"}
INPUTS_2 = {"Data": "name[Blue Spice] | food[Italian] | area[city centre] | customerRating[3 out of 5]"}


def span_at(output: str, text: str) -> tuple[int, int]:
    start = output.index(text)
    return start, start + len(text)


@dataclass
class Built:
    campaign: Campaign
    dataset: Dataset
    items: list[Item]
    runs: list[EvaluatorRun]
    spans: dict[str, ErrorSpan] = field(default_factory=dict)


def _run(dataset: Dataset, label: str, evaluator_name: str, aspect: Aspect) -> EvaluatorRun:
    evaluator, _ = Evaluator.objects.get_or_create(name=evaluator_name, defaults={"kind": Evaluator.Kind.ENSEMBLE})
    # Run labels are unique project-wide; a second campaign in one test gets a suffixed label.
    n = EvaluatorRun.objects.filter(label__startswith=label).count()
    return EvaluatorRun.objects.create(evaluator=evaluator, dataset=dataset, aspect=aspect,
                                       label=label if n == 0 else f"{label}-{n}", status=RunStatus.DONE)


def _annotation(item: Item, run: EvaluatorRun, model: str) -> Annotation:
    return Annotation.objects.create(item=item, aspect="accuracy", source=run, kind=AnnotationKind.ENSEMBLE,
                                     model=model, score=2.0, score_label="Poor",
                                     score_explanation=f"{model} thinks this is poor")


def _span(annotation: Annotation, position: int, output: str, text: str, explanation: str, severity: int,
          in_text: bool = True) -> ErrorSpan:
    if in_text:
        start, end = span_at(output, text)
        return ErrorSpan.objects.create(annotation=annotation, position=position, text=text, start=start, end=end,
                                        match=MatchKind.EXACT, explanation=explanation, severity=severity)
    return ErrorSpan.objects.create(annotation=annotation, position=position, text=text, match=MatchKind.NONE,
                                    explanation=explanation, severity=severity)


def build_campaign(
    annotators: list[User], *, per_item: int = 1, control_first: bool = False, output_1: str = OUTPUT_1,
    explanation_1: str = "Family friendliness is 'yes' in the data.", name: str = "UI campaign",
) -> Built:
    """Two items; two runs. Item 1: both runs mark 'not family-friendly' (one place, two evaluators) and run
    alpha also has a location that is not in the text. Item 2: run beta marks '5 out of 5'."""
    task = TaskType.objects.get(slug="data-to-text")
    aspect = Aspect.objects.get(task=task, name="accuracy")
    dataset = Dataset.objects.create(name=f"{name} data", task=task, input_headers=["Data"], output_header="Text")
    item1 = Item.objects.create(dataset=dataset, position=1, external_id="i1", system="sys-visible-only-to-staff",
                                inputs=INPUTS_1, output=output_1)
    item2 = Item.objects.create(dataset=dataset, position=2, external_id="i2", system="sys-b",
                                inputs=INPUTS_2, output=OUTPUT_2)
    alpha = _run(dataset, "secret-run-alpha", "SecretModel Ensemble", aspect)
    beta = _run(dataset, "secret-run-beta", "HiddenEval Judge", aspect)
    a1 = _annotation(item1, alpha, "llama-secret:70b")
    b1 = _annotation(item1, beta, "qwen-hidden:32b")
    b2 = _annotation(item2, beta, "qwen-hidden:32b")
    spans = {
        "a1_family": _span(a1, 1, output_1, "not family-friendly", explanation_1, 4),
        "a1_missing": _span(a1, 2, output_1, "serves French food", "The text claims French food.", 2,
                            in_text=False),
        "b1_family": _span(b1, 1, output_1, "is not family-friendly", "Contradicts familyFriendly[yes].", 3),
        "b2_rating": _span(b2, 1, OUTPUT_2, "5 out of 5", "The rating in the data is 3 out of 5.", 4),
    }
    campaign = campaign_create(
        name=name, dataset=dataset, runs=[alpha, beta], annotators=annotators, aspects=["accuracy"],
        annotators_per_item=per_item, seed=3, control_item_ids=[item1.pk] if control_first else (),
    )
    return Built(campaign=campaign, dataset=dataset, items=[item1, item2], runs=[alpha, beta], spans=spans)
