"""The report says what really happened: the quality checks and who they flagged, whether the figures count
the flagged annotators (the campaign's setting or one request's choice), and a design counted from the data."""

from __future__ import annotations

import html
import io
import re
import zipfile

import pytest
from django.core.management import CommandError, call_command
from ninja.testing import TestClient

from analytics.report.build import report_files
from annotator.models import Assignment
from config.api import api
from quality.models import CheckSpan, PlantedOutput
from quality.selectors.vigilance import campaign_checks
from tests.analytics.composite_study import build_composite

pytestmark = pytest.mark.django_db
STAMPER = "p-91bc"


@pytest.fixture
def composite(make_user):
    return build_composite(make_user)


def _get(path: str, user, **params):
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return TestClient(api).get(f"{path}?{query}" if query else path, user=user)


def _pooled_judged(body: dict) -> int:
    accuracy = next(t for t in body["tables"] if t["key"] == "accuracy")
    return next(r for r in accuracy["rows"] if r["run"] == "All evaluators")["judged"]


# ---- exclude_flagged -------------------------------------------------------------------------------------------


def test_exclude_flagged_absent_follows_the_campaign_and_1_or_0_decide(composite, researcher):
    pk = composite.campaign.pk
    stamped = Assignment.objects.filter(campaign=composite.campaign, annotator=composite.stamper, is_training=False,
                                        item__derived_from__isnull=True).count()
    path = f"/analytics/campaigns/{pk}"
    counted = _get(path, researcher, exclude_flagged=0).json()
    left_out = _get(path, researcher, exclude_flagged=1).json()
    assert (counted["exclude_flagged"], counted["excluded"]) == (False, [])
    assert (left_out["exclude_flagged"], left_out["excluded"]) == (True, [STAMPER])
    # two runs with one machine span per output: the stamper's outputs lose two judged spans each
    assert _pooled_judged(counted) - _pooled_judged(left_out) == 2 * stamped
    assert _pooled_judged(_get(path, researcher).json()) == _pooled_judged(counted)  # the campaign keeps them
    composite.campaign.exclude_flagged = True
    composite.campaign.save(update_fields=["exclude_flagged"])
    now = _get(path, researcher).json()  # the same data, another setting: not the cached answer
    assert now["exclude_flagged"] is True and _pooled_judged(now) == _pooled_judged(left_out)
    assert _pooled_judged(_get(path, researcher, exclude_flagged=0).json()) == _pooled_judged(counted)

    ranking = {x: _get(f"{path}/ranking", researcher, by="span", exclude_flagged=x).json() for x in (0, 1)}
    assert ranking[1]["excluded"] == [STAMPER]
    assert sum(e["n"] for e in ranking[0]["evaluators"]) - sum(e["n"] for e in ranking[1]["evaluators"]) == 2 * stamped
    priming = {x: _get(f"{path}/priming", researcher, exclude_flagged=x).json() for x in (0, 1)}
    unprimed_by_stamper = Assignment.objects.filter(campaign=composite.campaign, annotator=composite.stamper,
                                                    in_control_arm=True).count()
    assert priming[0][0]["recall"]["n"] - priming[1][0]["recall"]["n"] == unprimed_by_stamper
    cards = {x: _get(f"{path}/labeled/card", researcher, exclude_flagged=x).json() for x in (0, 1)}
    assert cards[1]["quality_control"]["excluded"] == [STAMPER] and cards[0]["quality_control"]["excluded"] == []
    assert STAMPER not in cards[1]["judges"] or cards[1]["counts"] != cards[0]["counts"]


@pytest.mark.parametrize("value", ["yes", "2", "true", "-1"])
def test_a_bad_exclude_flagged_is_refused_naming_the_parameter_everywhere(composite, researcher, client, value):
    pk = composite.campaign.pk
    dataset = composite.campaign.dataset_id
    for path in (f"/analytics/campaigns/{pk}", f"/analytics/campaigns/{pk}/tables/accuracy",
                 f"/analytics/campaigns/{pk}/ranking", f"/analytics/campaigns/{pk}/priming",
                 f"/analytics/campaigns/{pk}/estimates", f"/analytics/campaigns/{pk}/labeled",
                 f"/analytics/campaigns/{pk}/labeled/card", f"/analytics/campaigns/{pk}/report.zip",
                 f"/analytics/datasets/{dataset}?campaign={pk}&"):
        sep = "" if path.endswith("&") else "?"
        answer = TestClient(api).get(f"{path}{sep}exclude_flagged={value}", user=researcher)
        assert answer.status_code == 422, (path, answer.status_code)
        assert answer.json()["detail"].startswith("exclude_flagged:"), path
    client.force_login(researcher)
    for page in (f"/analytics/campaigns/{pk}/", f"/analytics/campaigns/{pk}/report-markdown.zip",
                 f"/analytics/campaigns/{pk}/tables/accuracy.json", f"/analytics/campaigns/{pk}/labeled.card.json"):
        answer = client.get(page, {"exclude_flagged": value})
        assert answer.status_code in (400, 422) and b"exclude_flagged" in answer.content, page


def test_export_report_flags_choose_and_the_report_says_which(composite, tmp_path):
    pk = str(composite.campaign.pk)
    said = {}
    for flag in ("--exclude-flagged", "--include-flagged", None):
        out = tmp_path / str(flag)
        call_command("export_report", "--campaign", pk, "--format", "markdown", "-o", str(out),
                     *([flag] if flag else []), stdout=io.StringIO())
        said[flag] = (out / "report.md").read_text()
    assert f"Flagged annotators are left out of every figure: {STAMPER} (chosen for these figures)" in \
        said["--exclude-flagged"]
    assert f"Flagged annotators are counted in every figure: {STAMPER} (chosen for these figures)" in \
        said["--include-flagged"]
    assert f"Flagged annotators are counted in every figure: {STAMPER} (the campaign's setting)" in said[None]
    with pytest.raises(CommandError):
        call_command("export_report", "--campaign", pk, "--format", "markdown", "-o", str(tmp_path / "x"),
                     "--exclude-flagged", "--include-flagged", stderr=io.StringIO())


# ---- the quality section ---------------------------------------------------------------------------------------


def test_the_quality_section_in_every_format_has_the_apis_vigilance(composite, researcher):
    vigilance = {r["annotator"]: r for r in _get(f"/campaigns/{composite.campaign.pk}/vigilance", researcher).json()}
    assert vigilance[STAMPER]["flagged"] and not vigilance["careful-expert"]["flagged"]
    for fmt, main in (("latex", "report.tex"), ("markdown", "report.md"), ("html", "report.html")):
        files = report_files(composite.campaign, fmt)
        text = files[main].decode() + "".join(v.decode() for k, v in files.items() if k.startswith("tables/"))
        assert "Quality checks" in text and "Checks in force." in text
        if fmt == "html":
            table = text[text.index('id="table-vigilance"'):]
            rows = re.findall(r"<tr><td>([^<]*)</td>(.*?)</tr>", table[:table.index("</table>")])
        else:
            table = files[f"tables/vigilance.{'tex' if fmt == 'latex' else 'md'}"].decode()
            rows = [(cells[0], " & ".join(cells[1:])) for cells in
                    (re.split(r" & | \| ", line.strip("|\\ ")) for line in table.splitlines()) if len(cells) > 3]
        for name, row in vigilance.items():
            decoys, planted = row["decoys"], row["planted"]
            printed = [str(decoys["rejected"]), str(decoys["shown"]), f"{100 * decoys['ci_low']:.1f}",
                       f"{100 * decoys['ci_high']:.1f}", str(planted["found"]), f"{100 * planted['ci_low']:.1f}",
                       f"{100 * planted['ci_high']:.1f}"]
            cells = " ".join(rest for first, rest in rows if first.strip() == name)  # a split table's parts too
            for figure in printed:
                assert re.search(rf"(^|[^\d.]){re.escape(figure)}([^\d.]|$)", cells), (fmt, name, figure)
        assert "rubber-stamp rule; decoys missed; planted errors missed" in text
        counted = f"Flagged annotators are counted in every figure: {STAMPER} (the campaign's setting)."
        assert counted in html.unescape(text).replace("\n", " ")


def test_the_overview_page_has_the_quality_section_and_the_choice(composite, researcher, client):
    client.force_login(researcher)
    pk = composite.campaign.pk
    page = client.get(f"/analytics/campaigns/{pk}/?resamples=20").content.decode()
    section = page[page.index('id="overview-quality"'):]
    section = section[:section.index("</section>")]
    assert "Decoys: " in section and "Rubber-stamp rule" in section
    assert f"Flagged annotators are counted in every figure: {STAMPER} (the campaign&#x27;s setting)." in section
    assert "rubber-stamp rule; decoys missed; planted errors missed" in section and "<td>counted</td>" in section
    assert 'name="exclude_flagged"' in page and "exclude_flagged=1" in section
    left_out = client.get(f"/analytics/campaigns/{pk}/?resamples=20&exclude_flagged=1").content.decode()
    assert "<td>left out</td>" in left_out and "(chosen for these figures)" in left_out
    assert "report-latex.zip?exclude_flagged=1" in left_out
    archive = zipfile.ZipFile(io.BytesIO(client.get(f"/analytics/campaigns/{pk}/report-markdown.zip",
                                                    {"exclude_flagged": "1"}).content))
    report = archive.read(f"campaign-{pk}-report/report.md").decode()
    assert f"left out of every figure: {STAMPER}" in report


# ---- the design paragraph ----------------------------------------------------------------------------------


def test_the_design_is_counted_from_the_data_not_quoted_from_settings(study, tmp_path):
    """The tiny study (tests/analytics/conftest.py): i1 and i2 went to both annotators, i3 to ann1 only, all
    finished; the campaign's setting says 2 judges per item."""
    assert study.campaign.annotators_per_item == 2
    text = report_files(study.campaign, "markdown")["report.md"].decode()
    design = next(line for line in text.splitlines() if line.startswith("Sample design:"))
    assert "3 outputs went to the judges: 2 outputs had 2 judges and 1 output had 1 judge" in design
    assert "Each item was assigned" not in text and "assigned to 2" not in design
    assert "All 5 finished judgments saw the machine's spans from the start" in design
    assert "The judges were 2 registered annotators." in design and "No decoy or planted output" in design


def test_the_design_counts_arms_participants_platforms_and_checks(composite):
    campaign = composite.campaign
    finished = Assignment.objects.filter(campaign=campaign, status="done", is_training=False, is_control=False,
                                         item__derived_from__isnull=True)
    unprimed = finished.filter(in_control_arm=True).count()
    checks = campaign_checks(campaign)
    decoys_shown = sum(r.figures.decoys.n for r in checks)
    planted_shown = sum(r.figures.planted.n for r in checks)
    text = report_files(campaign, "markdown")["report.md"].decode()
    design = next(line for line in text.splitlines() if line.startswith("Sample design:"))
    assert unprimed and decoys_shown and planted_shown
    assert f"{finished.count() - unprimed} saw the machine's spans from the start (primed) and {unprimed} first " \
           "marked errors without them" in design
    assert ("The judges were 1 registered annotator and 2 participants who joined by the study link (1 from "
            "Prolific and 1 from the link alone).") in design
    made = CheckSpan.objects.filter(campaign=campaign, role="decoy").count()
    assert f"{made} decoys made, shown {decoys_shown} times" in design
    assert f"{PlantedOutput.objects.filter(campaign=campaign).count()} planted outputs made, {planted_shown} of " \
           "them finished" in design
    assert not re.search(r"control arm of \d|0\.3|0\.5|per item", design)  # no setting quoted
    left_out = report_files(campaign, "markdown", exclude_flagged=True)["report.md"].decode()
    assert "1 flagged annotator left out" in left_out and "The judges were 1 registered annotator and 1 " \
        "participant who joined by the study link (1 from Prolific)." in left_out
