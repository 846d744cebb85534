"""Edges of the item screen: offsets outside the BMP and with combining marks (code points end to end), a
failed save that shows on its card and can be retried, a cancelled add dialog that keeps nothing."""

from __future__ import annotations

import pytest

from annotator.models import Assignment, SpanJudgment
from annotator.selectors.spans import span_handle
from corpus.models import AnnotationKind, ErrorSpan
from studies.setup import CampaignSpec, campaign_create
from tests.factories import annotation, dataset, item, run, span_at

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

OUTPUT = "😀 Olive Grove 𠀀𠀁 serves e\u0301clairs near 👩‍👩‍👧 the river."


def _campaign(make_user, name: str):
    expert = make_user(f"edge-{name}")
    data = dataset(f"edge {name}", input_headers=["Data"], output_header="Review")
    made = item(data, "e1", OUTPUT, position=1)
    evaluator = run(data, f"edge-run-{name}")
    merged = annotation(made, evaluator, kind=AnnotationKind.ENSEMBLE)
    grove = span_at(merged, 0, "Grove", explanation="wrong name", severity=2)
    river = span_at(merged, 1, "river", explanation="no river", severity=3)
    campaign_create(CampaignSpec(name=f"edge {name}", dataset=data, runs=[evaluator], annotators=[expert],
                                 aspects=["accuracy"]))
    return expert, Assignment.objects.get(item=made), grove, river


def _select(page, text: str, start_in: int = 0, end_in: int | None = None) -> None:
    """Select `text` (or part of it) in the output as a mouse would: a DOM range in UTF-16 units, then mouseup."""
    page.evaluate(
        """([text, a, b]) => {
          const root = document.getElementById('output-text');
          const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
          let node;
          while ((node = walker.nextNode())) {
            const i = node.data.indexOf(text);
            if (i >= 0) {
              const range = document.createRange();
              range.setStart(node, i + a);
              range.setEnd(node, i + (b === null ? text.length : b));
              const sel = window.getSelection();
              sel.removeAllRanges();
              sel.addRange(range);
              document.getElementById('output-text').dispatchEvent(new MouseEvent('mouseup', {bubbles: true}));
              return;
            }
          }
          throw new Error('not in the output: ' + text);
        }""",
        [text, start_in, end_in],
    )


def _add_selected(page) -> None:
    page.locator("#add-at-selection").wait_for(state="visible")
    page.keyboard.press("a")
    page.locator("#add-dialog[open]").wait_for()
    page.keyboard.press("Enter")
    page.locator("#add-dialog[open]").wait_for(state="detached")


def test_offsets_after_emoji_cjk_extension_and_combining_marks_are_exact(page, live_server, login, make_user):
    expert, assignment, grove, _ = _campaign(make_user, "emoji")
    login(expert.username)
    page.goto(f"{live_server.url}/work/{assignment.pk}/")
    # The machine span after the emoji is marked on exactly its word.
    marks = page.locator("#output-text mark[data-spans]").all_inner_texts()
    assert marks[0] == "Grove"

    _select(page, "Olive")
    assert page.evaluate("() => window.getSelection().toString()") == "Olive"
    page.locator("#add-at-selection").wait_for(state="visible")
    page.keyboard.press("a")
    page.locator("#add-dialog[open]").wait_for()
    assert page.locator("#add-preview").inner_text() == "Olive"
    start = OUTPUT.index("Olive")
    assert page.locator("#add-range").inner_text() == f"[{start}–{start + 5}]"
    page.keyboard.press("Enter")
    page.locator("#added-list li", has_text="Olive").wait_for()

    _select(page, "𠀀𠀁")
    _add_selected(page)
    page.locator("#added-list li", has_text="𠀀𠀁").wait_for()

    # Part of a word with a combining mark: the snap grows it to the whole word, mark included.
    _select(page, "e\u0301clairs", 3, 5)
    _add_selected(page)
    page.locator("#added-list li", has_text="clairs").wait_for()

    added = {s.text: (s.start, s.end) for s in ErrorSpan.objects.filter(annotation__kind=AnnotationKind.HUMAN)}
    for text in ("Olive", "𠀀𠀁", "e\u0301clairs"):
        at = OUTPUT.index(text)
        assert added[text] == (at, at + len(text)), text
        assert OUTPUT[at:at + len(text)] == text
    # The heading stays the dataset's output header after an added error (it was replaced by "Output").
    assert page.locator("#output h2").inner_text() == "Review"


def test_failed_save_shows_on_its_card_and_retry_stores_it(page, live_server, login, make_user):
    expert, assignment, grove, _ = _campaign(make_user, "retry")
    login(expert.username)
    page.goto(f"{live_server.url}/work/{assignment.pk}/")
    failing = {"on": True}

    def flaky(route):
        if failing["on"] and route.request.method == "POST":
            route.fulfill(status=503, body="Service unavailable", content_type="text/plain")
        else:
            route.continue_()

    page.route("**/errors/**", flaky)
    page.wait_for_function("() => document.getElementById('work').dataset.ready === 'true'")
    page.keyboard.press("1")
    card = page.locator(f"#error-{span_handle(assignment.pk, grove.pk)}")
    card.locator(".save-state.is-problem").wait_for()
    assert "not saved" in card.locator(".save-state").inner_text()
    assert not SpanJudgment.objects.filter(span=grove).exists()
    failing["on"] = False
    card.locator("button.retry").click()
    card.locator("button.chip[aria-pressed='true'][data-key='1']").wait_for()
    assert "saved ✓" in card.inner_text()
    assert SpanJudgment.objects.get(span=grove).span_verdict == "error"


def test_cancelled_add_dialog_keeps_no_note(page, live_server, login, make_user):
    expert, assignment, *_ = _campaign(make_user, "cancel")
    login(expert.username)
    page.goto(f"{live_server.url}/work/{assignment.pk}/")
    _select(page, "Olive")
    page.locator("#add-at-selection").wait_for(state="visible")
    page.keyboard.press("a")
    page.locator("#add-dialog textarea[name='note']").fill("first thought")
    page.locator("#add-cancel").click()
    _select(page, "serves")
    page.locator("#add-at-selection").wait_for(state="visible")
    page.keyboard.press("a")
    page.locator("#add-dialog[open]").wait_for()
    assert page.locator("#add-dialog textarea[name='note']").input_value() == ""
