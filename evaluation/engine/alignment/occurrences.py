"""Choose which of several occurrences of a location an error means: by a note's ordinal, then by the clause.

An explanation names the subject of the claim it corrects ("Lee Wong had 7 rebounds, not 9"). A cue counts
for an occurrence when it stands in the occurrence's own clause, or in the clause that gives that clause its
subject ("..., who had 9 rebounds" belongs to the name before the comma); a cue elsewhere in the sentence
counts a quarter. Character distance is not used: in "Ana Ruiz had 9 rebounds and Lee Wong had 9 rebounds"
"Lee Wong" is nearer to the first "9 rebounds" than to the second it is the subject of. When neither a note
nor the cues decide, the first occurrence is kept and the span is marked ambiguous.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from evaluation.engine.alignment.nlp import doc, stop_words
from evaluation.engine.alignment.notes import Pick
from stats.overlap import shared_chars

# words that open a new clause; a clause boundary is also any of , ; : — outside brackets
_CLAUSE_OPENERS = frozenset(
    [
        "and", "but", "while", "whereas", "although", "though", "as", "after", "before", "when", "who",
        "whom", "whose", "which", "where", "since", "because", "yet", "so", "or", "nor",
    ]
)
_BOUNDARY_PUNCT = frozenset(",;:—–")
_IN_CLAUSE = 1.0
_IN_SENTENCE = 0.25
# the best occurrence must lead the runner-up by this much to count as chosen by the explanation
_MARGIN = 0.5

_CUE_QUOTED = re.compile(r"[\"“”‘’`']([^\"“”‘’`']{1,80})[\"“”‘’`']")
_CUE_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)?")
_CUE_NAME = re.compile(r"\b[A-Z][\w'’-]+")
# a value: a number (with its unit word) or a run of capitalised words
_VALUE = r"(?:\d+(?:[.,-]\d+)*(?:\s+[a-z]+)?|(?:[A-Z][\w'’.-]*\s+){0,3}[A-Z][\w'’.-]*|[a-z]+)"
_REPLACEMENT = re.compile(
    rf"(?P<value>{_VALUE})\s*,?\s+(?:and\s+|but\s+)?not\s"
    rf"|(?:should\s+(?:be|read|say)|instead\s+of|rather\s+than|correct\s+(?:value|number|answer)\s+is)"
    rf"\s*:?\s*(?P<after>{_VALUE})"
)
_NUMBER_UNIT = re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)?)\s+([A-Za-z]+)")
_WORDS = re.compile(r"\d+(?:[.,]\d+)*|\w+")


@dataclass(frozen=True)
class Clause:
    start: int
    end: int
    sentence: int
    names: tuple[tuple[int, int], ...]  # character ranges of capitalised name tokens


@dataclass(frozen=True)
class Choice:
    span: tuple[int, int]
    ambiguous: bool
    note: str


def _words(text: str) -> set[str]:
    return {w.replace(",", "") for w in _WORDS.findall(text.lower())}


@lru_cache(maxsize=64)
def _layout(output: str) -> tuple[tuple[Clause, ...], tuple[tuple[int, int], ...]]:
    """Return the output's clauses and its sentences (character ranges)."""
    stops = stop_words()
    clauses: list[Clause] = []
    sentences: list[tuple[int, int]] = []
    for s_index, sent in enumerate(doc(output).sents):
        sentences.append((sent.start_char, sent.end_char))
        start: int | None = None
        end = sent.start_char
        names: list[tuple[int, int]] = []
        depth = 0  # a bracketed aside ("(4-7 FG, 2-2 FT)") belongs to its clause and is not split
        for token in sent:
            if token.is_space:
                continue
            depth += (token.text in "([") - (token.text in ")]")
            depth = max(depth, 0)
            opens = token.lower_ in _CLAUSE_OPENERS and start is not None
            if not depth and (token.text in _BOUNDARY_PUNCT or opens):
                if start is not None:
                    clauses.append(Clause(start, end, s_index, tuple(names)))
                start, names = (token.idx, []) if opens else (None, [])
                end = token.idx + len(token.text)
                if not opens:
                    continue
            if start is None:
                start = token.idx
            end = token.idx + len(token.text)
            # capitalised words, but not abbreviations ("FG", "FT"): those are column names, not subjects
            if token.text[:1].isupper() and token.lower_ not in stops and token.is_alpha and not (
                token.is_upper and len(token.text) <= 3
            ):
                names.append((token.idx, token.idx + len(token.text)))
        if start is not None:
            clauses.append(Clause(start, end, s_index, tuple(names)))
    return tuple(clauses), tuple(sentences)


def _replacements(explanation: str) -> set[str]:
    """Return the words an explanation offers as the correct value ("Lakers, not Bucks", "should be 7").

    The correct value is not a pointer to the place: it tends to stand near another occurrence ("the Bucks
    defeated the Lakers"), so it would pull the choice the wrong way.
    """
    words: set[str] = set()
    for match in _REPLACEMENT.finditer(explanation):
        words |= _words(match.group("value") or match.group("after") or "")
    return words


def explanation_cues(explanation: str, location: str) -> set[str]:
    """Return the explanation's cue words (quoted words, numbers, names), minus the location's own words and
    the correct values it offers."""
    stops = stop_words()
    cues: set[str] = set()
    for quoted in _CUE_QUOTED.findall(explanation):
        cues.update(w for w in _words(quoted) if w not in stops)
    cues.update(n.replace(",", "") for n in _CUE_NUMBER.findall(explanation))
    cues.update(re.sub(r"['’]s?$", "", w.lower()) for w in _CUE_NAME.findall(explanation) if w.lower() not in stops)
    own = _words(location)
    # "Pachulia had 10 rebounds" about the location "12 rebounds": 10 is the correction, not a pointer
    corrections = {n.replace(",", "") for n, unit in _NUMBER_UNIT.findall(explanation) if unit.lower() in own}
    return {c for c in cues if len(c) >= 2 or c.isdigit()} - own - _replacements(explanation) - corrections


def _context(output: str, span: tuple[int, int]) -> tuple[set[str], set[str]]:
    """Return the words of the occurrence's clause (with the clause giving it its subject) and of its sentence."""
    clauses, sentences = _layout(output)
    start, end = span
    own = [i for i, c in enumerate(clauses) if shared_chars((c.start, c.end), (start, end))]
    if not own:
        return set(), _words(output)
    text = output[clauses[own[0]].start : clauses[own[-1]].end]
    named = any(not (start <= a and b <= end) for i in own for a, b in clauses[i].names)
    if not named:
        # the subject: the nearest clause before with a name, in this sentence or the one before
        sentence = clauses[own[0]].sentence
        for clause in reversed(clauses[: own[0]]):
            if clause.sentence < sentence - 1:
                break
            if clause.names:
                text += " " + output[clause.start : clause.end]
                break
    s_first, s_last = clauses[own[0]].sentence, clauses[own[-1]].sentence
    sentence_text = output[sentences[s_first][0] : sentences[s_last][1]]
    return _words(text), _words(sentence_text)


def _score(output: str, span: tuple[int, int], cues: set[str]) -> float:
    clause_words, sentence_words = _context(output, span)
    return sum(_IN_CLAUSE if c in clause_words else _IN_SENTENCE if c in sentence_words else 0.0 for c in cues)


def _unit_ranges(output: str, unit: str) -> list[tuple[int, int]]:
    if unit == "sentence":
        return list(_layout(output)[1])
    pattern = r"\n\s*\n" if unit == "paragraph" and re.search(r"\n\s*\n", output) else r"\n"
    ranges, start = [], 0
    for match in re.finditer(pattern, output):
        if output[start : match.start()].strip():
            ranges.append((start, match.start()))
        start = match.end()
    if output[start:].strip():
        ranges.append((start, len(output)))
    return ranges


def _apply_pick(
    candidates: list[tuple[int, int]], output: str, pick: Pick
) -> tuple[list[tuple[int, int]], str]:
    """Return the candidates the pick leaves and a note; all of them when the pick fits none."""
    if pick.unit == "occurrence":
        index = pick.nth - 1 if pick.nth > 0 else len(candidates) - 1
        if 0 <= index < len(candidates):
            return [candidates[index]], f"occurrence {index + 1} chosen by the note '{pick.cue}'"
        return candidates, f"the note '{pick.cue}' names an occurrence that does not exist"
    ranges = _unit_ranges(output, pick.unit)
    index = pick.nth - 1 if pick.nth > 0 else len(ranges) - 1
    if 0 <= index < len(ranges):
        lo, hi = ranges[index]
        inside = [c for c in candidates if lo <= c[0] and c[1] <= hi]
        if inside:
            return inside, f"the note '{pick.cue}' was followed"
    return candidates, f"the note '{pick.cue}' fits no occurrence"


def choose_occurrence(
    candidates: list[tuple[int, int]],
    output: str,
    *,
    explanation: str,
    location: str,
    after: int = 0,
    pick: Pick | None = None,
) -> Choice:
    """Return the occurrence an error means among `candidates` (in text order) and how it was chosen."""
    candidates = sorted(candidates)
    if len(candidates) == 1:
        return Choice(candidates[0], False, "")
    count = f"{len(candidates)} occurrences"
    pool = candidates
    pick_note = ""
    if pick is not None:
        pool, pick_note = _apply_pick(candidates, output, pick)
        if len(pool) == 1:
            return Choice(pool[0], False, f"{count}; {pick_note}")
    later = [c for c in pool if c[0] >= after]
    if after and later and len(later) < len(pool):
        pool = later
        if len(pool) == 1:
            return Choice(pool[0], False, f"{count}; took the one after the previous part")
    prefix = f"{count}; {pick_note}; " if pick_note else f"{count}; "
    cues = explanation_cues(explanation, location)
    if cues:
        scored = sorted(((_score(output, c, cues), c) for c in pool), key=lambda sc: (-sc[0], sc[1]))
        best, runner_up = scored[0][0], scored[1][0]
        if best > 0 and best - runner_up >= _MARGIN:
            position = candidates.index(scored[0][1]) + 1
            return Choice(scored[0][1], False, f"{prefix}occurrence {position} chosen by the explanation's context")
        if best > 0:
            # the cues fit several equally: still the likeliest place, but the expert must be told
            fitting = [c for score, c in scored if best - score < _MARGIN]
            if len(fitting) < len(pool):
                return Choice(fitting[0], True, f"{prefix}the explanation fits {len(fitting)} of them; the first "
                              "of those was taken")
    return Choice(pool[0], True, f"{prefix}the explanation does not say which; the first was taken")
