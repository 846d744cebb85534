"""Replies of the simulated Ollama: scripted rules, an optional callable, and a deterministic default.

The default reply imitates an OpeNLGauge annotator. It looks for the judged text under the last
markdown header (`#` lines) whose title is one of OUTPUT_HEADERS (`### Output`, `### Generated Text`,
`### Response`, ...); without such a header it uses the whole prompt. From a sha256 of model and
prompt it picks a score label and, for labels below Excellent, one to three errors whose `Location:`
is a run of one to three words copied verbatim from that text, so span alignment finds them. A location
starts, where the text has any, at a word that appears nowhere earlier in the prompt (the inputs) and is
not a common function word, so on the demo items the errors point at unsupported words and read plausibly.
Prompts that ask for a score "between 0 and 100" (or "0-100") get a number instead of a label.
A supervisor's prompt (one that quotes annotators' error lists as `Annotation set N:` after the text) gets
those errors merged instead: one per location, a location inside another one folded into it, the highest
severity kept, at most 8.
Different models therefore disagree, but each (model, prompt) always gets the same answer. Every
explanation says it is simulated, so nobody mistakes a tried-out run for model output.
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
_COMMON = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "from", "has", "have", "he", "her", "his", "in",
    "into", "is", "it", "its", "of", "on", "or", "she", "that", "the", "their", "there", "they", "this", "to", "was",
    "were", "which", "with",
})


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
    merged = _merged_reply(prompt, text)
    if merged is not None:
        return merged
    words = list(_WORD.finditer(text))
    label = LABELS[seed[0] % len(LABELS)] if words else "Excellent"
    n_errors = min(_ERRORS_PER_LABEL[label], len(words))
    blocks: list[str] = []
    unsupported = _unsupported_words(prompt, text, words)
    for number in range(1, n_errors + 1):
        first = unsupported[seed[number] % len(unsupported)] if unsupported else seed[number] % len(words)
        last = min(len(words) - 1, first + seed[number + 8] % 3)
        location = text[words[first].start() : words[last].end()]
        severity = max(1, min(5, 5 - LABELS.index(label) + seed[number + 16] % 2))
        blocks.append(
            f"Error {number}:\n"
            f"Location: {location}\n"
            f'Explanation: (simulated) The phrase "{location}" is not supported by the given input.\n'
            f"Severity: {severity}"
        )
    if not blocks:
        blocks.append("No Error")
    if _NUMERIC_SCALE.search(prompt):
        score = 20 * LABELS.index(label) + seed[31] % 20
        overall = f"Overall score: {score}"
    else:
        overall = f"Overall score: {label}"
    explanation = f"Explanation of the score: Simulated answer: {n_errors} error(s) with respect to this aspect."
    return "\n\n".join(blocks) + f"\n\n{overall}\n{explanation}"


def _unsupported_words(prompt: str, text: str, words: list[re.Match[str]]) -> list[int]:
    """Return the indexes of the text's words that the prompt before it never uses (common words aside)."""
    cut = prompt.find(text) if text != prompt else -1
    known = {match.group().lower() for match in _WORD.finditer(prompt[:cut] if cut > 0 else "")}
    return [
        index for index, word in enumerate(words)
        if word.group().lower() not in known and word.group().lower() not in _COMMON
    ]


_ANNOTATION_SET = re.compile(r"^Annotation set \d+:", re.MULTILINE)
_QUOTED_ERROR = re.compile(
    r"^Location:[ \t]*(?P<location>.+?)[ \t]*\nExplanation:[ \t]*(?P<explanation>.+?)[ \t]*\n"
    r"Severity:[ \t]*(?P<severity>[1-5])", re.MULTILINE,
)


def _merged_reply(prompt: str, text: str) -> str | None:
    """Return a supervisor's merge of the error lists quoted after the text, or None for other prompts."""
    cut = prompt.rfind(text) if text != prompt else -1
    rest = prompt[cut + len(text):] if cut >= 0 else ""
    if not _ANNOTATION_SET.search(rest):
        return None
    merged: dict[str, tuple[str, int]] = {}
    for match in _QUOTED_ERROR.finditer(rest):
        location, severity = match["location"], int(match["severity"])
        if location not in text:
            continue
        home = next((kept for kept in merged if location in kept or kept in location), None)
        if home is None:
            merged[location] = (match["explanation"], severity)
            continue
        explanation, kept_severity = merged.pop(home)
        wider = home if location in home else location
        merged[wider] = (explanation, max(severity, kept_severity))
    kept = sorted(merged.items(), key=lambda pair: -pair[1][1])[:8]
    if not kept:
        return "No Error\n\nOverall score: Excellent\nExplanation of the score: Simulated answer: no errors to merge."
    blocks = [
        f"Error {n}:\nLocation: {location}\nExplanation: {explanation}\nSeverity: {severity}"
        for n, (location, (explanation, severity)) in enumerate(kept, start=1)
    ]
    label = LABELS[max(0, 4 - len(kept))]
    summary = f"Overall score: {label}\nExplanation of the score: Simulated answer: {len(kept)} error(s)."
    return "\n".join(blocks) + "\n\n" + summary
