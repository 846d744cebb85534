"""A pairwise study in the browser, by keyboard, as a fast typist works: two judges each open their first screen,
press 1, 2 or t, write a reason (r, type, Esc), undo a choice with u and redo it, move the focus between the outputs
with x, mark a span on the output in focus (s, arrows, Shift+arrows, m) and take one back with u, and finish
every screen with f, landing on the next one and at the end on their queue. Then what the page
showed is what the database holds: the choice per screen, the reason, and a balanced design; and the campaign's
report compiles."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
from collections import Counter

import pytest
from django.core.management import call_command

from annotator.models import Assignment, ComparisonUnit, UnitOutput
from annotator.services.units import unit_spans
from corpus import protocols
from studies.setup import CampaignSpec, campaign_create
from tests import factories as f

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _study(judges):
    data = f.dataset("Pairwise browser data", input_headers=["Article"], output_header="Summary")
    for k in range(3):
        for system in ("north", "south"):
            f.item(data, f"doc{k}", f"The {system} summary of article {k}: <b>bold</b> claims.", system=system,
                   inputs={"Article": f"Article {k} <img src=x onerror=alert(1)> says little."})
    return campaign_create(CampaignSpec(name="Pairwise in the browser", dataset=data, aspects=["overall"],
                                        annotators=judges, annotators_per_item=2, seed=8,
                                        protocol=protocols.PAIRWISE))


def _idle(page) -> None:
    page.wait_for_function("() => document.getElementById('work')"
                           " && document.getElementById('work').dataset.busy === 'false'")


def test_a_pairwise_study_by_keyboard(page, live_server, login, make_user, tmp_path):
    judges = [make_user("pw-1"), make_user("pw-2")]
    campaign = _study(judges)
    page.set_default_timeout(15_000)
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    keys = {"pw-1": ["1", "2", "t"], "pw-2": ["2", "t", "1"]}
    for judge in judges:
        units = list(ComparisonUnit.objects.filter(campaign=campaign, annotator=judge).order_by("number"))
        assert len(units) == 3
        first = UnitOutput.objects.get(unit=units[0], position=1).assignment
        login(judge.username)
        page.goto(f"{live_server.url}/work/{first.pk}/")
        for n, (unit, key) in enumerate(zip(units, keys[judge.username], strict=True)):
            page.wait_for_selector(f"#work[data-unit='{unit.pk}']")
            assert page.locator(".compare-output").count() == 2
            assert "<b>bold</b>" in page.locator("#output-1 .output-text").inner_text()
            _idle(page)
            page.keyboard.press("f")  # nothing chosen yet: refused, and the page says why
            page.wait_for_selector(".flash.is-shown")
            assert "needs a choice" in page.locator("#flash").inner_text()
            page.keyboard.press("1" if key != "1" else "2")
            _idle(page)
            page.keyboard.press("u")  # the first choice undone ...
            _idle(page)
            assert page.locator("#unit-choice").get_attribute("data-choice") == ""
            page.keyboard.press(key)  # ... and the one meant made
            _idle(page)
            page.keyboard.press("x")
            assert page.locator("#output-2").get_attribute("class").endswith("is-focused")
            if n < 2:  # a span on the output in focus, by keys: s, Shift+arrows over "summary", m
                page.keyboard.press("s")
                for _ in range(len("The north ") if "north" in page.locator("#pair-text-2").inner_text()
                               else len("The south ")):
                    page.keyboard.press("ArrowRight")
                for _ in range(len("summary")):
                    page.keyboard.press("Shift+ArrowRight")
                page.keyboard.press("m")
                page.wait_for_selector("#output-2 mark.pair-mark")
                _idle(page)
                assert page.locator("#output-2 mark.pair-mark").inner_text() == "summary"
                assert page.locator("#output-2").get_attribute("class").endswith("is-focused")  # kept on the swap
                if n == 1:  # taken back with u: the span's mark goes
                    page.keyboard.press("u")
                    page.wait_for_function("() => !document.querySelector('#output-2 mark.pair-mark')")
                    _idle(page)
            page.keyboard.press("r")
            page.keyboard.type(f"Reason {n}: fewer <i>errors</i>.", delay=15)
            page.keyboard.press("Escape")
            _idle(page)
            page.keyboard.press("f")
            if n + 1 < len(units):
                page.wait_for_url(re.compile(rf"unit={units[n + 1].pk}$"))
            else:
                page.wait_for_url(re.compile(rf"/campaigns/{campaign.pk}/"))
        page.context.clear_cookies()
    assert not dialogs  # no script of the texts ran
    expected = {"1": 1, "2": 2, "t": 0}
    for judge in judges:
        units = ComparisonUnit.objects.filter(campaign=campaign, annotator=judge).order_by("number")
        assert [u.choice for u in units] == [expected[k] for k in keys[judge.username]]
        assert [u.reason for u in units] == [f"Reason {n}: fewer <i>errors</i>." for n in range(3)]
        assert all(u.finished_at and u.first_ms is not None for u in units)
    assert not Assignment.objects.filter(campaign=campaign).exclude(status=Assignment.Status.DONE).exists()
    for judge in judges:
        units = list(ComparisonUnit.objects.filter(campaign=campaign, annotator=judge).order_by("number"))
        marked = [list(unit_spans(u).values()) for u in units]
        assert [[[s.text for s in spans] for spans in screen] for screen in marked] == [
            [[], ["summary"]], [[], []], [[], []]]  # the first screen's mark kept, the second's undone
    first_place = Counter(o.assignment.item.system for o in UnitOutput.objects.filter(
        unit__campaign=campaign, position=1).select_related("assignment__item"))
    assert abs(first_place["north"] - first_place["south"]) <= 1

    if shutil.which("pdflatex") is None:
        pytest.skip("the report's LaTeX needs Debian's pdflatex (texlive-latex-recommended)")
    report = tmp_path / "report"
    call_command("export_report", "--campaign", str(campaign.pk), "--format", "latex", "-o", str(report),
                 stdout=io.StringIO())
    assert r"\input{tables/pairwise_pairs}" in (report / "report.tex").read_text()
    done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "report.tex"], cwd=report,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:]
