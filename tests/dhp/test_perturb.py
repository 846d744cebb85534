"""Perturbations are deterministic for a seed and do what their label says."""

from __future__ import annotations

import random
import re

import pytest

from dhp.engine.errors import DhpError
from dhp.engine.kinds import KINDS, default_k, get_kind, parse_kinds
from dhp.engine.perturb import (
    Skip,
    char_delete,
    llm_answer_text,
    rule_perturb,
    sentence_reorder,
    sentences,
    swap_ending,
    typos,
    word_delete,
)

TEXT = ("The council met on Tuesday to discuss the new bridge. Residents asked for a footpath. "
        "The mayor promised a decision by March. Work could start in the summer.")


def test_char_delete_removes_exactly_k_alphanumerics():
    result = char_delete(TEXT, 10, random.Random(3))
    assert len(result.text) == len(TEXT) - 10
    assert len(re.findall(r"\w", result.text)) == len(re.findall(r"\w", TEXT)) - 10
    kept = [ch for i, ch in enumerate(TEXT) if i not in set(result.details["positions"])]
    assert "".join(kept) == result.text


def test_typos_change_exactly_k_positions_and_leave_the_global_rng_alone():
    random.seed(1234)
    before = random.getstate()
    result = typos(TEXT, 7, random.Random(5))
    assert random.getstate() == before  # typo reseeds the global RNG; we restore it
    edits = result.details["edits"]
    assert len(edits) == 7 and len({pos for pos, _, _ in edits}) == 7
    rebuilt, last = [], 0
    for pos, old, new in sorted(edits):
        assert TEXT[pos] == old and new != old
        rebuilt += [TEXT[last:pos], new]
        last = pos + 1
    rebuilt.append(TEXT[last:])
    assert "".join(rebuilt) == result.text


def test_word_delete_removes_exactly_k_consecutive_words():
    result = word_delete(TEXT, 5, random.Random(9))
    words, out_words = TEXT.split(), result.text.split()
    assert len(out_words) == len(words) - 5
    first = result.details["first_word"]
    assert out_words == words[:first] + words[first + 5 :]


def test_sentence_reorder_keeps_the_multiset_of_sentences():
    for k in (2, 0):
        result = sentence_reorder(TEXT, k, random.Random(11))
        assert sorted(sentences(result.text)) == sorted(sentences(TEXT))
        assert result.text != TEXT
    swapped = sentence_reorder(TEXT, 2, random.Random(11))
    moved = [a != b for a, b in zip(sentences(swapped.text), sentences(TEXT), strict=True)]
    assert sum(moved) == 2


def test_sentence_kinds_skip_one_sentence_texts():
    with pytest.raises(Skip, match="one sentence"):
        sentence_reorder("Just one sentence here.", 2, random.Random(0))


def test_swap_ending_takes_another_texts_ending():
    others = ["A different story. It ends with rain.", TEXT]
    minor = swap_ending(TEXT, "minor", others, random.Random(2))
    assert sentences(minor.text)[:-1] == sentences(TEXT)[:-1]
    assert sentences(minor.text)[-1] != sentences(TEXT)[-1]
    major = swap_ending(TEXT, "major", others, random.Random(2))
    assert major.text == others[0]
    with pytest.raises(Skip):
        swap_ending(TEXT, "major", [TEXT], random.Random(2))


def test_same_seed_same_text_other_seed_other_text():
    kind = get_kind("typo:major")
    first = rule_perturb(kind, TEXT, k=10, rng=random.Random(42), others=[])
    again = rule_perturb(kind, TEXT, k=10, rng=random.Random(42), others=[])
    other = rule_perturb(kind, TEXT, k=10, rng=random.Random(43), others=[])
    assert first == again and first.text != other.text


def test_kinds_vocabulary_and_defaults():
    assert len(KINDS) == 18 and "llm-insert:major" in KINDS
    assert default_k("summarization", get_kind("char-delete:major")) == 50
    assert default_k("question-answering", get_kind("typo:minor")) == 5
    assert default_k("translation", get_kind("word-delete:major")) == 25
    assert default_k("summarization", get_kind("llm-grammar:minor")) is None
    assert [k.name for k in parse_kinds("typo:major, typo:major,char-delete:minor")] == ["typo:major",
                                                                                         "char-delete:minor"]
    with pytest.raises(DhpError, match="unknown perturbation kind 'typo'"):
        parse_kinds("typo")


def test_llm_answer_must_really_differ():
    assert llm_answer_text("Sure.\n<text>\nThe council met on Friday.\n</text>", "The council met on Tuesday.").text \
        == "The council met on Friday."
    with pytest.raises(Skip, match="unchanged"):
        llm_answer_text("<text>The  council met on Tuesday.</text>", "The council met on Tuesday.")
    with pytest.raises(Skip, match="no text"):
        llm_answer_text("<text></text>", "x")
