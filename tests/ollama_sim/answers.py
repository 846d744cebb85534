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
A decoy prompt (any of those prompts followed by a `### The error to report` section quoting a marked stretch,
quality/engine/decoy_prompt.py) gets that stretch as its one error, with the explanation and severity every
simulated error has, so a decoy explained on the simulator reads like the evaluator's simulated errors.
A DHP direct-scoring prompt (one that ends asking for a line "Score: N" from LO to HI) gets a score that
drops with visible flaws of the judged text (words the inputs do not have, mangled words, repeated or
off-topic sentences), and a DHP perturbation prompt (`<original>` ... `</original>`, answer between `<text>`
tags) gets the original changed as its instruction asks (a name or number swapped, a grammar slip, a
sentence repeated in other words, an off-topic sentence), so a DHP run on the simulator ends with figures.
A planted-error prompt (quality/engine/planted_prompt.py: the output under a `### ... to change` header, answer
between `<text>` tags, stretches to leave listed as `- "..."` lines) gets the output back with one number raised, or
failing that one name swapped for an invented one, outside the listed stretches - a model that follows that prompt.
Different models therefore disagree, but each (model, prompt) always gets the same answer. Every
explanation says it is simulated, so nobody mistakes a tried-out run for model output. None of this
reproduces a real server's behaviour (REAL_SERVERS.md covers the protocol side): it stands in for a model
that follows the prompt, and is invented.
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
    decoy = _decoy_reply(prompt, seed)
    if decoy is not None:
        return decoy
    planted = _planted_reply(prompt, seed)
    if planted is not None:
        return planted
    perturbed = _perturbation_reply(prompt, seed)
    if perturbed is not None:
        return perturbed
    scored = _direct_score_reply(prompt, seed)
    if scored is not None:
        return scored
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
        blocks.append(_explained(number, location, severity))
    if not blocks:
        blocks.append("No Error")
    return "\n\n".join(blocks) + "\n\n" + _overall(prompt, label, seed, n_errors)


def _explained(number: int, location: str, severity: int) -> str:
    """One error block as every simulated annotator writes it."""
    return (f"Error {number}:\n"
            f"Location: {location}\n"
            f'Explanation: (simulated) The phrase "{location}" is not supported by the given input.\n'
            f"Severity: {severity}")


def _overall(prompt: str, label: str, seed: bytes, n_errors: int) -> str:
    """The closing lines: a label, or a 0-100 number when the prompt asks for one."""
    if _NUMERIC_SCALE.search(prompt):
        overall = f"Overall score: {20 * LABELS.index(label) + seed[31] % 20}"
    else:
        overall = f"Overall score: {label}"
    return f"{overall}\nExplanation of the score: Simulated answer: {n_errors} error(s) with respect to this aspect."


# The section quality.engine.decoy_prompt adds after a run's own prompt: the stretch of a decoy to report.
_DECOY_STRETCH = re.compile(
    r'^### The error to report\n.*?The marked stretch:\n"(?P<stretch>.*?)"\nAnswer in the answer',
    re.MULTILINE | re.DOTALL,
)


def _decoy_reply(prompt: str, seed: bytes) -> str | None:
    """A decoy prompt (a run's prompt that ends asking to report one marked stretch) gets that stretch as its one
    error, explained and rated as this simulator explains every error it reports, then the closing lines of an
    annotator's answer, so a decoy reads like the evaluator's real spans. Invented, like the default reply."""
    found = _DECOY_STRETCH.search(prompt)
    if found is None:
        return None
    stretch = " ".join(found["stretch"].split())
    label = LABELS[seed[0] % (len(LABELS) - 1)]  # an answer with an error is never Excellent
    severity = max(1, min(5, 5 - LABELS.index(label) + seed[17] % 2))
    return _explained(1, stretch, severity) + "\n\n" + _overall(prompt, label, seed, 1)


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


# ---- DHP prompts (dhp/engine/scoring.py, dhp/engine/perturb.py) ---------------------------------------------

_SCORE_ASK = re.compile(r'"Score: N"[^\n]*?from\s+(\d+)\s+to\s+(\d+)')
_ORIGINAL = re.compile(r"<original>\n(.*)\n</original>", re.DOTALL)
_INSTRUCTION = re.compile(r"change nothing else:\s*\n(.*?)\n\s*\nKeep the rest", re.DOTALL | re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_INVENTED_NAMES = ("Varnholt", "Quillmere", "Dastrova", "Orlenby", "Keswith")
_OFF_TOPIC = (
    "Penguins huddle together to keep warm through the polar night.",
    "The recipe calls for two cups of flour and a pinch of salt.",
    "Saturn has more known moons than any other planet.",
)
_GRAMMAR_SLIPS = ((" is ", " are "), (" was ", " were "), (" has ", " have "), (" an ", " a "), (" the ", " a the "))


def _direct_score_reply(prompt: str, seed: bytes) -> str | None:
    """A "Score: N" answer: the top score less one point per kind of visible flaw in the judged text."""
    ask = _SCORE_ASK.search(prompt)
    if ask is None:
        return None
    low, high = int(ask.group(1)), int(ask.group(2))
    text = judged_text(prompt).split("\n\nFinish your answer")[0].strip()
    context = prompt[: prompt.rfind(text)] if text and text in prompt else prompt
    known = {w.group().lower() for w in _WORD.finditer(context)}
    words = [w.group() for w in _WORD.finditer(text)]
    content = [w for w in words if w.lower() not in _COMMON]
    unsupported = sum(1 for w in content if w.lower() not in known) / max(1, len(content))
    mangled = sum(1 for w in words if len(w) >= 4 and (not re.search(r"[aeiouy]", w, re.I) or re.search(r"(.)\1\1", w)))
    sentences = [s for s in _SENTENCE_END.split(text) if s.strip()]
    seen: list[set[str]] = []
    repeated = 0
    for sentence in sentences:
        bag = {w.lower() for w in _WORD.findall(sentence)} - _COMMON
        if any(bag and len(bag & other) >= 0.5 * len(bag) for other in seen):
            repeated += 1
        seen.append(bag)
    off_topic = sum(1 for sentence in sentences if sentence.strip() in _OFF_TOPIC)
    flaws = round(2 * unsupported) + min(2, mangled) + min(2, repeated + off_topic)
    score = max(low, min(high, high - flaws - (1 if seed[0] % 5 == 0 else 0)))
    return (f"(simulated) {len(words)} words; {mangled} look mangled, {repeated} sentence(s) repeat, "
            f"{round(100 * unsupported)}% of the content words are not in the inputs.\nScore: {score}")


def _perturbation_reply(prompt: str, seed: bytes) -> str | None:
    """The original between <text> tags, changed as the instruction asks (one change, or three for "several")."""
    original = _ORIGINAL.search(prompt)
    if original is None or "<text>" not in prompt:
        return None
    text = original.group(1)
    found = _INSTRUCTION.search(prompt)
    instruction = (found.group(1) if found else prompt).lower()
    n = 1 if "exactly one" in instruction or instruction.startswith(("pick one", "insert one")) else 3
    sentences = [s for s in _SENTENCE_END.split(text) if s.strip()] or [text]
    if "name" in instruction and "number" in instruction:
        changed = text
        targets = [m for m in re.finditer(r"\b(?:\d+|[A-Z][a-z]{2,})\b", text) if m.start() > 0][:n]
        for index, match in enumerate(reversed(targets)):
            word = match.group()
            invented = _INVENTED_NAMES[(seed[index] + index) % len(_INVENTED_NAMES)]
            new = str(int(word) + 7) if word.isdigit() else invented
            changed = changed[: match.start()] + new + changed[match.end():]
    elif "grammatical" in instruction:
        changed = text
        for old, new in _GRAMMAR_SLIPS:
            if n and old in changed:
                changed = changed.replace(old, new, 1)
                n -= 1
    elif "different words" in instruction:
        out = []
        for index, sentence in enumerate(sentences):
            out.append(sentence)
            if index < n:
                body = sentence.rstrip(".!?")
                out.append("In other words, " + body[:1].lower() + body[1:] + ".")
        changed = " ".join(out)
    elif "off-topic" in instruction:
        out = list(sentences)
        for index in range(n):
            out.insert(min(len(out), 1 + 2 * index), _OFF_TOPIC[(seed[index] + index) % len(_OFF_TOPIC)])
        changed = " ".join(out)
    else:
        changed = text
    if changed == text:  # nothing the instruction could take: still a change, as a model would make one
        changed = text + " " + _OFF_TOPIC[seed[0] % len(_OFF_TOPIC)]
    return f"<text>\n{changed}\n</text>"


# The prompt of quality/engine/planted_prompt.py: the output to change under its own header, the stretches to leave.
_PLANTED_OUTPUT = re.compile(r"^### [^\n]* to change\n(?P<output>.*)\Z", re.MULTILINE | re.DOTALL)
_PLANTED_KEEP = re.compile(r'^- "(?P<stretch>.*)"$', re.MULTILINE)


def _planted_reply(prompt: str, seed: bytes) -> str | None:
    """A planted-error prompt gets its output back with exactly one fact changed: a number outside the stretches it
    was told to leave, raised by 1 to 5 (else a capitalised name there, swapped for an invented one), everything
    else copied. It stands in for a model that follows that prompt; real models also answer with a changed name or
    number and the rest copied (DHP's llm-entities answers, which _perturbation_reply imitates the same way)."""
    found = _PLANTED_OUTPUT.search(prompt)
    if found is None or "<text>" not in prompt:
        return None
    text = found.group("output").strip("\n")
    kept: list[tuple[int, int]] = []
    for stretch in (m.group("stretch") for m in _PLANTED_KEEP.finditer(prompt[:found.start()])):
        kept += [(m.start(), m.end()) for m in re.finditer(re.escape(stretch), text)] if stretch else []

    def free(match: re.Match[str]) -> bool:
        return not any(match.start() < b and a < match.end() for a, b in kept)

    numbers = [m for m in re.finditer(r"(?<![\w.])\d+(?![\w.]\d)", text) if free(m)]
    names = [m for m in re.finditer(r"(?<=[a-z,] )[A-Z][a-z]{2,}\b", text) if free(m)]
    if numbers:
        match = numbers[seed[0] % len(numbers)]
        new = str(int(match.group()) + 1 + seed[1] % 5)
    elif names:
        match = names[seed[0] % len(names)]
        new = _INVENTED_NAMES[seed[1] % len(_INVENTED_NAMES)]
    else:
        return f"<text>\n{text}\n</text>"  # nothing to change: the text comes back as it was, as models do
    return f"<text>\n{text[:match.start()]}{new}{text[match.end():]}\n</text>"
