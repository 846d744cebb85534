"""Every declared protocol has its annotator hooks, their parts are partials of its screen, and the one phase
writer refuses a phase the campaign's protocol does not declare."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotator.engine.phases import Phase
from annotator.models import Assignment
from annotator.protocols import hooks_for
from annotator.services.phases import PhaseError, assignment_move
from corpus import protocols
from tests import factories as make

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


@pytest.mark.parametrize("name", list(protocols.PROTOCOLS))
def test_every_protocol_has_hooks_whose_parts_are_partials_of_its_screen(name):
    class Campaign:
        protocol = name

    hooks = hooks_for(Campaign)
    assert hooks.name == name and hooks.parts
    screen = (TEMPLATES / protocols.get(name).template).read_text()
    assert all(f"partialdef {part} " in screen for part in hooks.parts)


def test_the_phase_writer_refuses_a_phase_the_protocol_does_not_declare(db):
    assert not protocols.get(protocols.OPENNLGAUGE).allows_phase(Phase.SCORING.value)
    data = make.dataset("phases", items=[{"external_id": "1", "output": "Text."}])
    annotator = make.user("pat")
    campaign = make.campaign("phases", data, [], [annotator])
    made = make.assignment(campaign, annotator, data.items.get(), 1)
    assignment = Assignment.objects.select_related("campaign").get(pk=made.pk)
    with pytest.raises(PhaseError, match="opennlgauge protocol has no scoring phase"):
        assignment_move(assignment, Phase.SCORING)
    assert Assignment.objects.get(pk=assignment.pk).phase == Phase.JUDGING.value
