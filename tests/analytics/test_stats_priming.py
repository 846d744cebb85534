"""The priming engine on plain data: overlaps, the counts of one assignment, per-evaluator scope (no database)."""

from __future__ import annotations

import pytest

from stats.overlap import shared_chars
from stats.priming import MachineSpan, Work, priming_figures, reported_errors, share_counts


def test_overlaps_needs_a_shared_character():
    assert shared_chars((0, 4), (3, 8)) == 1 and shared_chars((0, 4), (4, 8)) == 0 and shared_chars((2, 3), (0, 9)) == 1
    assert shared_chars((3, 3), (0, 9)) == 0  # an empty range has no character to share


def _work(**fields) -> Work:
    spans = (MachineSpan("A", 0, 4, True), MachineSpan("A", 10, 14, False), MachineSpan("A", None, None, True),
             MachineSpan("B", 20, 24, True))
    return Work(output=1, unprimed=True, evaluators=frozenset({"A", "B"}), machine=spans, **fields)


def test_share_counts_of_one_control_arm_assignment():
    work = _work(marks=((2, 6), (30, 34)))
    # marks: (2,6) overlaps A's (0,4); (30,34) nothing. A's spans: (0,4) found and confirmed, (10,14) not found
    # and rejected, the unplaced one can never be found but was confirmed: it counts against precision_found
    # but stays out of accepted_unfound (it could not have been found unprimed, so counting it would bias the
    # share of spans accepted only because they were shown upwards).
    assert share_counts(work, "A") == {
        "recall": (1, 2), "precision_confirmed": (2, 3), "precision_found": (1, 3), "accepted_unfound": (0, 1),
    }
    # B's only span is not found by either mark
    assert share_counts(work, "B") == {
        "recall": (0, 2), "precision_confirmed": (1, 1), "precision_found": (0, 1), "accepted_unfound": (1, 1),
    }


def test_reported_errors_by_arm():
    assert reported_errors(_work(marks=((2, 6),), added=5), "A") == 1  # unprimed: the marks only
    primed = Work(output=1, unprimed=False, evaluators=frozenset({"A"}), machine=_work().machine, added=2)
    assert reported_errors(primed, "A") == 2 + 2 and reported_errors(primed, "B") == 1 + 2


def test_outputs_an_evaluator_did_not_answer_do_not_count_for_it():
    mine = _work(marks=((2, 6),))
    other = Work(output=2, unprimed=True, evaluators=frozenset({"B"}), machine=(), marks=((0, 1), (5, 6)))
    (row,) = priming_figures([mine, other], ["A"], resamples=200)
    assert (row.recall.value, row.recall.n) == (1.0, 1)
    assert row.errors_per_output.n_outputs == 0 and row.errors_per_output.difference is None
    assert row.errors_per_output.unprimed == 1.0 and row.errors_per_output.primed is None
    assert row.seconds_per_span == {"primed": None, "unprimed": pytest.approx(0.0)}


def test_unlocated_machine_spans_are_counted_apart_from_accepted_unfound():
    (row,) = priming_figures([_work(marks=((2, 6),))], ["A"], resamples=200)
    assert (row.accepted_unfound.value, row.accepted_unfound.n) == (0.0, 1)  # (10,14) unfound and rejected
    assert row.unlocated == 1
    (row_b,) = priming_figures([_work(marks=((2, 6),))], ["B"], resamples=200)
    assert row_b.unlocated == 0


def test_an_unplaced_mark_overlaps_nothing_and_counts_as_a_mark_no_span_found():
    """ESA's missing content has no offsets: it shares no character with any span, so it is a mark the machine
    did not find (recall's denominator) and finds no machine span (precision_found)."""
    assert shared_chars((None, None), (0, 4)) == shared_chars((0, 4), (None, None)) == 0
    assert shared_chars((None, None), (None, None)) == 0
    work = _work(marks=((2, 6), (None, None)))
    assert share_counts(work, "A") == {
        "recall": (1, 2), "precision_confirmed": (2, 3), "precision_found": (1, 3), "accepted_unfound": (0, 1),
    }
