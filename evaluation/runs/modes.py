"""The run modes and one spec each: everything that differs between them is stated here, once.

Launch, the run form, the `preannotate` command, the API schema and the executor all read these specs
instead of testing the mode's name, so a new mode is one more entry below. The values of `RunMode` are
stored in `EvaluatorRun.config["mode"]` and are the CLI's and API's words: they must not change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from errors import UserError
from evaluation.engine.aspects import AspectSpec
from evaluation.engine.parsing import ParsedAnswer, parse_annotator_answer, parse_distilled_answer
from evaluation.engine.prompts import render_annotator_prompt, render_distilled_prompt
from evaluation.engine.tasks import TaskSpec
from evaluation.models import Evaluator, LLMRole


class RunMode(StrEnum):
    ENSEMBLE = "ensemble"
    SINGLE = "single"
    DISTILLED = "distilled"


class ScoreScale(StrEnum):
    """The scale an annotator-pass score is stored on."""

    LABELS = "1-5"  # Unacceptable..Excellent as 1..5
    PERCENT = "0-100"  # the distilled model's own number, not mapped to labels

    def score(self, parsed: ParsedAnswer) -> float | None:
        return parsed.score100 if self is ScoreScale.PERCENT else parsed.score


class Renderer(Protocol):
    """The shape of the engine's annotator-pass prompt renderers."""

    def __call__(
        self, template: str, *, task: TaskSpec, aspect: AspectSpec, inputs: Mapping[str, str], output: str,
        output_header: str,
    ) -> str: ...


@dataclass(frozen=True)
class ModelPass:
    """One model's pass over the dataset; a run is its mode's passes in order."""

    model: str
    role: LLMRole

    @property
    def progress_key(self) -> str:
        """The pass's entry in `EvaluatorRun.progress` (what the run page lists per model)."""
        return self.model if self.role == LLMRole.ANNOTATOR else f"{self.model} (supervisor)"


@dataclass(frozen=True)
class ModeSpec:
    mode: RunMode
    label: str  # the launch form's choice
    summary: str  # the CLI's and API's one-line description
    template_kinds: tuple[str, ...]  # prompt templates frozen into the run at creation
    annotator_template: str  # which of them the annotator pass renders
    render: Renderer  # the annotator pass's prompt renderer
    parse: Callable[[str], ParsedAnswer]  # the annotator pass's answer parser
    score_scale: ScoreScale
    n_models: int | None  # annotator models it takes; None = one or more
    has_supervisor: bool
    evaluator_kind: str
    evaluator_title: str  # formatted with the '+'-joined annotators and the supervisor

    def passes(self, annotators: Sequence[str], supervisor: str) -> list[ModelPass]:
        """The run's passes: each annotator model in the configured order, then the supervisor if any."""
        passes = [ModelPass(model, LLMRole.ANNOTATOR) for model in annotators]
        if self.has_supervisor:
            passes.append(ModelPass(supervisor, LLMRole.SUPERVISOR))
        return passes

    def evaluator_name(self, annotators: Sequence[str], supervisor: str) -> str:
        return self.evaluator_title.format(annotators="+".join(annotators), supervisor=supervisor)


MODES: dict[RunMode, ModeSpec] = {
    spec.mode: spec
    for spec in (
        ModeSpec(
            mode=RunMode.ENSEMBLE,
            label="OpeNLGauge ensemble (annotators + supervisor)",
            summary="annotator models, then a supervisor that merges their errors",
            template_kinds=(LLMRole.ANNOTATOR, LLMRole.SUPERVISOR),
            annotator_template=LLMRole.ANNOTATOR,
            render=render_annotator_prompt,
            parse=parse_annotator_answer,
            score_scale=ScoreScale.LABELS,
            n_models=None,
            has_supervisor=True,
            evaluator_kind=Evaluator.Kind.ENSEMBLE,
            evaluator_title="OpeNLGauge ensemble: {annotators} / {supervisor}",
        ),
        ModeSpec(
            mode=RunMode.SINGLE,
            label="single annotator model (first model only)",
            summary="one annotator model whose answer is final",
            template_kinds=(LLMRole.ANNOTATOR,),
            annotator_template=LLMRole.ANNOTATOR,
            render=render_annotator_prompt,
            parse=parse_annotator_answer,
            score_scale=ScoreScale.LABELS,
            n_models=1,
            has_supervisor=False,
            evaluator_kind=Evaluator.Kind.SINGLE,
            evaluator_title="OpeNLGauge single annotator: {annotators}",
        ),
        ModeSpec(
            mode=RunMode.DISTILLED,
            label="distilled model, 0-100 score (first model only)",
            summary="one model with the short prompt that answers a 0-100 score",
            template_kinds=(LLMRole.DISTILLED,),
            annotator_template=LLMRole.DISTILLED,
            render=render_distilled_prompt,
            parse=parse_distilled_answer,
            score_scale=ScoreScale.PERCENT,
            n_models=1,
            has_supervisor=False,
            evaluator_kind=Evaluator.Kind.DISTILLED,
            evaluator_title="Distilled (0-100): {annotators}",
        ),
    )
}
DEFAULT_MODE = RunMode.ENSEMBLE


class UnknownMode(UserError):
    pass


def mode_spec(mode: str) -> ModeSpec:
    """Return the spec of a mode given by its stored or typed name."""
    try:
        return MODES[RunMode(mode)]
    except ValueError:
        raise UnknownMode(f"unknown mode {mode!r} (modes: {', '.join(MODES)})", field="mode") from None


def mode_choices() -> list[tuple[str, str]]:
    """(value, label) pairs for forms, in the specs' order."""
    return [(spec.mode.value, spec.label) for spec in MODES.values()]


def modes_help() -> str:
    """One sentence naming every mode, for the CLI's --help and the API's schema."""
    return "; ".join(
        f"{spec.mode}{' (default)' if spec.mode is DEFAULT_MODE else ''}: {spec.summary}" for spec in MODES.values()
    ) + "."
