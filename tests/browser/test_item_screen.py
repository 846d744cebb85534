"""The item screen on a long document: focus in view, undo of an added error, word snapping, phone width."""

from __future__ import annotations

import pytest

from annotator.models import Assignment, SpanJudgment
from annotator.selectors.spans import span_handle
from corpus.models import Annotation, AnnotationKind, ErrorSpan, Item
from corpus.services.importing import items_import
from studies.setup import CampaignSpec, campaign_create
from tests.browser.long_item import build_long_campaign
from tests.factories import annotation, build_campaign, run, span

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

IN_VIEWPORT = """(sel) => { const r = document.querySelector(sel).getBoundingClientRect();
  return r.height > 0 && r.top >= 0 && r.left >= 0
    && r.bottom <= window.innerHeight && r.right <= window.innerWidth; }"""


def _open(page, live_server, login, username: str):
    ann_assignment = Assignment.objects.get(annotator__username=username)
    login(username)
    page.goto(f"{live_server.url}/work/{ann_assignment.pk}/")
    page.locator("#errors .error-card.is-focus").wait_for()
    return ann_assignment


def _drag_select(page, start: int, end: int) -> None:
    """Drag the real mouse from output offset `start` to `end` (character positions inside #output-text)."""
    points = page.evaluate("""([a, b]) => {
      function at(offset) {
        for (const seg of document.querySelectorAll('#output-text [data-o]')) {
          const o = Number(seg.dataset.o), n = seg.textContent.length;
          if (offset >= o && offset < o + n) {
            const r = document.createRange();
            r.setStart(seg.firstChild, offset - o); r.setEnd(seg.firstChild, offset - o + 1);
            const box = r.getClientRects()[0]; return [box.left + 1, box.top + box.height / 2];
          }
        }
      }
      return [at(a), at(b)];
    }""", [start, end])
    (x1, y1), (x2, y2) = points
    page.mouse.move(x1, y1)
    page.mouse.down()
    page.mouse.move((x1 + x2) / 2, y2, steps=3)
    page.mouse.move(x2, y2, steps=3)
    page.mouse.up()


def test_j_brings_the_focused_span_into_view_on_a_long_document(page, live_server, login, make_user):
    ann = make_user("longreader")
    _, long, spans = build_long_campaign([ann])
    opened = _open(page, live_server, login, "longreader")
    # The box score is a real table with its header row sticky; the bar with Finish stays on screen.
    assert page.locator(".data-table th").first.evaluate("th => getComputedStyle(th).position") == "sticky"
    assert spans["late_b"].start > 3000
    page.keyboard.press("j")
    page.locator(f"#error-{span_handle(opened.pk, spans['late_b'].pk)}.is-focus").wait_for()
    page.wait_for_function(f"() => ({IN_VIEWPORT})('#output-text mark.is-focus')")
    assert page.evaluate(IN_VIEWPORT, "#output-text mark.is-focus")
    assert page.evaluate(IN_VIEWPORT, f"#error-{span_handle(opened.pk, spans['late_b'].pk)}")
    assert page.evaluate(IN_VIEWPORT, "#finish-button") and page.evaluate(IN_VIEWPORT, "#progress-text")
    # Only the card in focus is open; the others are one line.
    heights = page.locator("#errors .error-card").evaluate_all("els => els.map(e => e.getBoundingClientRect().height)")
    focused = page.locator("#errors .error-card.is-focus").evaluate("e => e.getBoundingClientRect().height")
    assert all(h < 60 for h in heights if h != focused) and focused > 120
    # A click on another highlight moves the focus to its card and keeps both in view.
    page.locator(f"#output-text mark[data-spans~='{span_handle(opened.pk, spans['last'].pk)}']").first.click()
    page.locator(f"#error-{span_handle(opened.pk, spans['last'].pk)}.is-focus").wait_for()
    assert page.evaluate(IN_VIEWPORT, f"#error-{span_handle(opened.pk, spans['last'].pk)}")
    assert page.evaluate(IN_VIEWPORT, "#output-text mark.is-focus")


def test_a_mouse_selection_inside_a_word_adds_the_whole_word_and_undo_removes_only_it(
    page, live_server, login, make_user
):
    ann = make_user("mouser")
    built = build_campaign([ann], per_item=1)
    assignment = Assignment.objects.get(annotator=ann, item=built.items[0])
    login("mouser")
    page.goto(f"{live_server.url}/work/{assignment.pk}/")
    page.locator("#errors .error-card.is-focus").wait_for()
    page.keyboard.press("1")  # a verdict first: undo must leave it alone
    card = span_handle(assignment.pk, built.spans["b1_family"].pk)
    page.locator(f"#error-{card} button[aria-pressed='true'][data-key='1']").wait_for()

    output = built.items[0].output
    word = "Copper"
    at = output.index(word)
    _drag_select(page, at + 2, at + 4)  # "pp" inside "Copper"
    button = page.locator("#add-at-selection")
    button.wait_for()
    assert page.evaluate("() => window.getSelection().toString()") == word
    button.click()
    page.locator("#add-dialog[open]").wait_for()
    assert page.locator("#add-preview").inner_text() == word
    page.keyboard.press("2")  # NUMBER, by its key
    page.keyboard.press("Enter")
    page.locator("#added-list li", has_text=word).wait_for()
    added = ErrorSpan.objects.get(annotation__kind="human", annotation__author=ann)
    assert (added.start, added.end, added.text, added.category) == (at, at + len(word), word, "NUMBER")

    # Undo after adding: the added error goes, the verdict stays.
    page.keyboard.press("u")
    page.wait_for_function("() => !document.querySelector('#added-list li')")
    assert not ErrorSpan.objects.filter(annotation__kind="human").exists()
    judgment = SpanJudgment.objects.get(assignment=assignment, span=built.spans["b1_family"])
    assert judgment.span_verdict == "error"
    assert "removed the added error" in page.locator("#flash").inner_text()
    # Redo brings it back.
    page.locator("#redo-button").click()
    page.locator("#added-list li", has_text=word).wait_for()
    assert ErrorSpan.objects.filter(annotation__kind="human", text=word).count() == 1

    # Alt keeps the exact selection (no snapping).
    page.keyboard.down("Alt")
    _drag_select(page, at + 2, at + 4)
    page.keyboard.up("Alt")
    button.wait_for()
    assert page.evaluate("() => window.getSelection().toString()") == "pp"


def test_phone_width_has_no_horizontal_scroll(browser, live_server, make_user):
    build_long_campaign([make_user("phoneuser")])
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    try:
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("#id_username", "phoneuser")
        page.fill("#id_password", "pass-1234")
        page.keyboard.press("Enter")
        page.wait_for_url(f"{live_server.url}/")
        assignment = Assignment.objects.get(annotator__username="phoneuser")
        page.goto(f"{live_server.url}/work/{assignment.pk}/")
        page.locator("#errors .error-card.is-focus").wait_for()
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
        # The box score scrolls inside its own box instead.
        widths = page.locator(".table-scroll").evaluate_all("els => els.map(e => e.scrollWidth - e.clientWidth)")
        assert max(widths) > 200
    finally:
        context.close()


def test_auto_advance_is_a_remembered_setting_that_moves_on_after_both_verdicts(page, live_server, login, make_user):
    ann = make_user("advancer")
    built = build_campaign([ann], per_item=1)
    assignment = Assignment.objects.get(annotator=ann, item=built.items[0])
    s = built.spans
    login("advancer")
    page.goto(f"{live_server.url}/work/{assignment.pk}/")
    page.locator(f"#error-{span_handle(assignment.pk, s['b1_family'].pk)}.is-focus").wait_for()
    page.locator("#auto-advance").check()
    page.locator("#flash", has_text="Auto-advance is on").wait_for()
    ann.refresh_from_db()
    assert ann.auto_advance is True
    page.keyboard.press("1")
    page.keyboard.press("q")
    page.locator(f"#error-{span_handle(assignment.pk, s['a1_family'].pk)}.is-focus").wait_for()  # moved on by itself
    # Remembered: after a reload the box is still ticked.
    page.reload()
    assert page.locator("#auto-advance").is_checked()


def test_on_a_real_rotowire_item_every_j_keeps_the_focused_span_in_view(page, live_server, login, make_user,
                                                                        rotowire_file, tmp_path):
    """The shared RotoWire summaries (skips without them): its gold spans, posed as a run's errors."""
    first = tmp_path / "one.jsonl"
    first.write_text(rotowire_file.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    items_import(path=first, dataset_name="rotowire one", task_slug="data-to-text")
    game = Item.objects.get(dataset__name="rotowire one")
    machine = run(game.dataset, "rotowire-as-run")
    answer = annotation(game, machine)
    golds = Annotation.objects.get(item=game, kind=AnnotationKind.GOLD).spans.order_by("start")
    for n, g in enumerate(golds):
        span(answer, n, g.start, g.end, text=g.text, explanation=g.explanation or "gold error", severity=3)
    ann = make_user("rotoreader")
    campaign_create(CampaignSpec(name="rotowire screen", dataset=game.dataset, runs=[machine], annotators=[ann],
                    aspects=["accuracy"]))
    _open(page, live_server, login, "rotoreader")
    for _ in range(golds.count() - 1):
        page.keyboard.press("j")
        assert page.evaluate(IN_VIEWPORT, "#output-text mark.is-focus")
        assert page.evaluate(IN_VIEWPORT, "#errors .error-card.is-focus")
    assert page.locator("#errors .error-card").last.get_attribute("class").find("is-focus") >= 0
