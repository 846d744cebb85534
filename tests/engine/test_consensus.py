"""The consensus rule on hand-made verdict sets: majorities, ties, single judges, adjudicated overrides."""

from __future__ import annotations

from corpus.consensus import (
    ADJUDICATED,
    MAJORITY,
    SINGLE,
    UNANIMOUS,
    UNJUDGED,
    UNRESOLVED,
    Vote,
    added_error_votes,
    consensus_label,
    is_disagreement,
)


def test_consensus_label_majority_of_three_wins_with_its_share():
    votes = [Vote("error", "correct"), Vote("error", "correct"), Vote("not_error", "not_error")]
    c = consensus_label(votes)
    assert (c.span_verdict, c.explanation_verdict, c.method) == ("error", "correct", MAJORITY)
    assert c.agreement == round(2 / 3, 4)
    assert c.judges == 3


def test_consensus_label_unanimous_needs_two_judges_and_single_judge_is_its_own_method():
    assert consensus_label([Vote("error", "vague"), Vote("error", "vague")]).method == UNANIMOUS
    single = consensus_label([Vote("hallucination", "incorrect")])
    assert (single.span_verdict, single.explanation_verdict, single.method, single.agreement) == (
        "hallucination", "incorrect", SINGLE, 1.0)


def test_consensus_label_tie_is_unresolved_and_keeps_the_field_that_has_a_majority():
    c = consensus_label([Vote("error", "correct"), Vote("not_error", "correct")])
    assert c.method == UNRESOLVED
    assert c.span_verdict is None  # 1-1: never broken by order
    assert c.explanation_verdict == "correct"
    assert c.agreement == 0.5  # the less agreed field


def test_consensus_label_plurality_short_of_majority_is_unresolved():
    c = consensus_label([Vote("error"), Vote("not_error"), Vote("no_span"), Vote("error")])
    # 2 of 4 is exactly half: the rule needs strictly more.
    assert c.span_verdict is None and c.method == UNRESOLVED
    c3 = consensus_label([Vote("error"), Vote("not_error"), Vote("no_span")])
    assert c3.span_verdict is None and c3.agreement == round(1 / 3, 4)


def test_consensus_label_adjudicated_decision_overrides_majority_but_not_agreement():
    votes = [Vote("error", "correct"), Vote("error", "correct"), Vote("not_error", "incorrect")]
    c = consensus_label(votes, Vote("not_error", "not_error"))
    assert (c.span_verdict, c.explanation_verdict, c.method) == ("not_error", "not_error", ADJUDICATED)
    assert c.agreement == round(2 / 3, 4)  # agreement before adjudication is kept


def test_consensus_label_decision_on_one_field_keeps_majority_of_the_other():
    votes = [Vote("error", "correct"), Vote("not_error", "correct")]
    c = consensus_label(votes, Vote("error", None))
    assert (c.span_verdict, c.explanation_verdict, c.method) == ("error", "correct", ADJUDICATED)


def test_consensus_label_blank_fields_do_not_vote():
    c = consensus_label([Vote("error", ""), Vote("error", "vague"), Vote("", "")])
    assert (c.span_verdict, c.explanation_verdict, c.judges) == ("error", "vague", 2)
    assert consensus_label([]).method == UNJUDGED
    assert consensus_label([Vote("", None)]).method == UNJUDGED


def test_is_disagreement_on_either_field_only():
    assert not is_disagreement([Vote("error", "correct"), Vote("error", "correct")])
    assert is_disagreement([Vote("error", "correct"), Vote("error", "vague")])
    assert is_disagreement([Vote("error", ""), Vote("not_error", "")])
    assert not is_disagreement([Vote("error", "correct"), Vote("error", "")])  # an open field is no verdict
    assert not is_disagreement([Vote("error", "correct")])


def test_added_error_votes_make_judges_who_missed_it_vote_not_error():
    assert consensus_label(added_error_votes(2, 3)).span_verdict == "error"
    assert consensus_label(added_error_votes(1, 3)).span_verdict == "not_error"
    assert consensus_label(added_error_votes(1, 2)).method == UNRESOLVED


def test_consensus_label_a_decided_place_settles_split_picks_and_keeps_the_verdicts():
    votes = [Vote("error", "correct", (3, 7)), Vote("error", "correct", (20, 24))]
    assert consensus_label(votes).method == UNRESOLVED and consensus_label(votes).occurrence is None
    c = consensus_label(votes, Vote(None, None, (20, 24)))
    assert (c.span_verdict, c.explanation_verdict, c.method, c.occurrence) == ("error", "correct", ADJUDICATED,
                                                                               (20, 24))
    assert c.agreement == 1.0  # measured on the judges' votes, not the decision
    assert consensus_label(votes, Vote(None, None, (None, None))).as_record()["occurrence"] == {
        "start": None, "end": None}
    # a decision on the verdicts alone leaves the judges' (here: agreed) pick in place
    agreed = [Vote("error", "correct", (20, 24)), Vote("not_error", "correct", (20, 24))]
    assert consensus_label(agreed, Vote("error", None)).occurrence == (20, 24)
