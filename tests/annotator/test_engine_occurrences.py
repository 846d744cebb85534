"""The candidate occurrences of an ambiguous span and the text form of a pick (Django-free)."""

from __future__ import annotations

import pytest

from annotator.engine.occurrences import (
    Occurrence,
    OccurrenceError,
    effective_offsets,
    occurrences,
    parse_pick,
    pick_text,
)

OUTPUT = "He had two rebounds, two assists and two steals on Friday; on Friday they lost."


def test_occurrences_lists_every_exact_occurrence_in_text_order():
    first = OUTPUT.index("two")
    found = occurrences(OUTPUT, first, first + 3)
    assert [OUTPUT[o.start:o.end] for o in found] == ["two"] * 3
    assert [o.start for o in found] == [first, OUTPUT.index("two", first + 1), OUTPUT.rindex("two")]


def test_occurrences_from_a_later_occurrence_are_the_same_list():
    first, last = OUTPUT.index("Friday"), OUTPUT.rindex("Friday")
    assert occurrences(OUTPUT, last, last + 6) == occurrences(OUTPUT, first, first + 6)


def test_occurrences_include_overlapping_ones():
    assert occurrences("aaaa", 0, 2) == [Occurrence(0, 2), Occurrence(1, 3), Occurrence(2, 4)]


def test_occurrences_refuse_offsets_outside_the_output():
    with pytest.raises(OccurrenceError, match="outside the output"):
        occurrences("short", 3, 9)


def test_pick_text_round_trips():
    for pick, none in ((Occurrence(4, 9), False), (None, True), (None, False)):
        picked, where = parse_pick(pick_text(pick, none=none))
        assert picked == (pick is not None or none)
        assert where == pick


@pytest.mark.parametrize("bad", ["x", "5-3", "4-", "-4", "1-2-3"])
def test_parse_pick_refuses_other_text(bad):
    with pytest.raises(OccurrenceError, match="occurrence"):
        parse_pick(bad)


def test_effective_offsets_prefer_the_pick():
    assert effective_offsets((1, 4), "") == (1, 4)
    assert effective_offsets((1, 4), "none") == (None, None)
    assert effective_offsets((1, 4), "10-13") == (10, 13)
