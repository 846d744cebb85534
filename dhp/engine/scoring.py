"""The direct-scoring prompt of a DHP evaluator (one metric, one text, a 1-5 score) and its answer parser.

The perturbed texts are scored on their own, without the original beside them, so the evaluator must
notice the flaw by itself. Answers are parsed into the evaluation engine's `ParsedAnswer` so the run
scheduler's retry rule (retry an unparseable answer, warmer) applies unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from evaluation.engine.parsing import ParsedAnswer

SCORE_MIN, SCORE_MAX = 1, 5

DIRECT_PROMPT = """You judge the quality of machine-generated text for a {task} task.

Quality criterion: {metric}
{definition}

Read the inputs and the {noun} below. Think about how well the {noun} meets the criterion, then give it one
score from {lo} (very poor) to {hi} (excellent). Judge only this criterion.

{inputs}### {output_header}
{text}

Finish your answer with a line of the form "Score: N", where N is a whole number from {lo} to {hi}."""

_SCORE_LINE = re.compile(r"score\s*[:=]\s*\**\s*([0-9]+(?:\.[0-9]+)?)", re.IGNORECASE)
_BARE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*$")


def direct_prompt(
    *, task: str, metric: str, definition: str, noun: str, inputs: Mapping[str, str], output_header: str, text: str,
    output_only: bool = False,
) -> str:
    shown = "" if output_only else "".join(f"### {header}\n{value}\n\n" for header, value in inputs.items())
    return DIRECT_PROMPT.format(
        task=task, metric=metric, definition=definition.strip() or "(no definition given)", noun=noun,
        inputs=shown, output_header=output_header, text=text, lo=SCORE_MIN, hi=SCORE_MAX,
    )


def parse_direct_score(answer: str) -> ParsedAnswer:
    """Read the last "Score: N" (or a bare number answer) in range; anything else fails and is retried."""
    found = _SCORE_LINE.findall(answer)
    value = found[-1] if found else (m.group(1) if (m := _BARE.match(answer)) else None)
    if value is None:
        return ParsedAnswer(problems=["no 'Score: N' line in the answer"])
    score = float(value)
    if not SCORE_MIN <= score <= SCORE_MAX:
        return ParsedAnswer(problems=[f"score {value} is outside {SCORE_MIN}-{SCORE_MAX}"])
    return ParsedAnswer(score=score, status="ok")
