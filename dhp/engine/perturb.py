"""Rule-based perturbations and the LLM-based ones' prompts and answer checks; seeded and Django-free.

Every function takes its own `random.Random`, so a (seed, kind, item) triple always gives the same text.
The `typo` package reseeds Python's global generator in its constructor; `_typo` saves and restores the
global state around it and seeds it from our generator, so it neither depends on nor disturbs other code.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from dhp.engine.errors import DhpError
from dhp.engine.kinds import ALL, Kind


class Skip(DhpError):
    """This kind does not fit this text (too short, one sentence, ...); the message says why."""


@dataclass(frozen=True)
class Perturbed:
    text: str
    details: dict[str, Any] = field(default_factory=dict)


_ALNUM = re.compile(r"[^\W_]", re.UNICODE)
_ASCII_LETTER = re.compile(r"[A-Za-z]")
_WORD = re.compile(r"\S+")


@lru_cache(maxsize=1)
def _sentencizer():
    """A blank English spaCy pipeline with the rule-based sentencizer: no model download needed."""
    import spacy  # noqa: PLC0415 - heavy; loaded on the first sentence-level perturbation only

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp


def sentences(text: str) -> list[str]:
    """Return the text's sentences (spaCy's sentencizer), stripped, without empty ones."""
    return [s.text.strip() for s in _sentencizer()(text).sents if s.text.strip()]


def seed_for(seed: int, kind: str, item_key: str) -> int:
    """A stable per-(seed, kind, item) seed; Python's hash() of str is salted per process, so not that."""
    digest = hashlib.sha256(f"{seed}\x1f{kind}\x1f{item_key}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


# --------------------------------------------------------------------------------------------- character
def char_delete(text: str, k: int, rng: random.Random) -> Perturbed:
    """Delete k alphanumeric characters at random positions."""
    positions = [m.start() for m in _ALNUM.finditer(text)]
    if len(positions) <= k:
        raise Skip(f"the text has {len(positions)} letters or digits; deleting {k} would leave none")
    chosen = sorted(rng.sample(positions, k))
    drop = set(chosen)
    out = "".join(ch for i, ch in enumerate(text) if i not in drop)
    return Perturbed(out, {"positions": chosen})


def _typo(ch: str, op: str, seed: int) -> str:
    """One typo on one character with the `typo` package, keeping Python's global RNG as it was."""
    import typo  # noqa: PLC0415 - only this function may touch it (it reseeds the global RNG)

    state = random.getstate()
    try:
        errer = typo.StrErrer(ch, seed=seed)
        result = errer.nearby_char() if op == "nearby" else errer.extra_char()
        return str(result.result)
    finally:
        random.setstate(state)


def typos(text: str, k: int, rng: random.Random) -> Perturbed:
    """Make k typos at k distinct, non-adjacent letters: a neighbouring key instead of the letter, or an
    extra neighbouring key before it. `edits` records (position, before, after) against the original."""
    candidates = [m.start() for m in _ASCII_LETTER.finditer(text)]
    rng.shuffle(candidates)
    chosen: list[int] = []
    taken: set[int] = set()
    for pos in candidates:
        if len(chosen) == k:
            break
        if {pos - 1, pos, pos + 1} & taken:
            continue
        chosen.append(pos)
        taken.add(pos)
    if len(chosen) < k:
        raise Skip(f"the text has room for {len(chosen)} separate typos, fewer than k={k}")
    edits: list[list[Any]] = []
    pieces: list[str] = []
    last = 0
    for pos in sorted(chosen):
        op = rng.choice(("nearby", "extra"))
        after = _typo(text[pos], op, rng.randrange(2**32))
        if after == text[pos]:  # a key without neighbours in the layout: fall back to an extra key
            after = _typo(text[pos], "extra", rng.randrange(2**32))
        pieces.append(text[last:pos])
        pieces.append(after)
        last = pos + 1
        edits.append([pos, text[pos], after])
    pieces.append(text[last:])
    return Perturbed("".join(pieces), {"edits": edits})


# --------------------------------------------------------------------------------------------- word
def word_delete(text: str, k: int, rng: random.Random) -> Perturbed:
    """Delete k consecutive words (whitespace-separated) starting at a random word."""
    words = list(_WORD.finditer(text))
    if len(words) <= k:
        raise Skip(f"the text has {len(words)} words; deleting {k} consecutive ones would leave none")
    first = rng.randrange(len(words) - k + 1)
    start = words[first].start()
    end = words[first + k].start() if first + k < len(words) else len(text)
    out = (text[:start] + text[end:]).rstrip() if first + k == len(words) else text[:start] + text[end:]
    return Perturbed(out, {"first_word": first, "deleted": text[start:end].strip()})


# --------------------------------------------------------------------------------------------- sentence
def sentence_reorder(text: str, k: int, rng: random.Random) -> Perturbed:
    """Swap two sentences (k=2) or shuffle them all (k=ALL) into an order different from the original."""
    parts = sentences(text)
    if len(parts) < 2:
        raise Skip("the text has one sentence; there is nothing to reorder")
    if len(set(parts)) < 2:
        raise Skip("all sentences are identical; any order is the same text")
    order = list(range(len(parts)))
    if k == ALL or k >= len(parts):
        while [parts[i] for i in order] == parts:
            rng.shuffle(order)
    else:
        if k != 2:
            raise DhpError(f"sentence-reorder takes k=2 or all, not {k}")
        while True:
            a, b = rng.sample(range(len(parts)), 2)
            if parts[a] != parts[b]:
                break
        order[a], order[b] = order[b], order[a]
    return Perturbed(" ".join(parts[i] for i in order), {"order": order})


def swap_ending(text: str, degree: str, others: Sequence[str], rng: random.Random) -> Perturbed:
    """Minor: replace the last sentence with another text's last sentence. Major: replace the whole text
    with another text (the paper's random answer). The donor is drawn among texts that differ."""
    own = sentences(text)
    candidates = list(range(len(others)))
    rng.shuffle(candidates)
    for index in candidates:
        donor = others[index]
        if degree == "major":
            if donor.strip() and donor.strip() != text.strip():
                return Perturbed(donor.strip(), {"donor": index})
            continue
        donor_parts = sentences(donor)
        if donor_parts and own and donor_parts[-1] != own[-1]:
            return Perturbed(" ".join([*own[:-1], donor_parts[-1]]), {"donor": index})
    raise Skip("no other text of the dataset has a different ending to swap in")


def rule_perturb(kind: Kind, text: str, *, k: int | None, rng: random.Random, others: Sequence[str]) -> Perturbed:
    """Apply a rule-based kind; `others` are the dataset's other outputs (for swap-ending)."""
    name = kind.base.name
    if name == "swap-ending":
        return swap_ending(text, kind.degree, others, rng)
    if k is None or k < 0:
        raise DhpError(f"{kind.name} needs a size k")
    if name == "char-delete":
        return char_delete(text, k, rng)
    if name == "typo":
        return typos(text, k, rng)
    if name == "word-delete":
        return word_delete(text, k, rng)
    if name == "sentence-reorder":
        return sentence_reorder(text, k, rng)
    raise DhpError(f"{kind.name} is not a rule-based kind")


# --------------------------------------------------------------------------------------------- LLM-based
_LLM_TASKS: dict[str, dict[str, str]] = {
    "llm-entities": {
        "minor": "Replace exactly one important name, place, number or technical term with an invented one "
                 "that sounds plausible but is not in the original.",
        "major": "Replace several (three or more, if the text has them) names, places, numbers or technical "
                 "terms with invented ones that sound plausible but are not in the original.",
    },
    "llm-grammar": {
        "minor": "Introduce exactly one grammatical mistake (for example wrong subject-verb agreement, a wrong "
                 "tense, a wrong preposition or a broken sentence).",
        "major": "Introduce several (three or more) grammatical mistakes of different sorts (agreement, tense, "
                 "prepositions, pronouns, broken sentences).",
    },
    "llm-rewrite": {
        "minor": "Pick one sentence, say it again in different words, and put the reworded copy right after "
                 "the sentence it repeats.",
        "major": "Pick two or more sentences, say each again in different words, and put each reworded copy "
                 "right after the sentence it repeats.",
    },
    "llm-insert": {
        "minor": "Insert one new sentence that is off-topic for this text at a place of your choice.",
        "major": "Insert two or more new sentences that are off-topic for this text at places of your choice.",
    },
}

LLM_PROMPT = """You are helping to build a benchmark that checks whether automatic evaluators notice flaws in text.
Below is a {noun} written for a {task} task. Change it as follows and change nothing else:

{instruction}

Keep the rest of the wording, the order and the formatting as they are. Do not explain or comment.
Write the changed {noun} between the lines <text> and </text>.

Original {noun}:
<original>
{text}
</original>"""

_TAGGED = re.compile(r"<text>\s*(.*?)\s*(?:</text>|$)", re.DOTALL | re.IGNORECASE)


def llm_prompt(kind: Kind, text: str, *, task: str, noun: str) -> str:
    instruction = _LLM_TASKS[kind.base.name][kind.degree]
    return LLM_PROMPT.format(instruction=instruction, text=text, task=task, noun=noun)


def _normalize(text: str) -> str:
    return " ".join(text.split())


def llm_answer_text(answer: str, original: str) -> Perturbed:
    """Return the perturbed text from the model's raw answer; Skip when it is empty or not a change."""
    match = _TAGGED.search(answer)
    text = (match.group(1) if match else answer).strip()
    if not text:
        raise Skip("the model's answer holds no text")
    if _normalize(text) == _normalize(original):
        raise Skip("the model returned the text unchanged")
    return Perturbed(text, {"tagged": bool(match)})
