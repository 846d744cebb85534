"""The prompt that asks an evaluator's own model to explain a decoy's stretch as an error, and the error its answer
gives for that stretch (Django-free).

The prompt is the one the model answered for the same output in its run (same task, inputs, output and answer
format, so the same voice and a shared prefix for the server's prompt cache), followed by a section that hands it
the stretch to report. The answer is read by the run's own parser; only an error whose location lands on the
stretch is used.
"""

from __future__ import annotations

from collections.abc import Sequence
from string import Template

from evaluation.engine.alignment import align_location
from evaluation.engine.parsing import ParsedError
from stats.overlap import shared_chars

SECTION_HEADER = "### The error to report"
STRETCH_LEAD = "The marked stretch:"

# `string.Template`: the values are substituted, never re-read, so `$` or braces in the stretch are safe.
_SECTION = Template(f"""
{SECTION_HEADER}
This time, do not look for problems yourself: a reviewer has already marked one stretch of the ${{noun}} as a problem \
of its ${{aspect}}, and your answer reports that stretch alone. {STRETCH_LEAD}
"${{stretch}}"
Answer in the answer format given above, with exactly one error: its Location is the marked stretch, copied word \
for word; its Explanation says in your own words why this stretch harms the ${{aspect}} of the ${{noun}}; its \
Severity rates it from 1 (slight) to 5 (grave). Write every other part the format asks for as usual.
""")

MIN_OVERLAP = 0.5  # an error counts as the stretch's when their characters overlap this much (Jaccard)


def decoy_prompt(run_prompt: str, *, stretch: str, output_noun: str, aspect_name: str) -> str:
    """The run's own prompt for the output, then the section naming the stretch to report."""
    section = _SECTION.substitute(stretch=stretch, noun=output_noun or "text", aspect=aspect_name or "quality")
    return run_prompt.rstrip("\n") + "\n" + section


def _jaccard(a: tuple[int, int], b: tuple[int, int]) -> float:
    inter = shared_chars(a, b)
    union = max(a[1], b[1]) - min(a[0], b[0])
    return inter / union if union > 0 else 0.0


def error_at(errors: Sequence[ParsedError], output: str, start: int, end: int) -> ParsedError | None:
    """The answer's error about output[start:end]: the one whose location, aligned to the output as a run's
    locations are, overlaps the stretch most (at least MIN_OVERLAP), or quotes the same words where they occur
    again; None when no error is about it (the answer reported something else, or nothing)."""
    stretch = " ".join(output[start:end].split()).casefold()
    best: tuple[float, ParsedError] | None = None
    for error in errors:
        if not (error.explanation or "").strip():
            continue
        for span in align_location(error.location, output, explanation=error.explanation):
            if span.start is None or span.end is None:
                continue
            same_words = " ".join(output[span.start:span.end].split()).casefold() == stretch
            score = 1.0 if same_words else _jaccard((span.start, span.end), (start, end))
            if score >= MIN_OVERLAP and (best is None or score > best[0]):
                best = (score, error)
    return best[1] if best else None
