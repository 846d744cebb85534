"""Build bench/alignment_corpus.jsonl: located errors written from the real RotoWire and meta_eval outputs.

Every case names its text by reference (shared file, record index, id, output field); only the short
location an LLM would write and an explanation are stored. The right answer is known by construction: a
location is cut from the text at known offsets (then re-cased, re-punctuated, shortened, given a note or
joined with '...'), so the answer is those offsets; or it is changed so that it is no longer in the text
(a number or name swapped, a phrase from another text), so the answer is null - and the builder checks
that the changed phrase occurs nowhere in the text, ignoring case, spaces and punctuation (an invented
phrase must not even have a near copy: rapidfuzz partial ratio < 75). Repeated phrases take their
right occurrence from the RotoWire gold error spans (the annotators' offsets). Twenty more cases were
written by hand (bench/alignment_corpus_hand.jsonl: summaries read, the right occurrence chosen by
reading). Deterministic (seeded).

    python bench/alignment_corpus_build.py [--data ../shared/data] [-o bench/alignment_corpus.jsonl]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections.abc import Iterator
from pathlib import Path

from rapidfuzz import fuzz

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.alignment_accuracy import DEFAULT_CORPUS, data_dir, load_text  # noqa: E402

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’.,-]*[A-Za-z0-9%]|[A-Za-z0-9]")
_STOP = {"the", "a", "an", "and", "of", "in", "on", "for", "with", "to", "at", "his", "their", "its"}
# capitalised words that are not who a statistic belongs to
_NOT_SUBJECTS = {"The", "He", "His", "They", "It", "He's", "3Pt", "Arena", "Center", "Garden", "Monday", "Tuesday",
                 "Wednesday", "Thursday", "Friday", "Saturday", "Sunday", "On", "In", "However", "Next", "Up"}
_NUMBER_WORDS = ["two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"]
_ORDINALS = ["first", "second", "third", "fourth", "fifth"]
_SHORT_ORDINALS = ["1st", "2nd", "3rd", "4th", "5th"]


def _words(text: str) -> list[tuple[int, int]]:
    """Word offsets; a word does not run over a sentence end ("points." ends before the period)."""
    spans = []
    for m in _WORD.finditer(text):
        start, end = m.start(), m.end()
        while end > start + 1 and text[end - 1] in ".,":
            end -= 1
        spans.append((start, end))
    return spans


def _sentence_end_between(text: str, a: int, b: int) -> bool:
    return bool(re.search(r"[.!?]\s", text[a:b]))


def _phrase(text: str, words: list[tuple[int, int]], first: int, last: int) -> tuple[int, int] | None:
    if first < 0 or last >= len(words) or first > last:
        return None
    start, end = words[first][0], words[last][1]
    if _sentence_end_between(text, start, end) or "\n" in text[start:end]:
        return None
    return start, end


def _index_of(words: list[tuple[int, int]], offset: int) -> int:
    return next((i for i, (s, e) in enumerate(words) if s <= offset < e), -1)


def _count(text: str, phrase: str) -> int:
    return len(re.findall(r"(?<!\w)" + re.escape(phrase) + r"(?!\w)", text))


def _absent(text: str, phrase: str) -> bool:
    """True when the phrase is nowhere in the text, not even with other case, spacing or punctuation."""
    low = text.lower()
    squash = re.sub(r"\W+", "", low)
    return phrase.lower() not in low and re.sub(r"\W+", "", phrase.lower()) not in squash


def _case(cid: str, ref: dict, location: str, explanation: str, style: str, expected: tuple[int, int] | None,
          how: str) -> dict:
    return {"id": cid, **ref, "location": location, "explanation": explanation, "style": style,
            "expected": list(expected) if expected else None, "how": how}


class Builder:
    def __init__(self, data: Path, seed: int) -> None:
        self.data = data
        self.rng = random.Random(seed)
        self.cases: list[dict] = []

    def add(self, *args: object) -> None:
        self.cases.append(_case(f"c{len(self.cases) + 1:03d}", *args))  # type: ignore[arg-type]

    # --- RotoWire: gold error spans give the places and the corrections ---------------------------
    def rotowire(self) -> None:
        rows = [json.loads(line) for line in (self.data / "rotowire" / "train.jsonl").open()]
        summaries = [r["outputs"]["Summary"] for r in rows]
        for index, row in enumerate(rows):
            ref = {"file": "rotowire/train.jsonl", "record": index, "record_id": row["id"], "field": "Summary"}
            text = summaries[index]
            words = _words(text)
            golds = row["spans"]
            self.rng.shuffle(golds)
            for k, gold in enumerate(golds[:6]):
                self._rotowire_case(ref, text, words, gold, k)
            # numbers are the commonest data-to-text error: one more misread number per summary
            numbers = [g for g in golds[6:] if re.search(r"\d", g["text"])]
            if numbers:
                g0, g1 = _index_of(words, numbers[0]["start"]), _index_of(words, numbers[0]["end"] - 1)
                span = _phrase(text, words, g0 - 1, g1 + 1)
                if span:
                    self._misquote_number(ref, text, text[span[0] : span[1]], "The number does not match the data.")
            other = summaries[(index + 7) % len(summaries)]
            self._invented(ref, text, other, "another RotoWire summary")

    def _rotowire_case(self, ref: dict, text: str, words: list[tuple[int, int]], gold: dict, k: int) -> None:
        g0, g1 = _index_of(words, gold["start"]), _index_of(words, gold["end"] - 1)
        if g0 < 0 or g1 < 0:
            return
        fix = (gold.get("explanation") or "").removeprefix("should be:").strip()
        wrong = gold["text"]
        explanation = f"The data gives {fix}, not {wrong}." if fix else f"'{wrong}' is not supported by the data."
        count_gold = _count(text, wrong)
        # repeated phrase: the gold offsets say which occurrence the annotators marked
        for right in (1, 2, 0):
            span = _phrase(text, words, g0, g1 + right)
            if not span:
                continue
            phrase = text[span[0] : span[1]]
            edges = (phrase.split(" ")[0].lower(), phrase.split(" ")[-1].lower())
            if _count(text, phrase) > 1 and not set(edges) & _STOP and (right or len(phrase) > 4):
                subject = self._subject(text, words, g0)
                why = explanation
                if subject:
                    why = f"For {subject} the data gives {fix or 'something else'}, not {wrong}."
                self.add(ref, phrase, why, "repeated phrase", span,
                         f"gold span at {gold['start']} + {right} word(s); {_count(text, phrase)} occurrences")
                return
        kind = ["exact", "case", "punctuation", "paraphrase", "misquoted number", "note", "ellipsis",
                "misquoted name"][(k + ref["record"]) % 8]
        left, right = self.rng.randint(0, 2), self.rng.randint(1, 2)
        span = _phrase(text, words, g0 - left, g1 + right) or _phrase(text, words, g0, g1 + 1) \
            or _phrase(text, words, g0, g1)
        if span is None:
            return
        phrase = text[span[0] : span[1]]
        unique = _count(text, phrase) == 1 and text.lower().count(phrase.lower()) == 1
        if kind == "exact" and unique:
            self.add(ref, phrase, explanation, "exact", span, "gold span with its neighbour words")
        elif kind == "case" and unique:
            self.add(ref, phrase.lower() if phrase != phrase.lower() else phrase.upper(), explanation, "case",
                     span, "gold span with neighbours, re-cased")
        elif kind == "punctuation" and unique:
            self.add(ref, self._repunctuate(phrase), explanation, "punctuation", span,
                     "gold span with neighbours, punctuation changed")
        elif kind == "paraphrase" and unique:
            longer = _phrase(text, words, g0 - 2, g1 + 3) or span
            changed = self._paraphrase(text[longer[0] : longer[1]])
            if changed and text.count(text[longer[0] : longer[1]]) == 1:
                self.add(ref, changed, explanation, "paraphrase", longer, "gold span with 5+ words, one word dropped")
        elif kind == "misquoted number":
            self._misquote_number(ref, text, phrase, explanation)
        elif kind == "misquoted name":
            self._misquote_name(ref, text, phrase, explanation)
        elif kind == "note":
            self._note(ref, text, phrase, span, explanation, count_gold)
        elif kind == "ellipsis":
            long_span = _phrase(text, words, g0, g1 + self.rng.randint(7, 11))
            if long_span:
                self._ellipsis(ref, text, long_span, explanation)

    def _subject(self, text: str, words: list[tuple[int, int]], g0: int) -> str:
        """The capitalised name nearest before a word in its sentence (the player a stat belongs to)."""
        for i in range(g0 - 1, max(-1, g0 - 15), -1):
            word = text[words[i][0] : words[i][1]]
            if _sentence_end_between(text, words[i][1], words[g0][0]):
                return ""
            if word[:1].isupper() and word.lower() not in _STOP and word not in _NOT_SUBJECTS and not word.isupper():
                return word
        return ""

    # --- variants ---------------------------------------------------------------------------------
    def _repunctuate(self, phrase: str) -> str:
        options = [f'"{phrase}"', f"“{phrase}.”", f"{phrase}.", phrase.replace(" - ", "-"), phrase.replace(",", ""),
                   f"'{phrase}'", f"{phrase},"]
        usable = [o for o in options if o != phrase]
        return self.rng.choice(usable)

    def _paraphrase(self, phrase: str) -> str | None:
        tokens = phrase.split(" ")
        if len(tokens) < 5:
            return None
        droppable = [i for i in range(1, len(tokens) - 1) if tokens[i].lower() in _STOP]
        if droppable:
            i = self.rng.choice(droppable)
            return " ".join(tokens[:i] + tokens[i + 1 :])
        for i, token in enumerate(tokens):
            if token.endswith("ed") and len(token) > 4:
                tokens[i] = token[:-2] + "s"
                return " ".join(tokens)
        return None

    def _misquote_number(self, ref: dict, text: str, phrase: str, explanation: str) -> None:
        numbers = list(re.finditer(r"\d+", phrase))
        written = [m for m in re.finditer(r"\b(" + "|".join(_NUMBER_WORDS) + r")\b", phrase)]
        if numbers:
            m = self.rng.choice(numbers)
            value = int(m.group(0)) + self.rng.choice([-3, -2, -1, 1, 2, 3])
            changed = phrase[: m.start()] + str(max(0, value)) + phrase[m.end() :]
        elif written:
            m = self.rng.choice(written)
            other = self.rng.choice([w for w in _NUMBER_WORDS if w != m.group(0)])
            changed = phrase[: m.start()] + other + phrase[m.end() :]
        else:
            return
        if changed != phrase and _absent(text, changed):
            self.add(ref, changed, explanation, "misquoted number", None, f"number changed in {phrase!r}")

    def _misquote_name(self, ref: dict, text: str, phrase: str, explanation: str) -> None:
        names = [m for m in re.finditer(r"\b[A-Z][a-z]{2,}\b", phrase) if m.group(0) not in ("The", "He", "His")]
        pool = sorted({n for n in re.findall(r"\b[A-Z][a-z]{3,}\b", text)} - {m.group(0) for m in names})
        if not names or not pool:
            return
        m = self.rng.choice(names)
        changed = phrase[: m.start()] + self.rng.choice(pool) + phrase[m.end() :]
        if _absent(text, changed):
            self.add(ref, changed, explanation, "misquoted name", None, f"name changed in {phrase!r}")

    def _note(self, ref: dict, text: str, phrase: str, span: tuple[int, int], explanation: str,
              count_gold: int) -> None:
        starts = [m.start() for m in re.finditer(r"(?<!\w)" + re.escape(phrase) + r"(?!\w)", text)]
        if len(starts) == 1:
            template = self.rng.choice(['The phrase "{p}"', "{p} (see the box score)", "the words '{p}'",
                                        '"{p}" (first mention)', "[first occurrence] {p}", "{p} (only mention)"])
            self.add(ref, template.format(p=phrase), explanation, "note", span, "unique phrase with a note")
            return
        target = starts.index(span[0])
        note = self.rng.choice([f"({_ORDINALS[target]} mention)", f"[{_SHORT_ORDINALS[target]} occurrence]",
                                f"({_ORDINALS[target]} occurrence)"])
        if target == len(starts) - 1 and self.rng.random() < 0.5:
            note = "(last mention)"
        self.add(ref, f"{phrase} {note}", explanation, "note", span, f"{len(starts)} occurrences, note names it")

    def _ellipsis(self, ref: dict, text: str, span: tuple[int, int], explanation: str) -> None:
        tokens = text[span[0] : span[1]].split(" ")
        if len(tokens) < 8:
            return
        head, tail = " ".join(tokens[:3]), " ".join(tokens[-3:])
        mark = self.rng.choice([" ... ", "...", " … "])
        self.add(ref, f"{head}{mark}{tail}", explanation, "ellipsis", span, "first and last words of a clause")

    def _invented(self, ref: dict, text: str, other: str, where: str) -> None:
        words = _words(other)
        for _ in range(20):
            n = self.rng.randint(4, 7)
            i = self.rng.randrange(0, max(1, len(words) - n))
            span = _phrase(other, words, i, i + n - 1)
            if not span:
                continue
            phrase = other[span[0] : span[1]]
            if _absent(text, phrase) and fuzz.partial_ratio(phrase.lower(), text.lower()) < 75:
                self.add(ref, phrase, "This claim is not supported by the input.", "invented phrase", None,
                         f"a phrase of {where}")
                return

    # --- meta_eval outputs: other tasks, other shapes of text -------------------------------------
    def meta_eval(self, per_file: int) -> None:
        for name in ("qags", "hanna", "sfhot", "sfres", "topical_chat", "wiki_da"):
            rows = json.loads((self.data / "meta_eval" / f"{name}.json").read_text())
            picks = self.rng.sample(range(len(rows)), per_file)
            for n, index in enumerate(picks):
                field = next(iter(rows[index]["outputs"]))
                text = rows[index]["outputs"][field]
                ref = {"file": f"meta_eval/{name}.json", "record": index, "record_id": str(rows[index]["id"]),
                       "field": field}
                self._meta_case(ref, text, rows[picks[(n + 1) % len(picks)]]["outputs"], n)

    def _meta_case(self, ref: dict, text: str, other_outputs: dict, n: int) -> None:
        words = _words(text)
        if len(words) < 5:
            return
        kind = ["exact", "case", "punctuation", "paraphrase", "misquoted number", "invented phrase", "ellipsis",
                "note"][n % 8]
        size = 9 if kind in ("ellipsis", "paraphrase") else self.rng.randint(3, 6)
        for _ in range(30):
            i = self.rng.randrange(0, max(1, len(words) - size + 1))
            span = _phrase(text, words, i, i + size - 1)
            if span and _count(text, text[span[0] : span[1]]) == 1:
                break
        else:
            return
        phrase = text[span[0] : span[1]]
        why = "This is not supported by the source."
        if kind == "exact":
            self.add(ref, phrase, why, "exact", span, "a phrase of the output")
        elif kind == "case":
            recased = phrase.capitalize() if phrase != phrase.capitalize() else phrase.lower()
            self.add(ref, recased, why, "case", span, "a phrase of the output, re-cased")
        elif kind == "punctuation":
            detok = re.sub(r" (n't|'s|'re|'ve|'m|'ll|'d)", r"\1", re.sub(r" ([,.!?;:])", r"\1", phrase))
            located = detok if detok != phrase else self._repunctuate(phrase)
            self.add(ref, located, why, "punctuation", span, "a phrase of the output, punctuation changed")
        elif kind == "paraphrase":
            changed = self._paraphrase(phrase)
            if changed:
                self.add(ref, changed, why, "paraphrase", span, "a 9-word phrase, one word dropped or inflected")
        elif kind == "misquoted number":
            self._misquote_number(ref, text, phrase, why)
        elif kind == "invented phrase":
            other = next(iter(other_outputs.values()))
            self._invented(ref, text, other, "another output of the same set")
        elif kind == "ellipsis":
            self._ellipsis(ref, text, span, why)
        elif kind == "note":
            self._note(ref, text, phrase, span, why, 1)


HAND = Path(__file__).resolve().parent / "alignment_corpus_hand.jsonl"


def hand_written(builder: Builder) -> None:
    """Add the cases written by hand (bench/alignment_corpus_hand.jsonl): RotoWire summaries read, locations
    and explanations written as a model would, the right occurrence of `target` chosen by reading."""
    for line in HAND.read_text().splitlines():
        case = json.loads(line)
        ref = {"file": "rotowire/train.jsonl", "record": case["record"], "record_id": case["record_id"],
               "field": "Summary"}
        text = load_text(builder.data, {"id": "hand", **ref})
        starts = [m.start() for m in re.finditer(re.escape(case["target"]), text)]
        start = starts[case["occurrence"] - 1]
        builder.add(ref, case["location"], case["explanation"], case["style"],
                    (start, start + len(case["target"])),
                    f"written by hand: occurrence {case['occurrence']} of {len(starts)} of the target")


def build(data: Path, seed: int = 12, per_file: int = 24) -> Iterator[dict]:
    builder = Builder(data, seed)
    builder.rotowire()
    builder.meta_eval(per_file)
    hand_written(builder)
    for case in builder.cases:
        # every answer is checked against the text it was cut from before it is written
        text = load_text(data, case)
        if case["expected"] is not None:
            start, end = case["expected"]
            assert 0 <= start < end <= len(text), case
        yield case


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("-o", "--output", type=Path, default=DEFAULT_CORPUS)
    args = parser.parse_args(argv)
    data = data_dir(args.data)
    cases = list(build(data))
    with args.output.open("w") as handle:
        for case in cases:
            handle.write(json.dumps(case, ensure_ascii=False) + "\n")
    print(f"{len(cases)} cases written to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
