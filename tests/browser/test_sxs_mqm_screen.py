"""A side-by-side MQM study in the browser, by keyboard: on each screen the judge marks the output in focus (s,
Shift+arrows, Enter, a category's digits, a severity key), presses x to switch to the other output, which now shows
the first one's marks beside it, marks an omission there in the source (o), and finishes both with f. Then the
screens count as finished, the campaign's side-by-side figures prefer the output with fewer errors, and its report
compiles with the side-by-side section."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess

import pytest
from django.core.management import call_command

from annotator.models import Assignment, ComparisonUnit, UnitOutput
from corpus import protocols
from corpus.models import ErrorSpan
from studies.setup import CampaignSpec, campaign_create
from tests import factories as f

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _idle(page) -> None:
    page.wait_for_function("() => document.getElementById('work').dataset.busy === 'false'")


def _errors(page, n: int) -> None:
    page.wait_for_function(f"() => document.querySelectorAll('#mqm-errors li.mqm-error').length === {n}")


def test_a_sxs_mqm_study_by_keyboard(page, live_server, login, make_user, tmp_path):
    judge = make_user("sxs-kbd")
    data = f.dataset("SxS browser data", input_headers=["Source"], output_header="Translation")
    for k in range(2):
        for system in ("amber", "cobalt"):
            f.item(data, f"s{k}", f"Translation {k} by {system} <b>here</b>.", system=system,
                   inputs={"Source": f"Quelle {k} sagt etwas."})
    campaign = campaign_create(CampaignSpec(name="SxS by keyboard", dataset=data, aspects=[], annotators=[judge],
                                            annotators_per_item=1, protocol=protocols.SXS_MQM, seed=3))
    page.set_default_timeout(15_000)
    login(judge.username)
    units = list(ComparisonUnit.objects.filter(campaign=campaign).order_by("number"))
    pairs = [tuple(o.assignment for o in UnitOutput.objects.filter(unit=u).order_by("position")) for u in units]
    page.goto(f"{live_server.url}/work/{pairs[0][0].pk}/")
    for n, (unit, (first, second)) in enumerate(zip(units, pairs, strict=True)):
        page.wait_for_url(re.compile(rf"/work/{first.pk}/$"))
        assert page.locator("#beside-2").count() == 1
        _idle(page)
        page.keyboard.press("s")
        for _ in range(11):
            page.keyboard.press("Shift+ArrowRight")
        page.keyboard.press("Enter")
        page.keyboard.press("1")
        page.keyboard.press("1")
        page.keyboard.press("e")  # Accuracy/Mistranslation, Major, on the first output
        _errors(page, 1)
        page.keyboard.press("f")  # the next item in the queue is the screen's other output
        page.wait_for_url(re.compile(rf"/work/{second.pk}/$"))
        beside = page.locator("#beside-1").inner_text()
        assert "1 error marked" in beside and "finished" in beside
        _idle(page)
        page.keyboard.press("x")  # the first output in focus again (finished: read as it was) ...
        page.wait_for_url(re.compile(rf"/work/{first.pk}/\?unit={unit.pk}$"))
        _idle(page)
        page.keyboard.press("x")  # ... and back
        page.wait_for_url(re.compile(rf"/work/{second.pk}/\?unit={unit.pk}$"))
        _idle(page)
        page.keyboard.press("o")  # an omission, marked in the source
        page.keyboard.press("Alt+ArrowRight")
        page.keyboard.press("Shift+Alt+ArrowRight")
        page.keyboard.press("Enter")
        page.keyboard.press("1")
        page.keyboard.press("2")
        page.keyboard.press("w")
        _errors(page, 1)
        page.keyboard.press("f")
        if n + 1 == len(units):
            page.wait_for_url(re.compile(r"/campaigns/"))
    assert not Assignment.objects.filter(campaign=campaign).exclude(status=Assignment.Status.DONE).exists()
    in_source = ErrorSpan.objects.filter(annotation__source__added__campaign=campaign, source_start__isnull=False)
    assert in_source.count() == 2
    out = io.StringIO()
    call_command("pairwise_scores", "--campaign", str(campaign.pk), "--resamples", "20", stdout=out)
    result = json.loads(out.getvalue())
    # the first output of each screen had a Major (5), the second a Minor (1): the second side won every screen
    assert result["position_bias"]["first_wins"] == 0 and result["position_bias"]["decided_units"] == 2

    if shutil.which("pdflatex") is None:
        pytest.skip("the report's LaTeX needs Debian's pdflatex (texlive-latex-recommended)")
    report = tmp_path / "report"
    call_command("export_report", "--campaign", str(campaign.pk), "--format", "latex", "-o", str(report),
                 stdout=io.StringIO())
    main = (report / "report.tex").read_text()
    assert r"\input{tables/pairwise_pairs}" in main and r"\input{tables/mqm_scores}" in main
    done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "report.tex"], cwd=report,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:]
