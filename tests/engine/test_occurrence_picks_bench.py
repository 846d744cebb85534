"""The occurrence-pick bench's scripted expert, on a hand-made case (no shared data needed)."""

from __future__ import annotations

from bench.alignment_accuracy import Outcome
from bench.occurrence_picks import after_pick, scripted_pick

TEXT = "They won on Friday and lost on Friday night."
SECOND = (TEXT.rindex("Friday"), TEXT.rindex("Friday") + 6)


def _case(expected):
    return {"id": "t", "location": "Friday", "style": "repeated phrase", "expected": expected}


def test_scripted_pick_names_the_gold_occurrence_or_none():
    first = (TEXT.index("Friday"), TEXT.index("Friday") + 6)
    assert scripted_pick(_case(list(SECOND)), TEXT, first) == f"{SECOND[0]}-{SECOND[1]}"
    assert scripted_pick(_case(None), TEXT, first) == "none"
    assert scripted_pick(_case([0, 4]), TEXT, first) == ""  # no candidate touches the gold: keep the machine's


def test_after_pick_moves_a_wrong_ambiguous_span_to_the_right_place():
    first = (TEXT.index("Friday"), TEXT.index("Friday") + 6)
    moved, pick = after_pick(Outcome(_case(list(SECOND)), "wrong", "exact", True, first), TEXT)
    assert (moved.outcome, moved.got, pick) == ("right", SECOND, f"{SECOND[0]}-{SECOND[1]}")
    gone, _ = after_pick(Outcome(_case(None), "false", "exact", True, first), TEXT)
    assert (gone.outcome, gone.got) == ("absent", None)
