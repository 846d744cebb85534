"""A control-arm item by keyboard alone: mark errors unprimed, reload, Done marking, judge, reload, finish."""

from __future__ import annotations

import pytest

from annotator.models import Assignment, MarkingTime, SpanJudgment, UnprimedMark
from annotator.selectors.spans import span_handle
from tests.control_arm_study import build_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _select_and_add(page, start: int, length: int, text: str) -> None:
    """s puts the caret at the start; arrows move it, Shift+arrows select; a opens the form, 1 picks the first
    category, Enter adds."""
    page.keyboard.press("s")
    for _ in range(start):
        page.keyboard.press("ArrowRight")
    for _ in range(length):
        page.keyboard.press("Shift+ArrowRight")
    assert page.evaluate("() => window.getSelection().toString()") == text
    page.keyboard.press("a")
    page.locator("#add-dialog[open]").wait_for()
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    page.locator("#added-list li", has_text=text).wait_for()


def test_both_phases_by_keyboard_with_reloads(page, live_server, login, make_user):
    ann1, ann2 = make_user("mara"), make_user("nils")
    for user in (ann1, ann2):
        user.auto_advance = False
        user.save(update_fields=["auto_advance"])
    study = build_study([ann1, ann2])
    first = study.items[0]  # "aaaa bbbb cccc dddd eeee"; the machine marks bbbb and dddd
    a = Assignment.objects.get(campaign=study.campaign, item=first, in_control_arm=True)
    login(a.annotator.username)
    page.goto(f"{live_server.url}/work/{a.pk}/")

    # Marking: nothing of the machine's spans is on the page; the expert marks on their own.
    page.locator("#done-marking").wait_for()
    assert page.locator("#errors .error-card").count() == 0
    assert page.locator("#output-text mark.hl").count() == 0
    _select_and_add(page, 5, 4, "bbbb")
    _select_and_add(page, 20, 4, "eeee")
    # undo and redo work while marking
    page.keyboard.press("u")
    page.wait_for_function("() => !document.querySelector('#added-list').textContent.includes('eeee')")
    page.keyboard.press("U")
    page.locator("#added-list li", has_text="eeee").wait_for()

    # A reload keeps the phase and the marks.
    page.reload()
    page.locator("#done-marking").wait_for()
    assert page.locator("#added-list li").count() == 2
    assert page.locator("#errors .error-card").count() == 0

    # d ends marking: the page comes back with the machine's errors, and the marks in their own style.
    page.keyboard.press("d")
    page.locator("#errors .error-card").first.wait_for()
    assert page.locator("#errors .error-card").count() == 2
    assert page.locator("#done-marking").count() == 0
    assert page.locator("#output-text mark.hl-unprimed").count() == 2
    assert page.locator("#added-list .tag-unprimed").count() == 2
    assert page.locator("#added-list button.danger").count() == 0  # fixed: no delete
    # undo cannot reach back across the reveal
    page.keyboard.press("u")
    page.locator("#flash", has_text="Nothing to undo").wait_for()
    assert page.locator("#added-list li").count() == 2

    # Judging by keyboard: bbbb is an error (1, q); then j, dddd is not (2, y).
    spans = study.spans[first.pk]
    card = {s.pk: f"#error-{span_handle(a.pk, s.pk)}" for s in spans}  # cards are named by opaque handles
    page.keyboard.press("1")
    page.locator(f"{card[spans[0].pk]} button[aria-pressed='true'][data-key='1']").wait_for()
    page.keyboard.press("q")
    page.locator(f"{card[spans[0].pk]}.is-complete").wait_for()
    page.keyboard.press("j")
    page.keyboard.press("2")
    page.locator(f"{card[spans[1].pk]} button[aria-pressed='true'][data-key='2']").wait_for()
    page.keyboard.press("y")
    page.locator(f"{card[spans[1].pk]}.is-complete").wait_for()
    page.wait_for_function("() => document.getElementById('work').dataset.busy === 'false'")

    # A second reload: still judging, verdicts kept; f finishes.
    page.reload()
    page.locator(f"{card[spans[1].pk]}.is-complete").wait_for()
    assert page.locator("#progress-text").inner_text().startswith("2 of 2")
    page.keyboard.press("f")
    page.wait_for_url(lambda url: f"/work/{a.pk}/" not in url)

    a.refresh_from_db()
    assert a.phase == "done" and a.revealed_at is not None
    marks = sorted(UnprimedMark.objects.filter(assignment=a).values_list("span__start", "span__end", "span__text"))
    assert marks == [(5, 9, "bbbb"), (20, 24, "eeee")]
    assert MarkingTime.objects.filter(assignment=a).exists()
    stored = dict(SpanJudgment.objects.filter(assignment=a).values_list("span_id", "span_verdict"))
    assert stored == {spans[0].pk: "error", spans[1].pk: "not_error"}
