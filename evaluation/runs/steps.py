"""What a pass still has to ask, read from the database: one step per item not yet answered, with the
answers the call cache already holds, and for the supervisor the annotator answers each merge starts from.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db.models import QuerySet

from corpus.models import Annotation, AnnotationKind, Item
from evaluation.engine.answer_schema import json_prompt
from evaluation.engine.aspects import AspectSpec
from evaluation.engine.ensemble import DEFAULT_OUTLIER_RULE, MAX_ERRORS, EnsembleItem, ensemble_item
from evaluation.engine.parsing import parse_annotator_answer
from evaluation.engine.prompts import render_supervisor_prompt
from evaluation.engine.tasks import TaskSpec
from evaluation.llm.budget import ModelBudget
from evaluation.models import EvaluatorRun, LLMRole
from evaluation.runs.backends import retry_policy
from evaluation.runs.ledger import fill_cache
from evaluation.runs.modes import ModeSpec
from evaluation.runs.scheduler import Step, plan_attempts

ItemRow = tuple[int, dict[str, str], str]  # (pk, inputs, output), in dataset order


def run_items(run: EvaluatorRun) -> QuerySet[Item]:
    """The items a run scores: the dataset's own items, or exactly `config["item_ids"]` when the run was
    created for them (a DHP run scores perturbed items, which are never part of a dataset's normal runs)."""
    item_ids = run.config.get("item_ids")
    if item_ids is not None:
        return Item.objects.filter(dataset_id=run.dataset_id, pk__in=item_ids)
    return Item.objects.filter(dataset_id=run.dataset_id, derived_from__isnull=True)


def run_specs(run: EvaluatorRun) -> tuple[TaskSpec, AspectSpec]:
    """Build the engine's specs from the database rows, so admins' edits of tasks and aspects apply."""
    task = run.aspect.task
    aspect = run.aspect
    return (
        TaskSpec(slug=task.slug, name=task.name, description=task.description, output_noun=task.output_noun),
        AspectSpec(
            task=task.slug, name=aspect.name, definition=aspect.definition,
            confused_with=list(aspect.confused_with), lowest=aspect.lowest, highest=aspect.highest,
            output_only=aspect.output_only, steps=list(aspect.steps),
        ),
    )


@dataclass(frozen=True)
class ItemAnswers:
    """One item's annotator annotations, in annotator order, and the ensemble's verdict on them."""

    item_id: int
    annotation_ids: tuple[int, ...]
    models: tuple[str, ...]
    ensemble: EnsembleItem


@dataclass
class SupervisorPlan:
    steps: list[Step] = field(default_factory=list)
    items: dict[int, ItemAnswers] = field(default_factory=dict)  # item id -> what its step merges
    unmerged: list[ItemAnswers] = field(default_factory=list)  # items with no usable answer: nothing to ask


TOKENS_PER_ERROR = 64  # an annotator's error in a supervisor prompt, as estimated (RotoWire: 5 x 8 add ~1.5k)


class StepPlanner:
    """Builds each pass's steps for one run; `digests` is the executor's live model -> digest map."""

    def __init__(
        self, run: EvaluatorRun, items: Sequence[ItemRow], digests: Mapping[str, str],
        budgets: Mapping[str, ModelBudget] | None = None,
    ) -> None:
        self.run = run
        self.config: dict[str, Any] = run.config
        self.items = items
        self.digests = digests
        self.budgets: Mapping[str, ModelBudget] = budgets if budgets is not None else {}
        self.task, self.aspect = run_specs(run)
        self.output_header = run.dataset.output_header
        self.policy = retry_policy()  # for a run whose config predates the policy's entries

    def annotator_steps(self, model: str, spec: ModeSpec) -> list[Step]:
        done = self._done_items(kind=AnnotationKind.ANNOTATOR, model=model)
        template = self.run.templates[spec.annotator_template]
        prompts = [
            (pk, spec.render(
                template, task=self.task, aspect=self.aspect, inputs=inputs, output=output,
                output_header=self.output_header,
            ))
            for pk, inputs, output in self.items
            if pk not in done
        ]
        self._settle(model, [prompt for _, prompt in prompts])
        return self._with_cache([self._step(model, pk, prompt) for pk, prompt in prompts])

    def supervisor_plan(self, model: str, item_ids: Collection[int] | None = None) -> SupervisorPlan:
        """The merges left to ask, of every item or of `item_ids` (those whose annotators all answered)."""
        done = self._done_items(kind=AnnotationKind.ENSEMBLE)
        annotators: list[str] = self.config["annotators"]
        rows: dict[int, list[Annotation]] = {}
        answered = Annotation.objects.filter(source=self.run, kind=AnnotationKind.ANNOTATOR)
        if item_ids is not None:
            answered = answered.filter(item_id__in=list(item_ids))
        for annotation in answered:
            rows.setdefault(annotation.item_id, []).append(annotation)
        template = self.run.templates[LLMRole.SUPERVISOR]
        rule = self.config.get("outlier_rule", DEFAULT_OUTLIER_RULE)
        plan = SupervisorPlan()
        prompts: list[tuple[int, str]] = []
        for pk, inputs, output in self.items:
            if pk in done or (item_ids is not None and pk not in item_ids):
                continue
            annotations = sorted(rows.get(pk, []), key=lambda a: annotators.index(a.model))
            answers = ItemAnswers(
                item_id=pk,
                annotation_ids=tuple(a.pk for a in annotations),
                models=tuple(a.model for a in annotations),
                ensemble=ensemble_item([parse_annotator_answer(a.raw_answer) for a in annotations], rule),
            )
            if not answers.ensemble.kept:
                plan.unmerged.append(answers)
                continue
            prompt = render_supervisor_prompt(
                template, task=self.task, aspect=self.aspect, inputs=inputs, output=output,
                output_header=self.output_header, annotations=answers.ensemble.kept_answers,
            )
            plan.items[pk] = answers
            prompts.append((pk, prompt))
        self._settle(model, [prompt for _, prompt in prompts])
        plan.steps = [self._step(model, pk, prompt) for pk, prompt in prompts]
        self._with_cache(plan.steps)
        return plan

    def presettle_supervisor(self, model: str) -> None:
        """Size the supervisor's context before its prompts exist (they wait for the annotators' answers), so
        the model is loaded once: its prompt without annotations, plus room for every annotator's errors."""
        template = self.run.templates[LLMRole.SUPERVISOR]
        prompts = [
            render_supervisor_prompt(template, task=self.task, aspect=self.aspect, inputs=inputs, output=output,
                                     output_header=self.output_header, annotations=[])
            for _, inputs, output in self.items
        ]
        extra = len(self.config["annotators"]) * MAX_ERRORS * TOKENS_PER_ERROR
        budget = self.budgets.get(model)
        if budget is not None and prompts:
            before = budget.num_ctx
            budget.settle(prompts, extra_tokens=extra)
            if budget.num_ctx != before:
                self.config.setdefault("num_ctx", {})[model] = budget.num_ctx
                EvaluatorRun.objects.filter(pk=self.run.pk).update(config=self.config)

    def rekeyed(self, model: str, steps: Sequence[Step]) -> list[Step]:
        """The same steps keyed by the model's digest now in `digests` (another server's build answers)."""
        return self._with_cache([self._step(model, step.item_id, step.prompt) for step in steps])

    def _done_items(self, **match: str) -> set[int]:
        """Items this run already answered in the pass: a resumed run starts after them."""
        return set(Annotation.objects.filter(source=self.run, **match).values_list("item_id", flat=True))

    def _settle(self, model: str, prompts: list[str]) -> None:
        """Let the model's budget grow its num_ctx to hold these prompts, and remember it for a resumed run."""
        budget = self.budgets.get(model)
        if budget is None or not prompts:
            return
        before = budget.num_ctx
        budget.settle(prompts)
        if budget.num_ctx != before:  # a resumed run asks with the same num_ctx (it is in the cache keys)
            self.config.setdefault("num_ctx", {})[model] = budget.num_ctx
            EvaluatorRun.objects.filter(pk=self.run.pk).update(config=self.config)

    def _step(self, model: str, item_id: int, prompt: str) -> Step:
        if self.config.get("answer_format") == "json":
            prompt = json_prompt(prompt)
        budget = self.budgets.get(model)
        options = dict(self.config["options"])
        if budget is not None:
            options = budget.options(options)
        attempts = plan_attempts(
            model, self.digests.get(model, ""), prompt, options,
            attempts=int(self.config.get("max_answer_attempts", self.policy.answer_attempts)),
            retry_temperature=float(self.config.get("retry_temperature", self.policy.retry_temperature)),
        )
        repair = bool(self.config.get("repair", self.policy.repair))
        return Step(item_id, prompt, attempts, repair=repair, budget=budget)

    @staticmethod
    def _with_cache(steps: list[Step]) -> list[Step]:
        return fill_cache(steps)
