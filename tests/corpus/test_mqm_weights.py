"""MQM weights: Freitag et al.'s default scheme, wildcards, the most specific pattern winning, bad files refused."""

from __future__ import annotations

import pytest

from corpus.protocols.errors import ProtocolError
from corpus.protocols.mqm import DEFAULT, Weights, parse_tree, tree_names


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


def test_weight_patterns_match_without_backtracking():
    """A failing match of many wildcards made a regex try every split (seconds at ten stars, minutes at twelve);
    the glob matcher answers a 40-character category against 30 wildcards at once, and correctly."""
    import time

    category = "a" * 39 + "b"
    starved = "*".join("a" * 31)  # 31 a's around 30 stars: never matches a name ending in "b"
    fed = "*".join("a" * 30) + "*b"
    weights = Weights.from_mapping({starved: {"major": 9}, fed: {"minor": 3}})
    began = time.perf_counter()
    assert weights.weight(category, "major") == 0  # the starved pattern must not match
    assert weights.weight(category, "minor") == 3
    assert weights.weight("a" * 40, "major") == 9
    assert time.perf_counter() - began < 1.0  # the regex took far longer than any machine's jitter


@pytest.mark.parametrize(("pattern", "key", "matched"), [
    ("*", "", True), ("a*", "a", True), ("*a", "ba", True), ("a*a", "a", False), ("a*b*c", "abc", True),
    ("a*b*c", "acb", False), ("*x*", "yyxyy", True), ("ab*ab", "abab", True), ("ab*ab", "aba", False),
])
def test_weight_patterns_are_globs(pattern, key, matched):
    weights = Weights.from_mapping({pattern: {"major": 1}})
    assert weights.weight(key, "major") == (1 if matched else 0)


def test_an_overlong_weight_pattern_is_refused_naming_the_field():
    with pytest.raises(ProtocolError, match="longer than") as refused:
        Weights.from_mapping({"a*" * 150: {"major": 1}}, "protocol_options.weights")
    assert refused.value.field == "protocol_options.weights"
