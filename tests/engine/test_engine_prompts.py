"""Tests of prompt rendering: structure, inputs handling, safety against `$`/`{}` and bad templates."""

from __future__ import annotations

import pytest

from evaluation.engine import EngineError
from evaluation.engine.aspects import ASPECTS, AspectSpec
from evaluation.engine.parsing import parse_annotator_answer, parse_supervisor_answer
from evaluation.engine.prompts import (
    ANNOTATOR_TEMPLATE,
    DISTILLED_TEMPLATE,
    SUPERVISOR_TEMPLATE,
    render_annotator_prompt,
    render_distilled_prompt,
    render_supervisor_prompt,
    validate_template,
)
from evaluation.engine.tasks import TASKS

DIALOGUE = TASKS["dialogue"]
INPUTS = {"Dialogue history": "A: it costs $5 or ${price} {0} %s\nB: ok", "Knowledge": "Tickets cost $5."}
OUTPUT = "B: i paid $100 for {it} ... $$ ${output}\n"


def _aspect(task: str, name: str) -> AspectSpec:
    (aspect,) = (a for a in ASPECTS if (a.task, a.name) == (task, name))
    return aspect


def test_annotator_prompt_structure_and_literal_values() -> None:
    aspect = _aspect("dialogue", "groundedness")
    prompt = render_annotator_prompt(
        ANNOTATOR_TEMPLATE, task=DIALOGUE, aspect=aspect, inputs=INPUTS, output=OUTPUT, output_header="Response"
    )
    assert "### Dialogue history\nA: it costs $5 or ${price} {0} %s\nB: ok\n\n### Knowledge\n" in prompt
    assert "### Response\nB: i paid $100 for {it} ... $$ ${output}\n" in prompt
    assert aspect.definition in prompt
    assert "coherence, engagingness or naturalness" in prompt  # the confusable aspects
    assert "1. " + aspect.steps[0] in prompt and f"{len(aspect.steps) + 1}. Grade" in prompt
    assert aspect.lowest in prompt and aspect.highest in prompt
    for keyword in ("Error 1:", "Location:", "Explanation:", "Severity:", "Overall score:",
                    "Explanation of the score:", "Unacceptable, Poor, Fair, Good or Excellent", "No Error"):
        assert keyword in prompt
    assert prompt.index("### Knowledge") < prompt.index("### Response") < prompt.index("### Answer format")


def test_output_only_aspect_leaves_inputs_out() -> None:
    aspect = _aspect("dialogue", "naturalness")
    assert aspect.output_only
    prompt = render_annotator_prompt(
        ANNOTATOR_TEMPLATE, task=DIALOGUE, aspect=aspect, inputs=INPUTS, output=OUTPUT, output_header="Response"
    )
    assert "### Dialogue history" not in prompt and "Tickets cost" not in prompt
    assert "### Response\n" in prompt


def test_supervisor_prompt_lists_annotation_sets() -> None:
    answers = [
        parse_annotator_answer('Error 1:\nLocation: "$100" (wrong)\nExplanation: costs $5\nSeverity: High\n'
                               "Overall score: Poor"),
        parse_annotator_answer("No Error\nOverall score: Excellent"),
    ]
    prompt = render_supervisor_prompt(
        SUPERVISOR_TEMPLATE, task=DIALOGUE, aspect=_aspect("dialogue", "groundedness"), inputs=INPUTS,
        output=OUTPUT, output_header="Response", annotations=answers,
    )
    assert "Annotation set 1:\nError 1:\nLocation: $100\nExplanation: costs $5\nSeverity: 4" in prompt
    assert "Annotation set 2:\nNo Error" in prompt
    assert "at most 8 errors" in prompt
    assert "Overall score" not in prompt  # the supervisor returns errors only
    # the format the supervisor is asked for is the one its parser reads
    assert parse_supervisor_answer("Error 1:\nLocation: $100\nExplanation: x\nSeverity: 4").status == "ok"


def test_distilled_prompt_is_short_and_asks_for_0_to_100() -> None:
    aspect = _aspect("summarization", "factual consistency")
    prompt = render_distilled_prompt(
        DISTILLED_TEMPLATE, task=TASKS["summarization"], aspect=aspect, inputs={"Article": "A text."},
        output="A sum.", output_header="Summary",
    )
    assert "0 to 100" in prompt and "### Article\nA text." in prompt and "### Summary\nA sum." in prompt
    assert len(prompt) < len(ANNOTATOR_TEMPLATE)


def test_unknown_placeholder_is_named() -> None:
    with pytest.raises(EngineError, match=r"\$\{aspect_nmae\}"):
        render_annotator_prompt(
            "Judge ${aspect_nmae} of ${output}", task=DIALOGUE, aspect=_aspect("dialogue", "coherence"),
            inputs={}, output="x", output_header="Response",
        )
    with pytest.raises(EngineError, match="annotations"):
        validate_template("${annotations}", "annotator")
    validate_template("${annotations}", "supervisor")


def test_stray_dollar_in_template_is_reported() -> None:
    with pytest.raises(EngineError, match=r"\$\$"):
        validate_template("costs $5 for ${aspect_name}")
    validate_template("costs $$5 for ${aspect_name}")


@pytest.mark.parametrize("template", [ANNOTATOR_TEMPLATE, DISTILLED_TEMPLATE])
def test_default_templates_validate(template: str) -> None:
    validate_template(template)
    validate_template(SUPERVISOR_TEMPLATE, "supervisor")
