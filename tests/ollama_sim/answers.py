"""Replies of the simulated Ollama: scripted rules, an optional callable, and a deterministic default.

The default reply imitates an OpeNLGauge annotator. It looks for the judged text under the last
markdown header (`#` lines) whose title is one of OUTPUT_HEADERS (`### Output`, `### Generated Text`,
`### Response`, ...); without such a header it uses the whole prompt. From a sha256 of model and
prompt it picks a score label and, for labels below Excellent, one to three errors whose `Location:`
is a run of one to three words copied verbatim from that text, so span alignment finds them.
Prompts that ask for a score "between 0 and 100" (or "0-100") get a number instead of a label.
Different models therefore disagree, but each (model, prompt) always gets the same answer.
"""

from __future__ import annotations

import hashlib
import re

from .config import SimConfig, SimRequest

OUTPUT_HEADERS: tuple[str, ...] = (
    "output",
    "model output",
    "generated text",
    "response",
    "text",
    "summary",
    "story",
    "answer",
    "translation",
    "simplified text",
)
LABELS: tuple[str, ...] = ("Unacceptable", "Poor", "Fair", "Good", "Excellent")
_ERRORS_PER_LABEL = {"Unacceptable": 3, "Poor": 2, "Fair": 2, "Good": 1, "Excellent": 0}
_HEADER = re.compile(r"^[ \t]*#{1,6}[ \t]*(?P<title>[^#\n]*?)[ \t]*:?[ \t]*$", re.MULTILINE)
_WORD = re.compile(r"[^\W_][\w'-]*")
_NUMERIC_SCALE = re.compile(r"\b0\s*(?:-|–|to|and)\s*100\b")


def choose_reply(config: SimConfig, request: SimRequest) -> str:
    """Return the reply: the config's callable if it answers, else the first matching rule, else default."""
    if config.answer is not None:
        reply = config.answer(request)
        if reply is not None:
            return reply
    for rule in config.rules:
        if rule.matches(request.model, request.prompt):
            return rule.reply
    return default_reply(request.model, request.prompt)


def judged_text(prompt: str) -> str:
    """Return the text under the last output-like header of the prompt, or the prompt itself."""
    headers = list(_HEADER.finditer(prompt))
    for index in range(len(headers) - 1, -1, -1):
        if headers[index].group("title").strip().lower() in OUTPUT_HEADERS:
            start = headers[index].end()
            end = headers[index + 1].start() if index + 1 < len(headers) else len(prompt)
            return prompt[start:end].strip()
    return prompt


def default_reply(model: str, prompt: str) -> str:
    """Return a well-formed annotator answer derived deterministically from model and prompt."""
    seed = hashlib.sha256(f"{model}\n{prompt}".encode()).digest()
    text = judged_text(prompt)
    words = list(_WORD.finditer(text))
    label = LABELS[seed[0] % len(LABELS)] if words else "Excellent"
    n_errors = min(_ERRORS_PER_LABEL[label], len(words))
    blocks: list[str] = []
    for number in range(1, n_errors + 1):
        first = seed[number] % len(words)
        last = min(len(words) - 1, first + seed[number + 8] % 3)
        location = text[words[first].start() : words[last].end()]
        severity = max(1, min(5, 5 - LABELS.index(label) + seed[number + 16] % 2))
        blocks.append(
            f"Error {number}:\n"
            f"Location: {location}\n"
            f'Explanation: The phrase "{location}" is not supported by the given input.\n'
            f"Severity: {severity}"
        )
    if not blocks:
        blocks.append("No Error")
    if _NUMERIC_SCALE.search(prompt):
        score = 20 * LABELS.index(label) + seed[31] % 20
        overall = f"Overall score: {score}"
    else:
        overall = f"Overall score: {label}"
    explanation = f"Explanation of the score: The text has {n_errors} error(s) with respect to this aspect."
    return "\n\n".join(blocks) + f"\n\n{overall}\n{explanation}"
