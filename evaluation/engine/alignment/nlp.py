"""spaCy's blank English pipeline with a sentencizer, built once: tokens and sentences for alignment."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

_NLP: Language | None = None


def nlp() -> Language:
    """Return the shared pipeline; built lazily because loading spaCy costs a second the parser never needs."""
    global _NLP
    if _NLP is None:
        import spacy

        pipeline = spacy.blank("en")
        pipeline.add_pipe("sentencizer")
        _NLP = pipeline
    return _NLP


@lru_cache(maxsize=128)
def doc(text: str) -> Doc:
    """Return the tokenized text; cached because every error of an answer is aligned to the same output."""
    return nlp()(text)


def stop_words() -> frozenset[str]:
    from spacy.lang.en.stop_words import STOP_WORDS

    return frozenset(STOP_WORDS)
