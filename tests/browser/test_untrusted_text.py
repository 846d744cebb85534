"""Dataset and LLM text with script payloads is shown as text: no dialog fires, no node is injected."""

from __future__ import annotations

import pytest

from annotator.models import Assignment
from corpus.models import Item
from tests.factories import build_campaign

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SCRIPT = "<script>alert('xss-script')</script>"
IMG = "<img src=x onerror=\"alert('xss-img')\">"
EVIL_OUTPUT = f"It is not family-friendly. {SCRIPT} and {IMG} end"


def test_script_and_img_payloads_render_as_text_everywhere(page, live_server, login, make_user):
    ann = make_user("victim")
    built = build_campaign([ann], per_item=1, output_1=EVIL_OUTPUT,
                           explanation_1=f"Bad: {IMG} and {SCRIPT}")
    Item.objects.filter(pk=built.items[0].pk).update(inputs={"Data": f"name[{IMG}] | food[{SCRIPT}]",
                                                             "Note": f"A: {SCRIPT}\nB: {IMG}"})
    assignment = Assignment.objects.get(annotator=ann, item=built.items[0])
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    login("victim")
    page.goto(f"{live_server.url}/work/{assignment.pk}/")
    page.locator("#errors .error-card").first.wait_for()

    # A machine span covering the payloads is highlighted, and its text stays text.
    assert SCRIPT in page.locator("#output-text").inner_text()
    assert IMG in page.locator("#output-text").inner_text()
    # (compact cards hide their body, so read the text content rather than the rendered text)
    assert IMG in page.locator("#errors").text_content()
    # No element was injected: the only images are none, the only scripts are htmx and our own, and the only
    # data blocks are the protocol's key map and the campaign's categories (JSON that never runs).
    assert page.locator("img").count() == 0
    data_blocks = page.locator("script[type='application/json']").evaluate_all("els => els.map(e => e.id)")
    assert data_blocks == ["sj-keys", "sj-categories"]
    sources = page.locator("script:not([type='application/json'])").evaluate_all(
        "els => els.map(e => e.getAttribute('src') || e.textContent)")
    assert all(src and src.endswith(".js") for src in sources), sources
    assert "alert" not in "".join(sources)

    # Adding a span over the payload (script-driven selection + the add shortcut) keeps it text too.
    start = EVIL_OUTPUT.index(SCRIPT)
    page.evaluate(
        """([start, end]) => {
             const root = document.getElementById('output-text');
             const find = (o) => { for (const s of root.children) { const b = +s.dataset.o;
               if (o >= b && o <= b + s.textContent.length) return [s.firstChild, o - b]; } };
             const r = document.createRange(); r.setStart(...find(start)); r.setEnd(...find(end));
             const sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(r);
           }""",
        [start, start + len(SCRIPT)],
    )
    page.locator("body").press("a")
    page.locator("#add-dialog[open]").wait_for()
    page.locator("#add-form textarea[name='note']").fill(IMG)  # categories are a fixed set; the note is free text
    page.locator("#add-form button[type='submit']").click()
    page.locator("#added-list li").first.wait_for()
    assert SCRIPT in page.locator("#added-list").inner_text() and IMG in page.locator("#added-list").inner_text()
    page.wait_for_timeout(300)
    assert page.locator("img").count() == 0
    assert dialogs == []
    from corpus.models import ErrorSpan

    added = ErrorSpan.objects.get(annotation__kind="human")
    assert (added.start, added.end, added.text) == (start, start + len(SCRIPT), SCRIPT)


def test_other_annotators_assignment_is_not_found_in_the_browser(page, live_server, login, make_user):
    me, other = make_user("me"), make_user("other")
    built = build_campaign([me, other], per_item=2)
    theirs = Assignment.objects.get(annotator=other, item=built.items[0])
    login("me")
    response = page.goto(f"{live_server.url}/work/{theirs.pk}/")
    assert response.status == 404
    response = page.goto(f"{live_server.url}/runs/{built.runs[0].pk}/")
    assert response.status == 403
    assert "secret-run-alpha" not in page.content()
