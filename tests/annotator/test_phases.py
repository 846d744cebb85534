"""The phase model of an assignment: where each kind of item starts and which moves are allowed."""

from __future__ import annotations

import pytest

from annotator.engine.phases import Phase, can_move, initial_phase, shows_machine_spans


def test_initial_phase_by_kind_of_item():
    assert initial_phase() is Phase.JUDGING
    assert initial_phase(training=True) is Phase.TRAINING
    assert initial_phase(unprimed=True) is Phase.MARKING
    with pytest.raises(ValueError):
        initial_phase(training=True, unprimed=True)


def test_phases_machine_spans_hidden_only_while_marking():
    assert [p for p in Phase if not shows_machine_spans(p)] == [Phase.MARKING]


def test_phases_marking_cannot_skip_the_reveal():
    assert can_move("marking", "judging")
    assert not can_move("marking", "done")
    assert not can_move("judging", "marking")
    assert can_move("done", "judging")
