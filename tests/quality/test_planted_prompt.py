"""The planted-error prompt and the reader of its answer: one changed stretch found by comparing texts, with exact
code-point offsets, and every answer that is not one usable change refused with its reason."""

from __future__ import annotations

import pytest

from quality.engine.planted_prompt import UnusableAnswer, planted_from_answer, planted_prompt

OUTPUT = "The Raptors beat the Celtics 100-95 on Friday. Kyle Lowry led the Raptors with 20 points and 3 assists."
ASSISTS = (OUTPUT.index("3 assists"), OUTPUT.index("3 assists") + len("3 assists"))


def _told(text: str) -> str:
    return f"Here you are:\n<text>\n{text}\n</text>"


def test_planted_from_answer_finds_the_one_changed_number_with_exact_offsets():
    planted = planted_from_answer(_told(OUTPUT.replace("20 points", "27 points")), OUTPUT, keep=[ASSISTS])
    assert (planted.start, planted.end, planted.before, planted.after, planted.kind) == (79, 81, "20", "27", "llm")
    assert planted.text[planted.start:planted.end] == "27" and OUTPUT[79:81] == "20"
    assert planted.text == OUTPUT[:79] + "27" + OUTPUT[81:]


def test_planted_from_answer_takes_a_changed_name_as_one_change_of_whole_words():
    planted = planted_from_answer(_told(OUTPUT.replace("Kyle Lowry", "Kevin Lowe")), OUTPUT)
    assert (planted.before, planted.after, planted.start) == ("Kyle Lowry", "Kevin Lowe", OUTPUT.index("Kyle"))
    # a change inside a word is widened to the whole word
    widened = planted_from_answer(_told(OUTPUT.replace("Celtics", "Celtix")), OUTPUT)
    assert (widened.before, widened.after) == ("Celtics", "Celtix")


def test_planted_from_answer_refuses_two_separate_changes():
    twice = OUTPUT.replace("20 points", "21 points").replace("Friday", "Monday")
    with pytest.raises(UnusableAnswer, match="2 separate stretches"):
        planted_from_answer(_told(twice), OUTPUT)


def test_planted_from_answer_refuses_an_unchanged_or_empty_answer():
    with pytest.raises(UnusableAnswer, match="unchanged"):
        planted_from_answer(_told(OUTPUT), OUTPUT)
    with pytest.raises(UnusableAnswer, match="unchanged"):
        planted_from_answer(_told(OUTPUT.replace(" Kyle", "  Kyle")), OUTPUT)  # spacing alone is no error
    with pytest.raises(UnusableAnswer, match="no text"):
        planted_from_answer("<text>\n\n</text>", OUTPUT)


def test_planted_from_answer_refuses_a_change_that_touches_a_kept_stretch():
    with pytest.raises(UnusableAnswer, match="must stay as it is"):
        planted_from_answer(_told(OUTPUT.replace("3 assists", "4 assists")), OUTPUT, keep=[ASSISTS])
    # the same change is fine when the kept stretch is elsewhere
    assert planted_from_answer(_told(OUTPUT.replace("3 assists", "4 assists")), OUTPUT, keep=[(0, 3)]).after == "4"


def test_planted_from_answer_refuses_a_rewrite_of_more_than_two_sentences():
    rewrite = OUTPUT + " The Celtics lost again. They had won twice before. Their coach was angry."
    with pytest.raises(UnusableAnswer, match="more than 2 sentences"):
        planted_from_answer(_told(rewrite), OUTPUT)


def test_planted_from_answer_counts_code_points_outside_the_bmp():
    output = "Score 😀 today: 12 goals by Ana 🎉, 3 by Bo."
    planted = planted_from_answer(_told(output.replace("12 goals", "15 goals")), output)
    # "Score " is 6, the emoji 1 code point (2 UTF-16 units), " today: " 8: the number starts at 15
    assert (planted.start, planted.end) == (15, 17) and output[15:17] == "12"
    assert planted.text[planted.start:planted.end] == "15"
    assert len(planted.text.encode("utf-16-le")) // 2 != len(planted.text)  # code units would differ


def test_planted_from_answer_ignores_spacing_the_model_changed_elsewhere():
    answer = _told(OUTPUT.replace("20 points", "22 points").replace("Friday. Kyle", "Friday.  Kyle"))
    planted = planted_from_answer(answer, OUTPUT)
    assert planted.text == OUTPUT.replace("20 points", "22 points")  # the output's own spacing is kept


def test_planted_from_answer_gives_a_deleted_word_a_stretch_to_mark():
    planted = planted_from_answer(_told(OUTPUT.replace("Kyle Lowry", "Lowry")), OUTPUT)
    assert (planted.before, planted.after) == ("Kyle Lowry", "Lowry")
    assert planted.text[planted.start:planted.end] == "Lowry"


def test_planted_prompt_holds_the_inputs_the_output_and_the_stretches_to_keep():
    prompt = planted_prompt(output=OUTPUT, inputs={"Data": "Raptors PTS 100 | cost $5 {x}"}, noun="summary",
                            keep=["3 assists", "3 assists"])
    assert "### Data\nRaptors PTS 100 | cost $5 {x}" in prompt  # `$` and braces in the data are not read as fields
    assert prompt.rstrip().endswith(f"### Summary to change\n{OUTPUT}")
    assert prompt.count('- "3 assists"') == 1 and "exactly ONE change" in prompt and "<text>" in prompt
    assert "Leave these stretches" not in planted_prompt(output=OUTPUT, inputs={}, noun="summary")
