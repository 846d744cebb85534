"""An expert picks the occurrence of an ambiguous location by keyboard at typing speed, then by click; undo."""

from __future__ import annotations

import pytest

from annotator.models import Assignment, JudgmentEvent, SpanJudgment
from annotator.selectors.spans import span_handle
from tests.factories import build_campaign

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TWICE = "The Copper Kettle is not family-friendly. It is cheap and not family-friendly."
FIRST, SECOND = TWICE.index("not family-friendly"), TWICE.rindex("not family-friendly")
N = len("not family-friendly")


def _settled(page) -> None:
    page.wait_for_function("() => document.getElementById('work').dataset.busy === 'false'")


def _stored(assignment, span):
    j = SpanJudgment.objects.get(assignment=assignment, span=span)
    return j.picked_start, j.picked_end, j.picked_none


def test_occurrence_pick_by_keyboard_and_click(page, live_server, login, make_user):
    ann = make_user("picker")
    built = build_campaign([ann], per_item=1, output_1=TWICE)
    span = built.spans["a1_family"]
    span.ambiguous = True
    span.save(update_fields=["ambiguous"])
    assignment = Assignment.objects.get(annotator=ann, item=built.items[0])
    card = page.locator(f"#error-{span_handle(assignment.pk, span.pk)}")
    login("picker")
    page.goto(f"{live_server.url}/work/{assignment.pk}/")
    assert card.locator("button[data-occurrence]").count() == 3  # two occurrences and "none of these"

    # Reading order puts beta's wider span first: j moves to the ambiguous card. Three o's typed at 30 ms
    # cycle from the machine's occurrence (the first): second, first, second.
    page.keyboard.type("jooo", delay=30)
    _settled(page)
    assert _stored(assignment, span) == (SECOND, SECOND + N, False)
    picked = card.locator("button.occurrence[aria-pressed='true']")
    assert picked.get_attribute("data-start") == str(SECOND) and "✓" in picked.inner_text()
    assert "Picked occurrence 2 of 2" in card.locator(".occurrence-state").inner_text()

    page.keyboard.press("Shift+O")
    _settled(page)
    card.locator("button.occurrence-none[aria-pressed='true']").wait_for()
    assert _stored(assignment, span) == (None, None, True)

    page.keyboard.press("u")
    card.locator(f"button.occurrence[aria-pressed='true'][data-start='{SECOND}']").wait_for()
    _settled(page)
    assert _stored(assignment, span) == (SECOND, SECOND + N, False)

    card.locator(f"button.occurrence[data-start='{FIRST}']").click()
    card.locator(f"button.occurrence[aria-pressed='true'][data-start='{FIRST}']").wait_for()
    _settled(page)
    assert _stored(assignment, span) == (FIRST, FIRST + N, False)
    events = list(JudgmentEvent.objects.filter(judgment__assignment=assignment, field="occurrence")
                  .order_by("id").values_list("new_value", "undone"))
    assert events[:3] == [(f"{SECOND}-{SECOND + N}", False), (f"{FIRST}-{FIRST + N}", False),
                          (f"{SECOND}-{SECOND + N}", False)]
    assert events[-1] == (f"{FIRST}-{FIRST + N}", False) and any(undone for _, undone in events)
    # keyed picks carry their milliseconds since focus, like verdicts
    assert JudgmentEvent.objects.filter(judgment__assignment=assignment, field="occurrence",
                                        ms__isnull=False).count() >= 3
