"""The phase model of an assignment: where each kind of item starts and which moves are allowed."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from annotator.engine.phases import Phase, can_move, initial_phase, shows_machine_spans
from annotator.models import Assignment
from annotator.services.phases import PhaseError, assignment_move, assignments_move
from tests.factories import build_campaign


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


# ---- the one writer and the database's rules ------------------------------------------------------------------

def _assignment(make_user, **fields):
    built = build_campaign([make_user("phase-ann")])
    row = built.campaign.assignments.first()
    for name, value in fields.items():
        setattr(row, name, value)
    row.save()
    return row


@pytest.mark.django_db
def test_moving_writes_the_phase_and_what_follows_from_it(make_user):
    row = _assignment(make_user)
    assert assignment_move(row, Phase.DONE) == ["phase", "status", "finished_at"]
    row.refresh_from_db()
    assert (row.phase, row.status) == ("done", Assignment.Status.DONE) and row.finished_at is not None
    assignment_move(row, Phase.JUDGING)  # an undo reopens it
    row.refresh_from_db()
    assert (row.phase, row.status, row.finished_at) == ("judging", Assignment.Status.IN_PROGRESS, None)


@pytest.mark.django_db
def test_an_illegal_move_is_refused_and_changes_nothing(make_user):
    from annotator.models import Assignment
    from annotator.services.phases import assignment_move

    row = _assignment(make_user)
    with pytest.raises(PhaseError, match="judging phase cannot move to marking") as refused:
        assignment_move(row, Phase.MARKING)
    assert refused.value.status == 409
    row.refresh_from_db()
    assert row.phase == "judging"
    # a conditional move of rows that are not where it starts moves none of them
    assert assignments_move(Assignment.objects.filter(pk=row.pk), Phase.MARKING, Phase.JUDGING) == 0


@pytest.mark.django_db
@pytest.mark.parametrize("fields", [
    {"status": "done"},  # done without the done phase
    {"phase": "done"},  # the done phase with another status
    {"phase": "training"},  # a training phase on a real item
    {"phase": "marking"},  # marking an output that is not in the control arm
    {"is_training": True},  # a training item judged like real work
])
def test_the_database_refuses_a_phase_and_fields_that_disagree(make_user, fields):
    with pytest.raises(IntegrityError), transaction.atomic():
        _assignment(make_user, **fields)
