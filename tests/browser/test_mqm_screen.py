"""An MQM campaign run by keyboard alone: document context, a span selected with Shift+arrows, category and
severity by keys, a whole-segment Non-translation, undo, every item finished; then its report compiles."""

from __future__ import annotations

import io
import re
import shutil
import subprocess

import pytest
from django.core.management import call_command

from annotator.models import Assignment
from corpus.models import ErrorSpan
from corpus.protocols import mqm
from tests.mqm_study import SEGMENTS, build_mqm_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _errors(page) -> int:
    return page.locator("#mqm-errors li.mqm-error").count()


def _wait_errors(page, n: int) -> None:
    page.wait_for_function(f"() => document.querySelectorAll('#mqm-errors li.mqm-error').length === {n}")
    page.wait_for_function("() => document.getElementById('work').dataset.busy === 'false'")


def test_an_mqm_campaign_by_keyboard_with_document_context(page, live_server, login, make_user, tmp_path):
    ann = make_user("mqm-kbd")
    study = build_mqm_study(tmp_path, [ann])
    assignments = study.assignments(ann)
    first, second = assignments[0], assignments[1]
    login("mqm-kbd")
    page.goto(f"{live_server.url}/work/{first.pk}/")

    # The document: this system's three segments in order, the current one highlighted.
    segments = page.locator("#mqm-document li.mqm-seg")
    assert segments.count() == len(SEGMENTS)
    current = page.locator("#mqm-document li.is-current")
    assert current.count() == 1 and first.item.output in current.inner_text()
    position = int(first.item.extra["mqm"]["seg_id"]) - 1
    assert "is-current" in (segments.nth(position).get_attribute("class") or "")

    # s, then Shift+Right x5, Enter: the first five characters; 1 (Accuracy) 1 (Mistranslation) e (Major).
    page.keyboard.press("s")
    for _ in range(5):
        page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("Enter")
    # taking a selection trims its spaces (the error is the words), so five characters ending in one show four
    picked = first.item.output[:5].strip()
    assert page.locator("#mqm-selected").inner_text() == picked
    page.keyboard.press("1")
    assert page.locator("#work").get_attribute("data-step") == "subcategory"
    page.keyboard.press("1")
    assert page.locator("#work").get_attribute("data-step") == "severity"
    page.keyboard.press("e")
    _wait_errors(page, 1)
    assert "Accuracy/Mistranslation" in page.locator("#mqm-errors").inner_text()
    assert page.locator("#output-text mark.hl-added").count() >= 1

    # t: the whole segment is a Non-translation; u takes it back, Shift+U brings it again.
    page.keyboard.press("t")
    _wait_errors(page, 2)
    page.keyboard.press("u")
    _wait_errors(page, 1)
    page.keyboard.press("Shift+U")
    _wait_errors(page, 2)

    # f finishes and opens the next item; there a Minor Style/Awkward by keys (4 then 1, then w).
    page.keyboard.press("f")
    page.wait_for_url(re.compile(rf"/work/{second.pk}/$"))
    page.keyboard.press("s")
    for _ in range(3):
        page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("Enter")
    page.keyboard.press("4")
    page.keyboard.press("1")
    page.keyboard.press("w")
    _wait_errors(page, 1)
    for assignment in assignments[1:]:
        page.wait_for_url(re.compile(rf"/work/{assignment.pk}/$"))
        page.wait_for_function("() => document.getElementById('work').dataset.busy === 'false'")
        page.keyboard.press("f")
    page.wait_for_url(re.compile(r"/campaigns/"))

    assert Assignment.objects.filter(campaign=study.campaign, status=Assignment.Status.DONE).count() == len(assignments)
    spans = {s.category: s for s in ErrorSpan.objects.filter(annotation__source__added__annotator=ann)}
    assert set(spans) == {"Accuracy/Mistranslation", "Non-translation", "Style/Awkward"}
    assert spans["Accuracy/Mistranslation"].text == picked
    assert spans["Accuracy/Mistranslation"].severity == mqm.SEVERITY_CODES["major"]
    assert (spans["Non-translation"].start, spans["Non-translation"].end) == (0, len(first.item.output))
    assert spans["Style/Awkward"].severity == mqm.SEVERITY_CODES["minor"]

    if shutil.which("pdflatex") is None:
        pytest.skip("the report's LaTeX needs Debian's pdflatex (texlive-latex-recommended)")
    out = tmp_path / "report"
    call_command("export_report", "--campaign", str(study.campaign.pk), "--format", "latex", "-o", str(out),
                 stdout=io.StringIO())
    main = (out / "report.tex").read_text()
    assert r"\input{tables/mqm_scores}" in main and r"\input{tables/mqm_categories}" in main
    result = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "report.tex"], cwd=out,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-3000:]
    assert (out / "report.pdf").read_bytes().startswith(b"%PDF")


def test_an_omission_is_marked_in_the_source_by_keys_trimmed_to_its_word_and_by_mouse(page, live_server, login,
                                                                                     make_user, tmp_path):
    ann = make_user("mqm-source")
    study = build_mqm_study(tmp_path, [ann], name="MQM source screen")
    night = next(a for a in study.assignments(ann) if a.item.external_id == "talk:3" and a.item.system == "sysA")
    login("mqm-source")
    page.goto(f"{live_server.url}/work/{night.pk}/")
    # o selects in the source "Good night.": Alt+Right moves past "Good", Shift+Alt+Right takes " night"; the
    # leading space is trimmed away, and 1 3 e marks a Major Accuracy/Omission there
    page.keyboard.press("o")
    page.keyboard.press("Alt+ArrowRight")
    page.keyboard.press("Shift+Alt+ArrowRight")
    page.keyboard.press("Enter")
    assert page.locator("#mqm-selected").inner_text() == "night (in the source)"
    for key in ("1", "3", "e"):
        page.keyboard.press(key)
    _wait_errors(page, 1)
    span = ErrorSpan.objects.get(annotation__source__added__annotator=ann)
    assert (span.text, span.source_start, span.source_end, span.start, span.category) == (
        "night", 5, 10, None, "Accuracy/Omission")
    assert page.locator("#source-text mark.hl-added").count() == 1
    assert page.locator("#output-text mark.hl-added").count() == 0
    assert "[source 5–10]" in page.locator("#mqm-errors").inner_text()
    # the mouse in the source: a drag over "Goo" snaps to "Good"
    page.evaluate("""() => {
      const seg = document.querySelector('#source-text [data-o]');
      const r = document.createRange();
      r.setStart(seg.firstChild, 0); r.setEnd(seg.firstChild, 3);
      const sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(r);
      seg.dispatchEvent(new MouseEvent('mouseup', { bubbles: true }));
    }""")
    page.wait_for_function("() => document.getElementById('mqm-selected').textContent === 'Good (in the source)'")
    for key in ("8", "w"):  # Other, Minor
        page.keyboard.press(key)
    _wait_errors(page, 2)
    assert ErrorSpan.objects.filter(annotation__source__added__annotator=ann, source_start=0, source_end=4).exists()
