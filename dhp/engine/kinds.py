"""The perturbation vocabulary, written once: kind names, their level, method and degrees, how we describe
each quality issue to experts, and the default sizes k per task (the DHP paper's Table 2).

Everything else (model choices, the CLI, survey questions, statistics, templates) derives from this module.
"""

from __future__ import annotations

from dataclasses import dataclass

from dhp.engine.errors import DhpError

LEVELS: tuple[str, ...] = ("character", "word", "sentence")
METHODS: tuple[str, ...] = ("rule", "llm")
DEGREES: tuple[str, ...] = ("minor", "major")


@dataclass(frozen=True)
class BaseKind:
    """A perturbation method before its degree is chosen."""

    name: str
    level: str
    method: str
    title: str
    issue: str  # the quality issue as the survey describes it, in our words
    example: str  # a short before -> after example for the survey


BASE_KINDS: dict[str, BaseKind] = {
    k.name: k
    for k in (
        BaseKind(
            "char-delete", "character", "rule", "Missing characters",
            "Letters or digits have dropped out of words here and there, so some words are misspelt.",
            "The committee approved the budget. -> The commitee aproved the bdget.",
        ),
        BaseKind(
            "typo", "character", "rule", "Typing mistakes",
            "The text contains keyboard slips: a neighbouring key hit instead of the right one, or an extra key.",
            "The match ended in a draw. -> The matcg ended in a drsaw.",
        ),
        BaseKind(
            "word-delete", "word", "rule", "A run of missing words",
            "Several consecutive words are missing, leaving a gap in a sentence.",
            "She left the office early to catch the train home. -> She left the train home.",
        ),
        BaseKind(
            "sentence-reorder", "sentence", "rule", "Sentences out of order",
            "The sentences are all there but some appear in the wrong order, so the text no longer flows.",
            "It rained all morning. By noon the river rose. Roads closed. -> Roads closed. It rained all "
            "morning. By noon the river rose.",
        ),
        BaseKind(
            "swap-ending", "sentence", "rule", "An ending from elsewhere",
            "The last sentence (or the whole answer) was taken from a different text and does not belong here.",
            "The chef tasted the soup and added salt. -> The chef tasted the soup. The striker scored twice.",
        ),
        BaseKind(
            "llm-entities", "word", "llm", "Invented names and numbers",
            "Names, places, figures or technical terms were swapped for plausible but made-up ones.",
            "Paris hosted the 2024 Olympics. -> Velmora hosted the 2031 Olympics.",
        ),
        BaseKind(
            "llm-grammar", "word", "llm", "Grammar mistakes",
            "The text contains grammatical errors such as wrong agreement, tense or prepositions.",
            "The players were tired after the game. -> The players was tired on the game.",
        ),
        BaseKind(
            "llm-rewrite", "sentence", "llm", "Repeated content in other words",
            "A sentence is followed by a reworded copy of itself, so the text says the same thing twice.",
            "Sales grew by ten percent. -> Sales grew by ten percent. Revenue from sales went up a tenth.",
        ),
        BaseKind(
            "llm-insert", "sentence", "llm", "An inserted unrelated sentence",
            "A sentence that has nothing to do with the rest was slipped into the text.",
            "The bridge reopened on Monday. Traffic is normal. -> The bridge reopened on Monday. Penguins "
            "cannot fly. Traffic is normal.",
        ),
    )
}


@dataclass(frozen=True)
class Kind:
    """A perturbation with its degree, named `base:degree` (e.g. `typo:major`)."""

    base: BaseKind
    degree: str

    @property
    def name(self) -> str:
        return f"{self.base.name}:{self.degree}"

    @property
    def level(self) -> str:
        return self.base.level

    @property
    def method(self) -> str:
        return self.base.method

    @property
    def is_llm(self) -> bool:
        return self.base.method == "llm"


KINDS: dict[str, Kind] = {
    f"{base}:{degree}": Kind(spec, degree) for base, spec in BASE_KINDS.items() for degree in DEGREES
}
RULE_KINDS: tuple[str, ...] = tuple(name for name, kind in KINDS.items() if not kind.is_llm)
# What `dhp` and `perturb` use without --kinds: the rule-based kinds (they need no LLM).
DEFAULT_KINDS: tuple[str, ...] = RULE_KINDS


def get_kind(name: str) -> Kind:
    kind = KINDS.get(name.strip())
    if kind is None:
        raise DhpError(f"unknown perturbation kind {name!r}; kinds are {', '.join(KINDS)}", field="kinds")
    return kind


def parse_kinds(text: str | None) -> list[Kind]:
    """Return the kinds of a comma-separated list (the CLI's --kinds), in order, without repeats."""
    if not text:
        return [KINDS[name] for name in DEFAULT_KINDS]
    names = list(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    if not names:
        raise DhpError("--kinds is empty", field="kinds")
    return [get_kind(name) for name in names]


# Default k per task: (character-level minor, major), (word-deletion minor, major). The paper's Table 2
# gives the character sizes for summarization (SummEval), question answering and translation, and the word
# deletion sizes for translation; story completion uses 5 characters without degrees (we keep 5 for minor
# and take question answering's 25 for major). Tasks the paper does not cover get summarization's sizes.
# Sentence reordering swaps k=2 sentences (minor) or shuffles all of them (major) for every task.
_DEFAULT_K: dict[str, tuple[tuple[int, int], tuple[int, int]]] = {
    "summarization": ((10, 50), (5, 25)),
    "story-generation": ((5, 25), (5, 25)),
    "question-answering": ((5, 25), (5, 25)),
    "translation": ((10, 50), (5, 25)),
}
_FALLBACK_K = ((10, 50), (5, 25))
ALL = 0  # k for "every sentence"


def default_k(task: str, kind: Kind) -> int | None:
    """Return the paper's size k for a kind on a task (None for kinds without a size)."""
    chars, words = _DEFAULT_K.get(task, _FALLBACK_K)
    index = DEGREES.index(kind.degree)
    if kind.base.name in ("char-delete", "typo"):
        return chars[index]
    if kind.base.name == "word-delete":
        return words[index]
    if kind.base.name == "sentence-reorder":
        return 2 if kind.degree == "minor" else ALL
    return None


def default_k_table(task: str) -> dict[str, int]:
    """Every sized kind's default k for a task (the editable form's initial values)."""
    return {name: k for name, kind in KINDS.items() if (k := default_k(task, kind)) is not None}
