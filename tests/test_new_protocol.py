"""A new protocol is three files (tests/protocolkind: its declaration, its annotator hooks, its screen), as
docs/contributing/protocols.md lists them: from them alone a study runs under it - the item screen and its
parts, errors checked against its severities, finishing asking its hooks, undo and redo."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import connection
from django.test.utils import modify_settings
from django.urls import reverse

from annotator import protocols as hooks_registry
from annotator.models import Assignment, Campaign
from annotator.services.added_spans import AddedSpanError, added_span_create
from annotator.services.assignments import AssignmentError, assignment_finish
from corpus import protocols
from corpus.models import ErrorSpan
from studies.setup import CampaignSpec, campaign_create
from tests import factories as make

ROOT = Path(__file__).resolve().parent / "protocolkind"
FILES = ("declaration.py", "hooks.py", "templates/protocolkind/item_tick.html")


def _widen_known_protocols() -> None:
    """The built-in protocols' names are a check constraint (annotator.models, campaign_known_protocol); a real
    protocol widens it with the migration makemigrations writes, a test one lifts it for its own transaction."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("ALTER TABLE annotator_campaign DROP CONSTRAINT campaign_known_protocol")
        else:
            cursor.execute("PRAGMA ignore_check_constraints = ON")


@pytest.fixture
def tick(db) -> Iterator[protocols.Protocol]:
    """tests.protocolkind declared and its hooks registered for one test; nothing of it is left after."""
    for module in ("tests.protocolkind.declaration", "tests.protocolkind.hooks"):
        sys.modules.pop(module, None)  # an earlier test imported it: declared again, as its first import did
    with modify_settings(INSTALLED_APPS={"append": "tests.protocolkind"}):
        from tests.protocolkind import hooks
        from tests.protocolkind.declaration import PROTOCOL

        _widen_known_protocols()
        try:
            yield PROTOCOL
        finally:
            hooks_registry.unregister(hooks.NAME)
            protocols.unregister(PROTOCOL.name)
            if connection.vendor != "postgresql":
                with connection.cursor() as cursor:
                    cursor.execute("PRAGMA ignore_check_constraints = OFF")


def test_the_fixture_protocol_is_declared_in_three_files_and_nothing_else():
    written = sorted(str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file()
                     and "__pycache__" not in p.parts and p.name != "__init__.py")
    assert written == sorted(FILES)


def test_a_study_runs_under_the_fixture_protocol(tick, client):
    annotator = make.user("tina")
    data = make.dataset("ticks", items=[{"external_id": "1", "output": "The cat sat on teh mat."},
                                        {"external_id": "2", "output": "All good here."}])
    campaign = campaign_create(CampaignSpec(name="tick study", dataset=data, aspects=["accuracy"],
                                            annotators=[annotator], protocol=tick.name))
    assert Campaign.objects.get(pk=campaign.pk).protocol == "tick"
    first = Assignment.objects.select_related("campaign", "item").get(campaign=campaign, item__external_id="1")
    client.force_login(annotator)
    page = client.get(reverse("item_screen", args=[first.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    assert f"Tick: item {first.order}" in html and "No errors marked." in html and "error-card" not in html
    assert Assignment.objects.get(pk=first.pk).opened_at is not None  # the shared first open claimed it

    with pytest.raises(AssignmentError, match="mark at least one slip or blunder"):  # its hook says what is missing
        assignment_finish(assignment=first, user=annotator)
    with pytest.raises(AddedSpanError, match="severity must be one of 2, 4"):  # its declared severities
        added_span_create(assignment=first, user=annotator, start=0, end=3, severity=5)
    start = first.item.output.index("teh")
    added_span_create(assignment=first, user=annotator, start=start, end=start + 3, severity=4)
    undone = client.post(reverse("action_undo", args=[first.pk]), HTTP_HX_REQUEST="true")
    assert undone.status_code == 200 and 'id="tick-spans"' in undone.content.decode()  # its parts, out of band
    assert not ErrorSpan.objects.filter(annotation__source__added__campaign=campaign).exists()
    action = client.post(reverse("action_redo", args=[first.pk]), HTTP_HX_REQUEST="true").content.decode()
    assert "blunder: “teh”" in action
    finished = assignment_finish(assignment=first, user=annotator)
    assert finished.is_done() and finished.phase == "done" and finished.boundary_at is None
    page = client.get(reverse("item_screen", args=[first.pk])).content.decode()
    assert "✓ finished" in page and "blunder: “teh”" in page
