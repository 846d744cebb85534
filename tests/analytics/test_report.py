"""The ranking API, `export_report` (LaTeX that compiles, Markdown, HTML), the zip download and the empty state."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from analytics.report.render import md_escape, tex_escape
from tests import factories as make
from tests.factories import build_campaign

pytestmark = pytest.mark.django_db


@pytest.fixture
def rita_client(client, researcher):
    client.force_login(researcher)
    return client


def _ranking(client, campaign_id: int, **params) -> dict:
    response = client.get(f"/api/analytics/campaigns/{campaign_id}/ranking", params)
    assert response.status_code == 200, response.content
    return response.json()


# ---- the ranking API ------------------------------------------------------------------------------------


def test_ranking_api_has_exactly_the_contract_fields_and_the_hand_computed_figures(rita_client, study):
    body = _ranking(rita_client, study.campaign.pk, aspect="accuracy", by="span")
    assert set(body) == {"method", "resamples", "alpha", "evaluators", "pairs", "exclude_flagged", "excluded"}
    assert body["exclude_flagged"] is False and body["excluded"] == []
    assert body["resamples"] == 10_000 and body["alpha"] == 0.05 and "randomization" in body["method"]
    assert all(set(e) == {"label", "run_id", "value", "ci_low", "ci_high", "n", "rank", "simulated"}
               for e in body["evaluators"])
    assert all(set(p) == {"a", "b", "difference", "p", "p_holm", "n_outputs", "simulated"} for p in body["pairs"])
    assert not any(e["simulated"] for e in body["evaluators"]) and not any(p["simulated"] for p in body["pairs"])
    ens, single, silent = body["evaluators"]
    # ens-run: 5 of 9 judged spans are Error; single-run: s6 twice Error, s7 twice Not an error (s8 incomplete)
    assert (ens["label"], ens["value"], ens["n"]) == ("ens-run", pytest.approx(500 / 9), 9)
    assert (single["label"], single["value"], single["n"]) == ("single-run", pytest.approx(50.0), 4)
    assert ens["run_id"] == study.runs["ens-run"].pk
    assert silent["value"] is None and silent["rank"] is None and silent["n"] == 0
    # shared outputs i1, i2: ens (3/4, 2/4) = 62.5 %, single (2/2, 0/2) = 50 %; of the four swap patterns
    # (+12.5, +16.7, -16.7, -12.5 points) every one is at least as extreme: p = 1, nothing is separated
    (pair,) = body["pairs"]
    assert (pair["a"], pair["b"], pair["n_outputs"]) == ("ens-run", "single-run", 2)
    assert pair["difference"] == pytest.approx(12.5)
    assert pair["p"] == pytest.approx(1.0) and pair["p_holm"] == pytest.approx(1.0)
    assert ens["rank"] == single["rank"] == "1-2"


def test_ranking_intervals_are_table_4s(rita_client, study):
    body = _ranking(rita_client, study.campaign.pk, aspect="accuracy", by="explanation")
    table = rita_client.get(f"/api/analytics/campaigns/{study.campaign.pk}/tables/accuracy", {"aspect": "accuracy"})
    rows = {r["run"]: r for r in table.json()["rows"]}
    for evaluator in body["evaluators"][:2]:
        row = rows[evaluator["label"]]
        assert evaluator["value"] == pytest.approx(row["exp_correct_pct"])
        assert (evaluator["ci_low"], evaluator["ci_high"]) == (row["exp_correct_low"], row["exp_correct_high"])
    assert body["evaluators"][0]["value"] == pytest.approx(100 / 3)  # ens-run: s1 twice, s3 once Correct of 9


@pytest.mark.parametrize(("params", "field"), [
    ({"aspect": "accuracy", "by": "spans"}, "by"), ({"aspect": "fluency-of-nothing"}, "aspect"),
])
def test_ranking_api_refuses_an_unknown_criterion_or_aspect_naming_the_field(rita_client, study, params, field):
    response = rita_client.get(f"/api/analytics/campaigns/{study.campaign.pk}/ranking", params)
    assert response.status_code == 422
    assert response.json()["detail"].startswith(f"{field}:")


def test_ranking_api_takes_the_only_aspect_and_refuses_annotators(client, study):
    client.force_login(study.ann1)
    assert client.get(f"/api/analytics/campaigns/{study.campaign.pk}/ranking").status_code == 403


# ---- export_report -----------------------------------------------------------------------------------------

NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def _printed(value, kind: str) -> str:
    """The API's value at the report's printed precision, written here independently of analytics.tables."""
    if value is None:
        return "--"
    return {"pct": f"{value:.1f}", "num": f"{value:.3f}", "p": f"{value:.3g}", "int": str(value)}.get(kind, "")


def _tex_rows(path: Path) -> list[list[str]]:
    """The cells of a table file; a table split into parts by column groups is joined back (each part repeats
    the first column)."""
    joined: list[list[str]] = []
    for chunk in path.read_text().split(r"\bottomrule")[:-1]:
        body = chunk.rsplit(r"\midrule", 1)[1].replace(r"\endhead", "")
        rows = [r.strip() for r in body.split(r"\\") if r.strip()]
        part = [[re.sub(r"\\textbf\{([^}]*)\}|\$\^\\dagger\$", r"\1", c).strip() for c in r.split(" & ")]
                for r in rows]
        if not joined:
            joined = part
        else:
            assert [r[0] for r in part] == [r[0] for r in joined]
            joined = [a + b[1:] for a, b in zip(joined, part, strict=True)]
    return joined


def _assert_tex_matches_api(folder: Path, table: dict) -> int:
    """Every numeric cell of the table's .tex file equals the API's value printed at the same precision."""
    rows = _tex_rows(folder / "tables" / f"{table['key']}.tex")
    assert len(rows) == len(table["rows"])
    checked = 0
    for tex_row, api_row in zip(rows, table["rows"], strict=True):
        for cell, column in zip(tex_row, table["columns"], strict=True):
            if column["kind"] != "text":
                assert cell == _printed(api_row[column["key"]], column["kind"]), (table["key"], column["key"])
                checked += 1
    return checked


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="needs Debian's pdflatex (texlive-latex-recommended)")
def test_export_report_latex_compiles_and_every_number_equals_the_api(rita_client, study, tmp_path):
    out = tmp_path / "report"
    call_command("export_report", "--campaign", str(study.campaign.pk), "--format", "latex", "-o", str(out),
                 stdout=io.StringIO())
    main = (out / "report.tex").read_text()
    for name in ("overview", "progress", "accuracy", "matrix", "explanations", "agreement", "pairwise",
                 "ranking_accuracy_span", "ranking_accuracy_span_pairs", "ranking_accuracy_explanation"):
        assert rf"\input{{tables/{name}}}" in main
        assert r"\toprule" in (out / "tables" / f"{name}.tex").read_text()
    for figure in ("accuracy", "explanation_verdicts"):
        assert (out / "figures" / f"{figure}.pdf").read_bytes().startswith(b"%PDF")
        assert b"<svg" in (out / "figures" / f"{figure}.svg").read_bytes()
    assert "tiny-campaign" in main and "Consensus rule" in main and "Sample design" in main

    api = rita_client.get(f"/api/analytics/campaigns/{study.campaign.pk}").json()
    tables = {t["key"]: t for t in api["tables"]}
    checked = sum(_assert_tex_matches_api(out, tables[k]) for k in
                  ("overview", "progress", "accuracy", "matrix", "explanations", "agreement", "pairwise"))
    for by in ("span", "explanation"):
        ranking = _ranking(rita_client, study.campaign.pk, aspect="accuracy", by=by)
        rows = _tex_rows(out / "tables" / f"ranking_accuracy_{by}.tex")
        assert [r[0] for r in rows] == [e["rank"] or "--" for e in ranking["evaluators"]]
        for row, e in zip(rows, ranking["evaluators"], strict=True):
            assert row[1:] == [e["label"].replace("_", r"\_"), _printed(e["value"], "pct"),
                               _printed(e["ci_low"], "pct"), _printed(e["ci_high"], "pct"), str(e["n"])]
            checked += 4
        pairs = _tex_rows(out / "tables" / f"ranking_accuracy_{by}_pairs.tex")
        for row, p in zip(pairs, ranking["pairs"], strict=True):
            assert row[2:] == [_printed(p["difference"], "pct"), _printed(p["p"], "p"), _printed(p["p_holm"], "p"),
                               str(p["n_outputs"])]
    assert checked > 200
    assert "55.6" in (out / "tables" / "accuracy.tex").read_text()  # ens-run Span OK 5/9, by hand

    result = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "report.tex"], cwd=out,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-3000:]
    assert (out / "report.pdf").read_bytes().startswith(b"%PDF")


def test_export_report_marks_few_units_and_never_bolds_them(study, tmp_path):
    call_command("export_report", "--campaign", str(study.campaign.pk), "--format", "latex", "-o", str(tmp_path),
                 stdout=io.StringIO())
    accuracy = (tmp_path / "tables" / "accuracy.tex").read_text()
    # ens-run's 9 and single-run's 4 judged spans are both under 10: marked, neither bolded as the best
    assert r"55.6$^\dagger$" in accuracy and r"50.0$^\dagger$" in accuracy
    assert r"\textbf" not in accuracy
    assert "fewer than 10 units" in accuracy


@pytest.mark.parametrize(("args", "field"), [
    (["--campaign", "999999", "--format", "latex"], "--campaign"),
    (["--campaign", "STUDY", "--format", "docx"], "--format"),
])
def test_export_report_refuses_unknown_campaign_or_format_with_exit_2_and_writes_nothing(study, tmp_path, args,
                                                                                       field):
    out = tmp_path / "never"
    args = [str(study.campaign.pk) if a == "STUDY" else a for a in args]
    with pytest.raises(CommandError) as caught:
        call_command("export_report", *args, "-o", str(out))
    assert caught.value.returncode == 2
    assert str(caught.value).startswith(f"{field}:")
    assert not out.exists()


def test_export_report_markdown_tables_and_self_contained_html(study, tmp_path):
    call_command("export_report", "--campaign", str(study.campaign.pk), "--format", "markdown", "-o",
                 str(tmp_path / "md"), stdout=io.StringIO())
    md = (tmp_path / "md" / "report.md").read_text()
    assert "| Run | Shown as | Evaluator | Aspect | Judged spans |" in md
    assert "| ens-run | Evaluator A |" in md and "![" in md and "figures/accuracy.svg" in md
    assert (tmp_path / "md" / "tables" / "ranking_accuracy_span.md").exists()
    call_command("export_report", "--campaign", str(study.campaign.pk), "--format", "html", "-o",
                 str(tmp_path / "html"), stdout=io.StringIO())
    html = (tmp_path / "html" / "report.html").read_text()
    srcs = re.findall(r'(?:src|href)="([^"]*)"', html)
    assert srcs and all(s.startswith("data:image/svg+xml;base64,") for s in srcs)  # nothing outside the page
    assert "<h2>Evaluators ranked with significance</h2>" in html


def test_report_escapes_a_hostile_run_label(study, tmp_path):
    run = study.runs["ens-run"]
    run.label = "ens_<b>x</b> & 100% {\\evil} $|"
    run.save(update_fields=["label"])
    call_command("export_report", "--campaign", str(study.campaign.pk), "--format", "html", "-o", str(tmp_path),
                 stdout=io.StringIO())
    html = (tmp_path / "report.html").read_text()
    assert "<b>x</b>" not in html and "ens_&lt;b&gt;x&lt;/b&gt; &amp; 100% {\\evil} $|" in html
    assert tex_escape(run.label) == r"ens\_\textless{}b\textgreater{}x\textless{}/b\textgreater{} \& 100\% " \
                                    r"\{\textbackslash{}evil\} \$\textbar{}"
    assert md_escape(run.label) == r"ens\_&lt;b&gt;x&lt;/b&gt; &amp; 100% {\\evil} $\|"


def test_report_zip_download_holds_the_same_files(rita_client, study, tmp_path):
    response = rita_client.get(f"/api/analytics/campaigns/{study.campaign.pk}/report.zip", {"format": "latex"})
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    names = set(zipfile.ZipFile(io.BytesIO(response.content)).namelist())
    root = f"campaign-{study.campaign.pk}-report/"
    assert {root + "report.tex", root + "tables/accuracy.tex", root + "figures/accuracy.pdf"} <= names
    call_command("export_report", "--campaign", str(study.campaign.pk), "--format", "latex", "-o", str(tmp_path),
                 stdout=io.StringIO())
    on_disk = {root + str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file()}
    assert names == on_disk
    bad = rita_client.get(f"/api/analytics/campaigns/{study.campaign.pk}/report.zip", {"format": "docx"})
    assert bad.status_code == 422 and bad.json()["detail"].startswith("format:")


# ---- the empty state -----------------------------------------------------------------------------------------


def test_empty_state_on_the_page_and_in_the_report(rita_client, tmp_path):
    built = build_campaign([make.user("e1"), make.user("e2")], per_item=2, name="Nothing judged yet")
    page = rita_client.get(f"/analytics/campaigns/{built.campaign.pk}/").content.decode()
    # two items, each to both experts: four assignments, none finished
    assert "4 items assigned, 0 judged: figures appear with the first verdicts." in page
    assert "<img" not in page
    call_command("export_report", "--campaign", str(built.campaign.pk), "--format", "markdown", "-o",
                 str(tmp_path), stdout=io.StringIO())
    md = (tmp_path / "report.md").read_text()
    assert "4 items assigned, 0 judged: figures appear with the first verdicts." in md
    assert "Evaluators ranked" not in md and not (tmp_path / "figures").exists()
    body = _ranking(rita_client, built.campaign.pk)
    assert [e["rank"] for e in body["evaluators"]] == [None, None] and body["pairs"] == []


# ---- texts and charts the issue found wrong ------------------------------------------------------------------


def test_overlap_note_names_its_reference_once(study):
    from analytics import tables
    from analytics.selectors import Scope, dashboard_data

    data = dashboard_data(Scope(campaign_id=study.campaign.pk), n_resamples=0)
    note = tables.overlap_table(data).note
    assert note.startswith("Reference: gold spans. ") and "gold gold" not in note
    human = dashboard_data(Scope(campaign_id=study.campaign.pk), reference="human", n_resamples=0)
    assert tables.overlap_table(human).note.startswith("Reference: the spans the campaign's humans added or confirmed.")


def test_chart_legends_sit_outside_the_plotting_area(study):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from analytics import plots
    from analytics.selectors import Scope, dashboard_data

    data = dashboard_data(Scope(campaign_id=study.campaign.pk), n_resamples=50)
    checked = 0
    for name, build in plots.PLOT_BUILDERS.items():
        fig = build(data)
        if fig is None:
            continue
        plots.render(fig)  # lays the figure out
        renderer = FigureCanvasAgg(fig).get_renderer()
        fig.draw(renderer)
        for ax in fig.axes:
            legend = ax.get_legend()
            if legend is None:
                continue
            box, area = legend.get_window_extent(renderer), ax.get_window_extent(renderer)
            assert not box.overlaps(area), name
            checked += 1
    assert checked >= 4  # accuracy, span verdicts, explanation verdicts, flags (overlap: gold on i1, i2)


def test_page_shows_overview_ranking_and_report_download(rita_client, study):
    page = rita_client.get(f"/analytics/campaigns/{study.campaign.pk}/?resamples=50").content.decode()
    overview = page.split('id="overview"')[1].split("</section>")[0]
    assert "Span OK %" in overview and "alpha span" in overview
    assert "Progress: 5 of 5 assigned items judged (100%)" in overview
    ranking = page.split('id="ranking"')[1].split("</section>")[0]
    assert "Evaluators ranked by Span OK % (accuracy)" in ranking and "<td>1-2</td>" in ranking
    # every evaluator's figure rests on fewer than 10 judged spans: marked, and no cell is bolded as the best
    assert '<sup class="few"' in page and 'class="best"' not in page
    assert '<details class="card section" id="table-accuracy" open>' in page
    assert '<details class="card section" id="table-overlap">' in page
    link = f"/analytics/campaigns/{study.campaign.pk}/report-markdown.zip"
    assert link in page
    archive = zipfile.ZipFile(io.BytesIO(rita_client.get(link).content))
    assert f"campaign-{study.campaign.pk}-report/report.md" in archive.namelist()
    assert rita_client.get(f"/analytics/campaigns/{study.campaign.pk}/report-docx.zip").status_code == 404


def test_best_value_is_bolded_only_with_enough_units(study):
    from analytics.tables import Column, Table

    table = Table("t", "T", [Column("run", "Run"), Column("n", "n", "int"),
                             Column("v", "V", "pct", count="n", best=True)])
    table.rows = [{"run": "a", "n": 3, "v": 90.0}, {"run": "b", "n": 12, "v": 60.0}, {"run": "c", "n": 40, "v": 70.0},
                  {"run": "All", "n": 55, "v": 95.0, "pooled": True}]
    cells = [row[2] for row in table.display_cells()]
    assert [(c.text, c.few, c.best) for c in cells] == [
        ("90.0", True, False), ("60.0", False, False), ("70.0", False, True), ("95.0", False, False)]
