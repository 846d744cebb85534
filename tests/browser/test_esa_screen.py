"""An ESA^AI campaign with a crossed control arm run by keyboard alone: spans selected with Shift+arrows and
graded with w / e, pre-filled spans kept, re-graded, resized and deleted, missing content, spans done (d), the
score by arrows, page keys and digits, every item finished (f); then its report compiles with the scores, the
ranking and the arm comparison. Prints seconds per error span by arm (a scripted judge: see the note)."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import time

import pytest
from django.core.management import call_command

from analytics.selectors.esa import campaign_esa
from annotator.models import Assignment, EsaScore, WorkAction
from corpus.models import ErrorSpan
from corpus.protocols import esa
from tests.esa_study import OUTPUTS, build_esa_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# What the scripted judge does per output and arm. ESA (control arm): spans to mark (text, severity), missing
# content, score keys. ESA^AI: operations on the pre-filled spans (by their place in the list) and spans added.
SCRIPT = {
    ("sysA", 1): {"esa": [("bbbb", "major")], "esa_score": ["6", "0"],
                  "ai": [], "ai_score": ["6", "5"]},
    ("sysB", 1): {"esa": [("dddd", "minor"), ("ffff", "major")], "esa_missing": "minor",
                  "esa_score": ["PageDown", "PageDown"],
                  "ai": [("regrade", 0, "major"), ("resize", 1, ["ArrowRight"] * 5)], "ai_score": ["3", "5"]},
    ("sysA", 2): {"esa": [], "esa_score": ["End"],
                  "ai": [("add", "iiii", "minor")], "ai_score": ["9", "0"]},
    ("sysB", 2): {"esa": [("kkkk", "major")], "esa_score": ["4", "0"],
                  "ai": [("delete", 0), ("add", "kkkk", "major")], "ai_score": ["4", "5"]},
    ("sysA", 3): {"esa": [("nnnn", "minor")], "esa_score": ["8", "0"],
                  "ai": [("missing", "major")], "ai_score": ["7", "0"]},
    ("sysB", 3): {"esa": [("pppp", "major"), ("qqqq", "minor")], "esa_score": ["2", "0"],
                  "ai": [("delete", 0), ("add", "qqqq", "minor")], "ai_score": ["Home", "PageUp", "PageUp"]},
}
KEY = {t.value: t.key for t in esa.SEVERITIES}


def _idle(page) -> None:
    page.wait_for_function("() => document.getElementById('work').dataset.busy === 'false'")


def _count(page) -> int:
    return page.locator("#esa-spans li.esa-span").count()


def _wait_count(page, n: int) -> None:
    page.wait_for_function(f"() => document.querySelectorAll('#esa-spans li.esa-span').length === {n}")
    _idle(page)


def _select(page, output: str, text: str) -> None:
    """s puts the caret at the start; arrows move it, Shift+arrows extend (one press per character, the emoji
    included)."""
    chars = list(output)
    start = chars.index(text[0]) if len(text) == 1 else next(
        i for i in range(len(chars)) if "".join(chars[i:i + len(text)]) == text)
    page.keyboard.press("Escape")
    page.keyboard.press("s")
    for _ in range(start):
        page.keyboard.press("ArrowRight")
    for _ in range(len(text)):
        page.keyboard.press("Shift+ArrowRight")
    assert page.evaluate("() => window.getSelection().toString()") == text


def _focus(page, index: int) -> None:
    page.keyboard.press("Escape")
    for _ in range(index + 1):
        page.keyboard.press("j")


def _work_item(page, assignment: Assignment, system: str, segment: int) -> None:
    output = OUTPUTS[system][segment - 1]
    script = SCRIPT[(system, segment)]
    _idle(page)
    if assignment.in_control_arm:
        assert page.locator("#esa-arm").inner_text() == "ESA"
        assert _count(page) == 0  # plain ESA: nothing pre-filled
        for n, (text, severity) in enumerate(script["esa"], start=1):
            _select(page, output, text)
            page.keyboard.press(KEY[severity])
            _wait_count(page, n)
        if script.get("esa_missing"):
            page.keyboard.press(esa.MISSING_KEY)
            page.keyboard.press(KEY[script["esa_missing"]])
            _wait_count(page, len(script["esa"]) + 1)
        keys = script["esa_score"]
    else:
        assert page.locator("#esa-arm").inner_text() == "ESA^AI"
        n = _count(page)
        for op in script["ai"]:
            if op[0] == "regrade":
                _focus(page, op[1])
                page.keyboard.press(KEY[op[2]])
                page.wait_for_function(f"() => document.querySelectorAll('#esa-spans li.esa-span')[{op[1]}]"
                                       f".dataset.severity === '{op[2]}'")
            elif op[0] == "resize":
                _focus(page, op[1])
                before = page.locator("#esa-spans li.esa-span").nth(op[1]).get_attribute("data-end")
                page.keyboard.press("r")
                for key in op[2]:
                    page.keyboard.press(key)
                page.keyboard.press("Enter")
                page.wait_for_function(f"() => document.querySelectorAll('#esa-spans li.esa-span')[{op[1]}]"
                                       f".dataset.end !== '{before}'")
            elif op[0] == "delete":
                _focus(page, op[1])
                page.keyboard.press("x")
                n -= 1
                _wait_count(page, n)
            elif op[0] == "add":
                _select(page, output, op[1])
                page.keyboard.press(KEY[op[2]])
                n += 1
                _wait_count(page, n)
            elif op[0] == "missing":
                page.keyboard.press("Escape")
                page.keyboard.press(esa.MISSING_KEY)
                page.keyboard.press(KEY[op[1]])
                n += 1
                _wait_count(page, n)
            _idle(page)
        keys = script["ai_score"]
    # The slider is closed until the spans are done; d opens it and the keys set the score.
    assert page.locator("#esa-slider").is_disabled()
    page.keyboard.press("d")
    page.wait_for_function("() => document.getElementById('esa-score').dataset.spansDone === 'true'")
    assert page.locator("#esa-slider").is_enabled()
    for key in keys:
        page.keyboard.press(key)
    _idle(page)
    page.keyboard.press("f")


def _expected_score(keys: list[str]) -> int:
    value, digits = None, ""
    for key in keys:
        base = 50 if value is None else value
        if key.isdigit():
            digits += key
            value = int(digits)
        else:
            value = {"PageDown": base - 10, "PageUp": base + 10, "Home": 0, "End": 100,
                     "ArrowRight": base + 1, "ArrowLeft": base - 1}[key]
    return value


def test_an_esa_ai_campaign_with_a_control_arm_by_keyboard(page, live_server, login, make_user, tmp_path, capsys):
    judges = [make_user("esa-kbd-1"), make_user("esa-kbd-2")]
    study = build_esa_study(judges, name="ESA by keyboard", control_arm=1.0)
    where = {it.pk: key for key, it in study.items.items()}
    wall = {True: 0.0, False: 0.0}
    for judge in judges:
        assignments = study.assignments(judge)
        login(judge.username)
        page.goto(f"{live_server.url}/work/{assignments[0].pk}/")
        for k, assignment in enumerate(assignments):
            page.wait_for_url(re.compile(rf"/work/{assignment.pk}/$"))
            began = time.monotonic()
            _work_item(page, assignment, *where[assignment.item_id])
            if k + 1 < len(assignments):
                page.wait_for_url(re.compile(rf"/work/{assignments[k + 1].pk}/$"))
            else:
                page.wait_for_url(re.compile(r"/campaigns/"))
            wall[assignment.in_control_arm] += time.monotonic() - began
        page.context.clear_cookies()

    done = Assignment.objects.filter(campaign=study.campaign)
    assert done.count() == 12 and all(a.status == "done" for a in done)
    for a in done.select_related("esa"):
        script = SCRIPT[where[a.item_id]]
        assert a.esa.score == _expected_score(script["esa_score" if a.in_control_arm else "ai_score"])
        assert a.esa.prefilled == (not a.in_control_arm and bool(study.machine[where[a.item_id]]))
    assert EsaScore.objects.filter(assignment__campaign=study.campaign, score__isnull=False).count() == 12
    # every change to a span in the ESA^AI arm was logged with its milliseconds
    logged = WorkAction.objects.filter(assignment__campaign=study.campaign, assignment__in_control_arm=False)
    assert logged.count() == 8 and all(x.ms is not None for x in logged)
    missing = ErrorSpan.objects.filter(annotation__source__added__campaign=study.campaign, category=esa.MISSING)
    assert missing.count() == 2 and all(s.start is None for s in missing)

    figures = campaign_esa(study.campaign)
    prefill = figures["prefill"]
    assert (prefill["prefilled"], prefill["kept"], prefill["deleted"], prefill["resized"], prefill["regraded"],
            prefill["added"]) == (6, 2, 2, 1, 1, 4)
    arms = {row["arm"]: row for row in figures["arms"]["arms"]}
    with capsys.disabled():
        print(f"\nESA by keyboard (a scripted judge): seconds per error span by arm. Working time (the screen's "
              f"1 s timer): ESA {arms['esa']['seconds_per_span']:.2f}, "
              f"ESA^AI {arms['esa_ai']['seconds_per_span']:.2f}; "
              f"span phase (page load to spans done): ESA {arms['esa']['span_phase_seconds_per_span']:.2f}, "
              f"ESA^AI {arms['esa_ai']['span_phase_seconds_per_span']:.2f}; the script's wall clock: ESA "
              f"{wall[True]:.1f} s for {arms['esa']['spans']} spans, ESA^AI {wall[False]:.1f} s for "
              f"{arms['esa_ai']['spans']} spans")

    if shutil.which("pdflatex") is None:
        pytest.skip("the report's LaTeX needs Debian's pdflatex (texlive-latex-recommended)")
    out = tmp_path / "report"
    call_command("export_report", "--campaign", str(study.campaign.pk), "--format", "latex", "-o", str(out),
                 stdout=io.StringIO())
    main = (out / "report.tex").read_text()
    for table in ("esa_scores", "esa_ranking_pairs", "esa_severities", "esa_agreement", "esa_arms",
                  "esa_arm_differences", "esa_prefill"):
        assert rf"\input{{tables/{table}}}" in main, table
    assert "figures/esa_scores.pdf" in main
    result = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "report.tex"], cwd=out,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-3000:]
    assert (out / "report.pdf").read_bytes().startswith(b"%PDF")


def test_esa_by_mouse_plain_campaign_without_runs(page, live_server, login, make_user):
    """Without runs a campaign is plain ESA: a dragged selection snaps to the word, the chips grade it, the
    [missing] token marks missing content, a click on a span focuses it, and the score waits for Spans done."""
    from tests.browser.test_item_screen import _drag_select

    judge = make_user("esa-mouse")
    study = build_esa_study([judge], name="ESA by mouse", control_arm=0.0, per_item=1, with_run=False)
    first = study.assignments(judge)[0]
    output = first.item.output
    login("esa-mouse")
    page.goto(f"{live_server.url}/work/{first.pk}/")
    assert page.locator("#esa-arm").inner_text() == "ESA" and _count(page) == 0
    _drag_select(page, 1, 3)  # inside the first word: snaps to all of it
    page.wait_for_function("() => document.getElementById('work').dataset.step === 'severity'")
    page.locator(".esa-severities button[data-severity='major']").click()
    _wait_count(page, 1)
    word = output.split()[0]
    assert page.locator("#esa-spans li.esa-span").first.get_attribute("data-severity") == "major"
    assert word in page.locator("#esa-spans").inner_text()
    page.locator("#esa-missing-token").click()
    page.locator(".esa-severities button[data-severity='minor']").click()
    _wait_count(page, 2)
    page.locator("#output-text mark[data-added]").first.click()
    assert page.locator("#esa-spans li.esa-span.is-focus").count() == 1
    assert page.locator("#esa-slider").is_disabled()
    page.locator("#esa-done-button").click()
    page.wait_for_function("() => document.getElementById('esa-score').dataset.spansDone === 'true'")
    page.locator("#esa-slider").fill("35")
    _idle(page)
    page.wait_for_function("() => document.getElementById('esa-score').dataset.score === '35'")
    assert EsaScore.objects.get(assignment=first).score == 35
    spans = ErrorSpan.objects.filter(annotation__source__added__annotator=judge)
    assert sorted((s.text, s.category) for s in spans) == sorted([(word, ""), ("", esa.MISSING)])
