"""The decoy prompt (a run's own prompt, then the stretch to report) and the answer's error for that stretch, with
the simulator answering such a prompt as the evaluator answers its own: no database, no server."""

from __future__ import annotations

import pytest

from evaluation.engine.aspects import AspectSpec
from evaluation.engine.parsing import parse_annotator_answer, parse_distilled_answer, parse_supervisor_answer
from evaluation.engine.prompts import ANNOTATOR_TEMPLATE, DISTILLED_TEMPLATE, render_annotator_prompt
from evaluation.engine.tasks import TaskSpec
from quality.engine.decoy_prompt import SECTION_HEADER, decoy_prompt, error_at
from tests.ollama_sim.answers import default_reply

OUTPUT = "The Raptors beat the Celtics 100-95 on Friday. Kyle Lowry led the Raptors with 20 points."
TASK = TaskSpec(slug="data-to-text", name="data-to-text", description="Describe the data.", output_noun="text")
ASPECT = AspectSpec(task="data-to-text", name="accuracy", definition="Facts match the data.", confused_with=[],
                    lowest="wrong", highest="right", output_only=False, steps=["Read the data."])


def _run_prompt(template: str = ANNOTATOR_TEMPLATE) -> str:
    return render_annotator_prompt(template, task=TASK, aspect=ASPECT, inputs={"Data": "Raptors PTS 100"},
                                   output=OUTPUT, output_header="Text")


def test_decoy_prompt_is_the_runs_prompt_then_the_stretch_to_report():
    run = _run_prompt()
    prompt = decoy_prompt(run, stretch="Kyle Lowry", output_noun="text", aspect_name="accuracy")
    assert prompt.startswith(run.rstrip("\n"))  # the same prefix: the same voice, and the server's prompt cache
    section = prompt[len(run.rstrip("\n")):]
    assert SECTION_HEADER in section and '"Kyle Lowry"' in section and "accuracy of the text" in section


def test_decoy_prompt_takes_dollars_and_braces_in_the_stretch_literally():
    prompt = decoy_prompt("P", stretch="$5 ${output} {x}", output_noun="text", aspect_name="accuracy")
    assert '"$5 ${output} {x}"' in prompt


def _error(location: str, explanation: str = "It is wrong.", severity: int | None = 3):
    answer = parse_annotator_answer(f"Error 1:\nLocation: {location}\nExplanation: {explanation}\nSeverity: "
                                    f"{severity}\n\nOverall score: Poor\nExplanation of the score: x")
    return answer.errors


def test_error_at_takes_the_error_on_the_stretch_and_refuses_one_elsewhere():
    start = OUTPUT.index("Kyle Lowry")
    end = start + len("Kyle Lowry")
    assert error_at(_error("Kyle Lowry"), OUTPUT, start, end).location == "Kyle Lowry"
    assert error_at(_error("Kyle Lowry led"), OUTPUT, start, end) is not None  # 10 of 14 characters: the same place
    assert error_at(_error("on Friday"), OUTPUT, start, end) is None
    assert error_at(_error("Kyle Lowry", explanation=""), OUTPUT, start, end) is None  # nothing to show
    raptors = OUTPUT.rindex("Raptors")  # the second "Raptors": a location quoting the same words counts
    assert error_at(_error("Raptors"), OUTPUT, raptors, raptors + len("Raptors")) is not None


@pytest.mark.parametrize(("template", "parse"), [(ANNOTATOR_TEMPLATE, parse_annotator_answer),
                                                 (DISTILLED_TEMPLATE, parse_distilled_answer)])
def test_simulator_answers_a_decoy_prompt_in_the_runs_format(template, parse):
    prompt = decoy_prompt(_run_prompt(template), stretch="Kyle Lowry", output_noun="text", aspect_name="accuracy")
    reply = default_reply("ann:1b", prompt)
    assert reply == default_reply("ann:1b", prompt)  # deterministic, as every simulated answer
    parsed = parse(reply)
    assert parsed.status == "ok" and len(parsed.errors) == 1, reply
    (error,) = parsed.errors
    assert error.location == "Kyle Lowry" and 1 <= error.severity <= 5
    assert error.explanation == '(simulated) The phrase "Kyle Lowry" is not supported by the given input.'
    assert parsed.score is not None or parsed.score100 is not None
    # the same wording the simulator gives every error it finds itself
    own = parse_annotator_answer(default_reply("ann:1b", _run_prompt()))
    assert all(e.explanation == f'(simulated) The phrase "{e.location}" is not supported by the given input.'
               for e in own.errors)


def test_simulator_answers_a_supervisors_decoy_prompt_with_the_stretch_not_a_merge():
    run = _run_prompt() + "\n### Annotations\nAnnotation set 1:\nError 1:\nLocation: on Friday\nExplanation: x\n" \
                          "Severity: 2\n"
    reply = default_reply("sup:1b", decoy_prompt(run, stretch="Kyle Lowry", output_noun="text",
                                                 aspect_name="accuracy"))
    assert [e.location for e in parse_supervisor_answer(reply).errors] == ["Kyle Lowry"]
