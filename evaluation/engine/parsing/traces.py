"""Thinking traces left in an answer's content: cut away before parsing, so a trace's drafts never count."""

from __future__ import annotations

import re

# tags of the reasoning models we know of: DeepSeek-R1/Qwen3 <think>, others <thinking>/<reasoning>,
# OpenThinker's begin/end_of_thought, Magistral's [THINK], Seed's <seed:think>, the ollama CLI's banner
_OPEN = re.compile(
    r"<(?:think|thinking|reasoning|thought|seed:think)>|<\|begin_of_thought\|>|\[THINK\]|^\s*Thinking\.\.\.\s*$",
    re.IGNORECASE | re.MULTILINE,
)
_CLOSE = re.compile(
    r"</(?:think|thinking|reasoning|thought|seed:think)>|<\|end_of_thought\|>|\[/THINK\]|^\s*\.\.\.done thinking\.\s*$",
    re.IGNORECASE | re.MULTILINE,
)
_SOLUTION_TAGS = re.compile(r"<\|(?:begin|end)_of_solution\|>|</?(?:answer|output|final_answer)>", re.IGNORECASE)


def strip_traces(text: str) -> tuple[str, list[str]]:
    """Return the final answer without its thinking trace(s), and notes on what was cut.

    Everything up to the last closing tag is trace (R1's chat template puts the opening tag in the prompt,
    so content may hold only the closing one). A trace that never closes means the answer was cut inside
    it: only what came before the opening tag is answer.
    """
    notes: list[str] = []
    closes = list(_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end() :]
        notes.append("thinking trace removed")
    opening = _OPEN.search(text)
    if opening:
        text = text[: opening.start()]
        notes.append("thinking trace never closed (the answer was cut inside it); the trace is not read")
    return _SOLUTION_TAGS.sub("", text), notes
