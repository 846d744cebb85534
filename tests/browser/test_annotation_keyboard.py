"""An annotator judges an item by keyboard alone, adds a missed span, undoes, finishes; the stored rows match."""

from __future__ import annotations

import pytest

from annotator.models import Assignment, JudgmentEvent, SpanJudgment
from annotator.selectors.spans import span_handle
from corpus.models import Annotation, ErrorSpan
from tests.factories import SECRET_NAMES, build_campaign

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def handle(assignment, span) -> int:
    return span_handle(assignment.pk, span.pk)


def _card(page, span_pk: int):
    return page.locator(f"#error-{span_pk}")


def _expect_pressed(page, span_pk: int, label: str) -> None:
    """Wait until the re-rendered card shows `label` as the chosen chip (text, not only colour)."""
    chip = _card(page, span_pk).locator("button.chip[aria-pressed='true']", has_text=label)
    chip.wait_for()
    assert "✓" in chip.inner_text() or "⚑" in chip.inner_text()


def test_keyboard_only_annotation_of_an_item(page, live_server, login, make_user):
    ann = make_user("kbd")
    built = build_campaign([ann], per_item=1)
    assignment = Assignment.objects.get(annotator=ann, item=built.items[0])
    other = Assignment.objects.get(annotator=ann, item=built.items[1])
    s = built.spans
    login("kbd")
    page.goto(f"{live_server.url}/work/{assignment.pk}/")

    # Reading order: the shared place (beta's wider span starts first, then alpha's), then the missing location.
    order = page.locator("#errors .error-card").evaluate_all("els => els.map(e => Number(e.dataset.span))")
    assert order == [handle(assignment, s[name]) for name in ("b1_family", "a1_family", "a1_missing")]
    html = page.content()
    for secret in SECRET_NAMES:
        assert secret not in html

    # The first error is in focus, framed, and its place in the output is marked.
    first = _card(page, handle(assignment, s["b1_family"]))
    assert "is-focus" in first.get_attribute("class")
    assert page.locator("#output-text mark.is-focus-start").count() == 1

    # Error 1: Error + Correct + the 'too strict' flag, and raise the severity (beta said 3; = makes it 4).
    page.keyboard.press("1")
    _expect_pressed(page, handle(assignment, s["b1_family"]), "Error")
    page.keyboard.press("q")
    _expect_pressed(page, handle(assignment, s["b1_family"]), "Correct")
    page.keyboard.press("z")
    _expect_pressed(page, handle(assignment, s["b1_family"]), "Too strict")
    page.keyboard.press("=")
    _card(page, handle(assignment, s["b1_family"])).locator("button.sev[aria-pressed='true']", has_text="4").wait_for()
    assert "saved ✓" in _card(page, handle(assignment, s["b1_family"])).inner_text()

    # Error 2: Not an error / Not an error.
    page.keyboard.press("j")
    assert "is-focus" in _card(page, handle(assignment, s["a1_family"])).get_attribute("class")
    page.keyboard.press("2")
    _expect_pressed(page, handle(assignment, s["a1_family"]), "Not an error")
    page.keyboard.press("y")
    _card(page, handle(assignment, s["a1_family"])).locator("button[aria-pressed='true'][data-key='y']").wait_for()

    # Error 3 (no location in the text): Hallucination + Vague, then undo the Vague and choose Incorrect.
    page.keyboard.press("j")
    page.keyboard.press("4")
    _expect_pressed(page, handle(assignment, s["a1_missing"]), "Hallucination")
    page.keyboard.press("r")
    _expect_pressed(page, handle(assignment, s["a1_missing"]), "Vague")
    page.keyboard.press("u")
    missing = handle(assignment, s["a1_missing"])
    page.wait_for_function(
        f"""() => !document.querySelector('#error-{missing} button[aria-pressed="true"][data-key="r"]')"""
    )
    assert page.locator("#flash").inner_text().startswith("Undone")
    assert _card(page, missing).locator("button[aria-pressed='true'][data-key='4']").count() == 1
    page.keyboard.press("t")
    _expect_pressed(page, handle(assignment, s["a1_missing"]), "Incorrect")

    # A comment, by keyboard: m, type, Enter saves, Esc leaves the field.
    page.keyboard.press("m")
    page.keyboard.type("quoted text is not in the output")
    page.keyboard.press("Enter")
    page.wait_for_function(
        f"""() => document.querySelector('#error-{handle(assignment, s["a1_missing"])} .saved') !== null"""
    )
    page.keyboard.press("Escape")

    # A missed error, selected by keyboard: s puts the caret at the start, Shift+Right x17 selects
    # "The Copper Kettle", a opens the form, 1 picks the campaign's first category (NAME), Enter adds it.
    page.keyboard.press("s")
    for _ in range(17):
        page.keyboard.press("Shift+ArrowRight")
    assert page.evaluate("() => window.getSelection().toString()") == "The Copper Kettle"
    page.keyboard.press("a")
    page.locator("#add-dialog[open]").wait_for()
    assert page.locator("#add-preview").inner_text() == "The Copper Kettle"
    page.keyboard.press("1")
    assert page.locator("#add-categories input[data-key='1']").is_checked()
    page.keyboard.press("Enter")
    page.locator("#added-list li", has_text="The Copper Kettle").wait_for()
    assert page.locator("#output-text mark.hl-added").first.inner_text() == "The Copper Kettle"

    # Everything judged: the finish button is enabled; f finishes and opens the next open item.
    assert page.locator("#finish-button").get_attribute("aria-disabled") is None
    page.keyboard.press("f")
    page.wait_for_url(f"{live_server.url}/work/{other.pk}/")

    stored = {
        j.span_id: (j.span_verdict, j.explanation_verdict, j.flags(), j.comment, j.corrected_severity)
        for j in SpanJudgment.objects.filter(annotator=ann)
    }
    assert stored == {
        s["b1_family"].pk: ("error", "correct", ["too_strict"], "", 4),
        s["a1_family"].pk: ("not_error", "not_error", [], "", None),
        s["a1_missing"].pk: ("hallucination", "incorrect", [], "quoted text is not in the output", None),
    }
    # The undone change stays in the audit trail: vague was set, then reverted by the same user.
    vague = JudgmentEvent.objects.get(judgment__span=s["a1_missing"], field="explanation_verdict", new_value="vague")
    assert vague.undone and vague.user == ann
    revert = JudgmentEvent.objects.get(judgment__span=s["a1_missing"], field="explanation_verdict",
                                       old_value="vague", new_value="")
    assert revert.user == ann

    added = ErrorSpan.objects.get(annotation__kind="human", annotation__author=ann)
    assert (added.start, added.end, added.text, added.category, added.match) == (
        0, 17, "The Copper Kettle", "NAME", "exact"
    )
    annotation = Annotation.objects.get(pk=added.annotation_id)
    assert (annotation.source.label, annotation.source.added.campaign_id, annotation.aspect) == (
        "kbd", built.campaign.pk, "accuracy"
    )

    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.DONE and assignment.finished_at is not None


def test_finish_is_refused_until_every_error_has_both_verdicts(page, live_server, login, make_user):
    ann = make_user("halfway")
    built = build_campaign([ann], per_item=1)
    assignment = Assignment.objects.get(annotator=ann, item=built.items[1])
    login("halfway")
    page.goto(f"{live_server.url}/work/{assignment.pk}/")
    page.wait_for_function("() => document.getElementById('work').dataset.ready === 'true'")
    page.keyboard.press("1")
    _expect_pressed(page, handle(assignment, built.spans["b2_rating"]), "Error")
    page.keyboard.press("f")
    page.locator("#flash.flash-problem").wait_for()
    assert "1 of 1 errors still need" in page.locator("#flash").inner_text()
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.IN_PROGRESS
    page.keyboard.press("q")
    _expect_pressed(page, handle(assignment, built.spans["b2_rating"]), "Correct")
    page.keyboard.press("f")
    page.wait_for_url(lambda url: f"/work/{assignment.pk}/" not in url)
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.DONE


def test_shortcut_sheet_opens_on_question_mark(page, live_server, login, make_user):
    ann = make_user("helpme")
    built = build_campaign([ann], per_item=1)
    assignment = Assignment.objects.get(annotator=ann, item=built.items[0])
    login("helpme")
    page.goto(f"{live_server.url}/work/{assignment.pk}/")
    page.keyboard.press("?")
    dialog = page.locator("#help-dialog[open]")
    dialog.wait_for()
    assert "Hallucination" in dialog.inner_text() and "undo" in dialog.inner_text()
    page.keyboard.press("Escape")
    page.wait_for_function("() => !document.querySelector('#help-dialog').open")


def test_fast_typing_loses_no_key(page, live_server, login, make_user):
    """Keys pressed while a save is on its way wait for it; every one of them is stored."""
    ann = make_user("speedy")
    built = build_campaign([ann], per_item=1)
    assignment = Assignment.objects.get(annotator=ann, item=built.items[0])
    s = built.spans
    login("speedy")
    page.goto(f"{live_server.url}/work/{assignment.pk}/")
    page.locator("#errors .error-card.is-focus").wait_for()
    for key in ["1", "w", "x", "j", "3", "e", "c", "j", "2", "y"]:
        page.keyboard.press(key)
    page.locator("#progress-text", has_text="3 of 3").wait_for()
    # Cards save side by side (one queue per card): wait until every key has landed, not only the last card.
    page.wait_for_function("() => document.getElementById('work').dataset.busy === 'false'")
    stored = {j.span_id: (j.span_verdict, j.explanation_verdict, j.flags())
              for j in SpanJudgment.objects.filter(annotator=ann)}
    assert stored == {
        s["b1_family"].pk: ("error", "partially_correct", ["not_aspect_related"]),
        s["a1_family"].pk: ("no_span", "incomplete", ["repeated"]),
        s["a1_missing"].pk: ("not_error", "not_error", []),
    }
