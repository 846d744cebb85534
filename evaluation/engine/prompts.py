"""Default prompt templates (annotator, supervisor, distilled) and their safe rendering."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from string import Template

from evaluation.engine.aspects import AspectSpec
from evaluation.engine.errors import EngineError
from evaluation.engine.parsing import ParsedAnswer, ParsedError
from evaluation.engine.tasks import TaskSpec

MAX_ERRORS = 8
ANSWER_FORMAT_HEADER = "### Answer format\n"  # the last section of the default templates

# Templates use `string.Template` syntax: `${name}` is a placeholder and `$$` a literal dollar sign.
# Values are substituted, never formatted or re-parsed, so `$`, `{` and `}` inside dataset text are safe.
PLACEHOLDERS: dict[str, str] = {
    "task_name": "the task's human name, e.g. 'summarization'",
    "task_description": "what the generating system had to do",
    "output_noun": "how the evaluated text is called, e.g. 'summary', 'response'",
    "aspect_name": "the aspect, e.g. 'factual consistency'",
    "aspect_definition": "the aspect's definition",
    "confused_with": "the neighbouring aspects to keep apart, e.g. 'relevance, coverage or fluency'",
    "lowest": "what the bottom grade (Unacceptable) means for this aspect",
    "highest": "what the top grade (Excellent) means for this aspect",
    "steps": "the aspect's numbered evaluation steps, one per line",
    "score_step": "the number of the step after `steps` (for a closing grading step)",
    "inputs": "the inputs, each under a '### Header' line and followed by a blank line; empty when the "
    "aspect is judged on the output alone",
    "output_header": "the header of the evaluated text, e.g. 'Summary'",
    "output": "the evaluated text",
    "max_errors": "the cap on reported errors (8)",
    "annotations": "supervisor templates only: the annotators' error lists, one numbered set each",
}
SUPERVISOR_PLACEHOLDERS: frozenset[str] = frozenset(PLACEHOLDERS)
COMMON_PLACEHOLDERS: frozenset[str] = SUPERVISOR_PLACEHOLDERS - {"annotations"}

ANNOTATOR_TEMPLATE = """\
### Task
You are judging the output of a ${task_name} system. ${task_description}
Find the problems of the ${output_noun} that concern its ${aspect_name}, rate how serious each \
problem is on a scale from 1 (slight) to 5 (grave), and then grade the ${aspect_name} of the \
${output_noun} as a whole.

### What ${aspect_name} means here
${aspect_definition}

### Rules
- Judge ${aspect_name} and nothing else. Problems that belong to other aspects, such as \
${confused_with}, are out of scope even when you notice them.
- Work only from the material given below. Bring in no outside knowledge and assume nothing that \
the texts do not state.
- Every grade below Excellent must be backed by at least one error in your list. If the \
${output_noun} has no ${aspect_name} problem, write No Error and grade it Excellent.
- Report at most ${max_errors} errors; if there are more, keep the most serious ones.
- Each Location is copied word for word from the ${output_noun}: a single unbroken stretch of it, \
with nothing added.

### Steps
${steps}
${score_step}. Grade the ${aspect_name} of the ${output_noun} with one label from this scale, lowest \
first: Unacceptable, Poor, Fair, Good, Excellent. Unacceptable means the ${output_noun} is ${lowest}; \
Excellent means it is ${highest}.

${inputs}### ${output_header}
${output}

### Answer format
Write plain text with no markdown, in exactly this shape:
Error 1:
Location: <the exact words of the ${output_noun} where the problem is>
Explanation: <why this harms the ${aspect_name} of the ${output_noun}>
Severity: <a whole number from 1 to 5>
Error 2:
...
Overall score: <Unacceptable, Poor, Fair, Good or Excellent>
Explanation of the score: <the reasons for this grade>
"""

SUPERVISOR_TEMPLATE = """\
### Task
Several annotators looked for ${aspect_name} problems in the output of a ${task_name} system and \
each wrote a list of errors. Combine their lists into one clean final list.

### What ${aspect_name} means here
${aspect_definition}

### How to combine
- Every error in the final list describes exactly one problem, and every problem appears only once.
- Merge errors only when they describe the same problem at roughly the same place, that is, when \
their locations overlap substantially. Otherwise keep them apart: the same problem at two different \
places gives two errors, and two different problems at one place give two errors.
- When you merge, choose one unbroken stretch of the ${output_noun} that covers the merged locations, \
combine the most useful parts of their explanations, and give the merged error the highest severity \
among them.
- A Location holds a single span copied word for word from the ${output_noun} below; never put two \
separate spans on one Location line: split such an error into two. Remove any comment an annotator \
added to a Location line. Only for something missing from the ${output_noun} may the Location be None.
- Drop markdown and repair any deviation from the format below.
- Keep at most ${max_errors} errors; if there are more, keep the most severe ones. Prefer fewer, \
well-merged errors to many overlapping ones.

${inputs}### ${output_header}
${output}

### Annotations
${annotations}

### Answer format
Write plain text with no markdown and nothing else, in exactly this shape (or just No Error when no \
error remains):
Error 1:
Location: <a span copied from the ${output_noun}, or None>
Explanation: <explanation>
Severity: <a whole number from 1 to 5>
Error 2:
...
"""

DISTILLED_TEMPLATE = """\
### Task
Evaluate an output of a ${task_name} system with respect to ${aspect_name}. ${task_description}

### Aspect
${aspect_name}: ${aspect_definition}

${inputs}### ${output_header}
${output}

### Instructions
Give a score from 0 to 100 for the ${aspect_name} of the ${output_noun} on a line "Score: <0-100>". \
Then list its errors (at most ${max_errors}, the most severe ones if there are more), each as \
"Error N:" followed by "Location:", "Explanation:" and "Severity:" (1-5) lines.
"""


def _template(text: str, allowed: frozenset[str]) -> Template:
    template = Template(text)
    if not template.is_valid():
        raise EngineError(
            "prompt template has a '$' that starts no placeholder; write $$ for a literal dollar sign"
        )
    unknown = [name for name in template.get_identifiers() if name not in allowed]
    if unknown:
        raise EngineError(
            f"prompt template uses unknown placeholder(s): {', '.join('${' + n + '}' for n in unknown)}; "
            f"known: {', '.join(sorted(allowed))}"
        )
    return template


def validate_template(text: str, kind: str = "annotator") -> None:
    """Raise EngineError when an (admin-edited) template of this kind cannot be rendered."""
    _template(text, SUPERVISOR_PLACEHOLDERS if kind == "supervisor" else COMMON_PLACEHOLDERS)


def format_inputs(inputs: Mapping[str, str]) -> str:
    """Return the inputs as `### Header` sections, each followed by a blank line ('' when none)."""
    sections = []
    for header, text in inputs.items():
        sections.append(f"### {header}\n{str(text).strip(chr(10))}\n\n")
    return "".join(sections)


def format_steps(steps: Sequence[str]) -> str:
    return "\n".join(f"{i}. {step}" for i, step in enumerate(steps, start=1))


def _join_names(names: Sequence[str]) -> str:
    if not names:
        return "any other quality of the text"
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " or " + names[-1]


def _values(
    *, task: TaskSpec, aspect: AspectSpec, inputs: Mapping[str, str], output: str, output_header: str
) -> dict[str, str]:
    return {
        "task_name": task.name,
        "task_description": task.description,
        "output_noun": task.output_noun,
        "aspect_name": aspect.name,
        "aspect_definition": aspect.definition,
        "confused_with": _join_names(aspect.confused_with),
        "lowest": aspect.lowest,
        "highest": aspect.highest,
        "steps": format_steps(aspect.steps),
        "score_step": str(len(aspect.steps) + 1),
        "inputs": "" if aspect.output_only else format_inputs(inputs),
        "output_header": output_header,
        "output": output,
        "max_errors": str(MAX_ERRORS),
    }


def render_annotator_prompt(
    template: str,
    *,
    task: TaskSpec,
    aspect: AspectSpec,
    inputs: Mapping[str, str],
    output: str,
    output_header: str,
) -> str:
    """Return the annotator prompt; inputs are left out when the aspect is judged on the output alone."""
    values = _values(task=task, aspect=aspect, inputs=inputs, output=output, output_header=output_header)
    return _template(template, COMMON_PLACEHOLDERS).substitute(values)


def format_error(error: ParsedError, number: int) -> str:
    severity = str(error.severity) if error.severity is not None else (error.severity_raw.strip() or "unknown")
    location = error.location if error.location is not None else "None"
    explanation = error.explanation.strip() or "(none given)"
    return f"Error {number}:\nLocation: {location}\nExplanation: {explanation}\nSeverity: {severity}"


def format_annotations(annotations: Sequence[ParsedAnswer]) -> str:
    """Return the annotators' error lists in the plain answer format, one numbered set each."""
    sets = []
    for i, answer in enumerate(annotations, start=1):
        if answer.errors:
            body = "\n".join(format_error(e, n) for n, e in enumerate(answer.errors, start=1))
        else:
            body = "No Error"
        sets.append(f"Annotation set {i}:\n{body}")
    return "\n\n".join(sets) if sets else "(no annotations)"


def render_supervisor_prompt(
    template: str,
    *,
    task: TaskSpec,
    aspect: AspectSpec,
    inputs: Mapping[str, str],
    output: str,
    output_header: str,
    annotations: Sequence[ParsedAnswer],
) -> str:
    values = _values(task=task, aspect=aspect, inputs=inputs, output=output, output_header=output_header)
    values["annotations"] = format_annotations(annotations)
    return _template(template, SUPERVISOR_PLACEHOLDERS).substitute(values)


def render_distilled_prompt(
    template: str,
    *,
    task: TaskSpec,
    aspect: AspectSpec,
    inputs: Mapping[str, str],
    output: str,
    output_header: str,
) -> str:
    values = _values(task=task, aspect=aspect, inputs=inputs, output=output, output_header=output_header)
    return _template(template, COMMON_PLACEHOLDERS).substitute(values)
