"""The prompt that asks a model to write one planted error into an output, and the reader of its answer (Django-free).

The model gets the input data and the output, and is asked to change exactly one fact a reader can check against
that data into a plausible wrong one, leaving every other character as it is. The reader does not trust the answer to
say what it changed: it compares the answer with the output word by word and accepts one changed stretch only, away
from the stretches the caller keeps (the output's machine spans), so the planted error is one an annotator has to find
unaided, exactly as with the rule-made kinds (quality.engine.planting).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from string import Template

from quality.engine.planting import Planted
from stats.overlap import shared_chars

KIND = "llm"
MAX_SENTENCES = 2  # a changed stretch longer than this is a rewrite, not one planted error

# `string.Template`: values are substituted once and never read again, so `$` or braces in the data are safe.
_PROMPT = Template("""You help test whether careful readers notice a factual error in a ${noun}.
Below are the input data a ${noun} was written from, and the ${noun} itself.

Make exactly ONE change to the ${noun}: take one fact that a reader can check against the input data - a number, a \
name, a date, a unit or a relation between things (who did what, which is larger, what belongs to what) - and turn \
it into a wrong one that still sounds plausible. The changed fact must contradict the input data. Change only the \
words that state that fact; copy every other character of the ${noun} exactly, with the same spacing and \
punctuation. Do not add remarks, do not fix anything else, and do not mark the change.${keep}

Write the whole changed ${noun} between the lines <text> and </text>, and nothing after </text>.

${inputs}
### ${title} to change
${output}
""")
_KEEP = Template("""

Leave these stretches of the ${noun} exactly as they are (the change must be elsewhere):
${stretches}""")

_TAGGED = re.compile(r"<text>\s*\n?(.*?)\n?\s*(?:</text>|$)", re.DOTALL | re.IGNORECASE)
_TOKEN = re.compile(r"\w+|\s+|[^\w\s]", re.UNICODE)
_SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)")


class UnusableAnswer(Exception):
    """The answer gives no single usable planted error; the message says why (it is stored as the row's note)."""


def planted_prompt(*, output: str, inputs: Mapping[str, object], noun: str = "text",
                   keep: Sequence[str] = ()) -> str:
    """The prompt for one output: its input data under their headers, the stretches to leave alone, the output."""
    noun = noun or "text"
    data = "\n".join(f"### {name}\n{value}" for name, value in inputs.items()) or "### Input data\n(none)"
    stretches = [s for s in dict.fromkeys(keep) if s.strip()]
    kept = _KEEP.substitute(noun=noun, stretches="\n".join(f'- "{s}"' for s in stretches)) if stretches else ""
    return _PROMPT.substitute(noun=noun, title=noun[:1].upper() + noun[1:], inputs=data, output=output, keep=kept)


def answer_text(answer: str) -> str:
    """The changed output from a raw answer: what stands between <text> tags (or the whole answer without them)."""
    match = _TAGGED.search(answer)
    return (match.group(1) if match else answer).strip("\n")


def _tokens(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in _TOKEN.finditer(text)]


def _has_word(text: str) -> bool:
    return any(ch.isalnum() for ch in text)


def _same_words(a: str, b: str) -> bool:
    return a.split() == b.split()


def planted_from_answer(answer: str, output: str, *, keep: Sequence[tuple[int, int]] = ()) -> Planted:
    """Return the planted error the answer makes in `output`: the one changed stretch, found by comparing the two
    word by word and widened to whole words; [start, end) counts code points of the planted text. The planted text
    is the output with that stretch replaced, so spacing the model changed elsewhere is not carried over. Raise
    UnusableAnswer when the answer is empty or unchanged, changes more than one separate stretch, touches a kept
    stretch, or rewrites more than MAX_SENTENCES sentences."""
    text = answer_text(answer).strip()
    if not text:
        raise UnusableAnswer("the answer holds no text")
    if _same_words(text, output):
        raise UnusableAnswer("the answer returns the output unchanged")
    old, new = _tokens(output), _tokens(text)
    matcher = difflib.SequenceMatcher(None, [output[a:b] for a, b in old], [text[a:b] for a, b in new],
                                      autojunk=False)
    regions: list[list[int]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal" or _same_words("".join(output[a:b] for a, b in old[i1:i2]),
                                       "".join(text[a:b] for a, b in new[j1:j2])):
            continue  # equal, or only spacing changed
        if regions and not _has_word("".join(output[a:b] for a, b in old[regions[-1][1]:i1])):
            # Changes apart by spaces or punctuation alone are one ("Kyle Lowry" -> "Kevin Lowe", "3-4" -> "5-6").
            regions[-1][1], regions[-1][3] = i2, j2
            continue
        regions.append([i1, i2, j1, j2])
    if not regions:
        raise UnusableAnswer("the answer returns the output unchanged")
    if len(regions) > 1:
        raise UnusableAnswer(f"the answer changes {len(regions)} separate stretches, not one")
    i1, i2, j1, j2 = regions[0]
    # A change with no word of its own (a word deleted, a sign changed) takes the next word along (the previous one
    # at the end), so the planted stretch is one an annotator can mark; then equal spaces and marks at its edges go.
    while not _has_word("".join(text[a:b] for a, b in new[j1:j2])) and (i1 > 0 or i2 < len(old)):
        if i2 < len(old):
            i2, j2 = i2 + 1, j2 + 1
        else:
            i1, j1 = i1 - 1, j1 - 1
    same = lambda i, j: output[old[i][0]:old[i][1]] == text[new[j][0]:new[j][1]] and not _has_word(  # noqa: E731
        output[old[i][0]:old[i][1]])
    while i2 - i1 > 1 and j2 - j1 > 1 and same(i1, j1):
        i1, j1 = i1 + 1, j1 + 1
    while i2 - i1 > 1 and j2 - j1 > 1 and same(i2 - 1, j2 - 1):
        i2, j2 = i2 - 1, j2 - 1
    start = old[i1][0] if i1 < len(old) else len(output)
    old_end = old[i2 - 1][1] if i2 > i1 else start
    after = text[new[j1][0]:new[j2 - 1][1]] if j2 > j1 else ""
    if not _has_word(after):
        raise UnusableAnswer("the answer deletes text and leaves nothing to mark")
    touches = ((lambda a, b: shared_chars((a, b), (start, old_end))) if old_end > start
               else (lambda a, b: a < start < b))  # an insertion touches a stretch it lands inside
    if any(touches(a, b) for a, b in keep):
        raise UnusableAnswer("the change touches a stretch that must stay as it is (a machine span)")
    before = output[start:old_end]
    for stretch in (before, after):
        if len(_SENTENCE_END.findall(stretch.strip())) > MAX_SENTENCES:
            raise UnusableAnswer(f"the change spans more than {MAX_SENTENCES} sentences: a rewrite, not one error")
    planted = output[:start] + after + output[old_end:]
    return Planted(text=planted, start=start, end=start + len(after), before=before, after=after, kind=KIND)
