"""MQM weights: Freitag et al.'s default scheme, wildcards, the most specific pattern winning, bad files refused."""

from __future__ import annotations

import pytest

from corpus.protocols.mqm import DEFAULT, ProtocolError, Weights, parse_tree, tree_names


@pytest.mark.parametrize(("category", "severity", "weight"), [
    ("Accuracy/Mistranslation", "major", 5), ("Accuracy/Mistranslation", "minor", 1),
    ("Fluency/Punctuation", "minor", 0.1), ("fluency/punctuation", "minor", 0.1),
    ("Fluency/Punctuation", "major", 5), ("Non-translation!", "major", 25), ("Style/Awkward", "neutral", 0),
])
def test_default_weights_are_freitag_2021(category, severity, weight):
    assert DEFAULT.weight(category, severity) == pytest.approx(weight)


def test_wildcards_and_overrides_pick_the_most_specific_pattern():
    weights = Weights.from_json('{"*": {"*": 2}, "Fluency/*": {"minor": 0.5}, "Fluency/Spelling": {"minor": 0},'
                                ' "*/Omission": {"major": 7}}')
    assert weights.weight("Fluency/Spelling", "minor") == 0  # an exact name beats "Fluency/*"
    assert weights.weight("Fluency/Grammar", "minor") == 0.5
    assert weights.weight("Fluency/Grammar", "major") == 2  # "Fluency/*" names no major: "*" answers
    assert weights.weight("Accuracy/Omission", "major") == 7
    assert weights.weight("Other", "neutral") == 2
    assert Weights.from_json('{"Other": {"major": 1}}').weight("Style/Awkward", "major") == 0  # nothing names it


@pytest.mark.parametrize(("text", "message"), [
    ("[1]", "a JSON object"), ('{"*": {"fatal": 1}}', "unknown severity"), ('{"*": {"major": -1}}', "from 0"),
    ('{"*": {"major": "5"}}', "a number"), ("{", "not JSON"), ('{"*": 3}', "an object of severity"),
])
def test_bad_weights_are_refused_with_the_place(text, message):
    with pytest.raises(ProtocolError, match=message):
        Weights.from_json(text, "w.json")


def test_a_campaign_tree_is_read_and_checked():
    tree = parse_tree({"Accuracy": ["Omission"], "Other": []})
    assert tree_names(tree) == ["Accuracy/Omission", "Other"]
    for bad in ([], [{"name": "A/B"}], [{"name": "A", "children": ["x"] * 10}], ["A", "a"]):
        with pytest.raises(ProtocolError):
            parse_tree(bad)
