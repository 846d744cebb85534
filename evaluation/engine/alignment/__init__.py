"""Find an LLM-quoted error location in the output text and return exact character offsets.

Three rules keep a span on the words the model meant: a normalized or fuzzy match must contain the
location's numbers, dates and names (`anchors`); notes written into a location are instructions, and their
ordinals pick the occurrence (`notes`); among several occurrences the explanation's cues are
looked for in each occurrence's clause, and a span the cues do not decide is marked ambiguous
(`occurrences`).

The package is split by concern: `normalize` (loose text with a map back to offsets), `anchors`, `matches`
(exact, normalized and fuzzy search), `notes`, `occurrences`, `nlp` (spaCy, built once) and `align`.
"""

from __future__ import annotations

from evaluation.engine.alignment.align import DEFAULT_FUZZY_THRESHOLD, AlignedSpan, align_location, split_location
from evaluation.engine.alignment.normalize import normalize_with_map

__all__ = ["DEFAULT_FUZZY_THRESHOLD", "AlignedSpan", "align_location", "normalize_with_map", "split_location"]
