"""The LaTeX report compiles to a publishable PDF: every table inside the text block at the text's own size
(wide ones split by column groups, nothing shrunk), figures with their section, no page holding a lone small
table, a sane page count; and the page rounds the priming figures as the report does."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from django.core.management import call_command

from analytics.report.render import TEXT_WIDTH_PT, column_parts, text_pt
from analytics.selectors.priming import priming_report
from analytics.tables import priming_tables
from tests.analytics.composite_study import build_composite

pytestmark = pytest.mark.django_db
POPPLER = ("pdflatex", "pdftoppm", "pdfinfo", "pdftotext")
needs_poppler = pytest.mark.skipif(any(shutil.which(t) is None for t in POPPLER),
                                   reason="needs pdflatex (texlive-latex-recommended) and poppler-utils")
A4_PT = (595.28, 841.89)
MARGIN_PT = 2 / 2.54 * 72  # geometry's 2 cm


@pytest.fixture
def composite(make_user):
    return build_composite(make_user)


def _compile(folder: Path) -> Path:
    for _ in range(2):  # a second run settles the references, as a person would
        done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "report.tex"], cwd=folder,
                              capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, done.stdout[-3000:]
    return folder / "report.pdf"


def _ink_columns(png: Path) -> tuple[int, int, int]:
    """(leftmost inked column, rightmost inked column, image width) of a rendered page."""
    from PIL import Image

    image = Image.open(png).convert("L").point(lambda v: 255 if v < 200 else 0)
    box = image.getbbox()
    assert box is not None, png
    return box[0], box[2], image.width


@needs_poppler
def test_the_latex_report_is_a_publishable_pdf(composite, tmp_path):
    call_command("export_report", "--campaign", str(composite.campaign.pk), "--format", "latex", "-o",
                 str(tmp_path), stdout=io.StringIO())
    sources = "".join(p.read_text() for p in tmp_path.rglob("*.tex"))
    assert r"\resizebox" not in sources and r"\scalebox" not in sources and r"\clearpage" not in sources
    assert r"\begin{table}[htbp]" not in sources and r"\begin{figure}[H]" in sources
    overview = (tmp_path / "tables" / "overview.tex").read_text()
    priming = (tmp_path / "tables" / "priming.tex").read_text()
    assert "(part 1 of 2)" in overview and "(part 2 of 2)" in overview  # 13 columns: two readable parts
    assert "(part 1 of " in priming  # 17 columns

    pdf = _compile(tmp_path)
    log = (tmp_path / "report.log").read_text(errors="replace")
    assert "Overfull \\hbox" not in log  # nothing sticks out of the text block
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    pages = int(re.search(r"Pages:\s+(\d+)", info).group(1))
    width, height = (float(v) for v in re.search(r"Page size:\s+([\d.]+) x ([\d.]+)", info).groups())
    assert (round(width), round(height)) == (round(A4_PT[0]), round(A4_PT[1]))
    assert 3 <= pages <= 10, pages  # 10 outputs, two evaluators, every section: a handful of pages

    # every page rendered: no ink in the side margins (a wide table or its rules would put some there)
    subprocess.run(["pdftoppm", "-r", "60", "-png", str(pdf), str(tmp_path / "page")], check=True)
    rendered = sorted(tmp_path.glob("page-*.png"))
    assert len(rendered) == pages
    for png in rendered:
        left, right, image_width = _ink_columns(png)
        scale = image_width / width
        assert left >= (MARGIN_PT - 2) * scale and right <= (width - MARGIN_PT + 2) * scale, (png.name, left, right)

    texts = [subprocess.run(["pdftotext", "-layout", "-f", str(n), "-l", str(n), str(pdf), "-"],
                            capture_output=True, text=True, check=True).stdout for n in range(1, pages + 1)]
    for n, text in enumerate(texts, start=1):
        lines = [line for line in text.splitlines() if line.strip()]
        # a page is never a lone caption, header and one row: it holds text or several tables
        assert len(lines) >= 12 or n == pages and len(lines) >= 6, (n, lines)
    whole = "\n".join(texts)
    # each figure sits in its section: after the section's heading, before the next one
    assert whole.index("Overview") < whole.index("Figure 1:") < whole.index("Accuracy per evaluator (Table 4)\n")
    assert whole.index("Explanation verdicts\n") < whole.index("Figure 2:") < whole.index("Agreement between")


def test_wide_tables_are_split_by_column_groups_within_the_text_width(composite):
    rows = priming_report(composite.campaign)
    shares, _ = priming_tables(rows, {"composite-alpha", "composite-beta"})
    parts = column_parts(shares)
    assert len(parts) >= 2 and all(part[0] == 0 for part in parts)  # each part repeats the evaluator
    assert sorted(i for part in parts for i in part[1:]) == list(range(1, len(shares.columns)))
    for part in parts:
        groups = [shares.columns[i].group for i in part[1:]]
        assert all(groups.count(g) == 4 for g in groups)  # a share, its interval and its n stay together
    cells = shares.display_cells()
    for part in parts:
        natural = sum(max(text_pt(shares.columns[i].label.split()[0]), *(text_pt(r[i].text) for r in cells)) + 8
                      for i in part)
        assert natural < TEXT_WIDTH_PT


def _page_priming_rows(page: str) -> list[list[str]]:
    section = page[page.index('id="table-priming"'):]
    section = section[:section.index("</section>")]
    rows = []
    for body in re.findall(r"<tbody>(.*?)</tbody>", section, re.S):
        for row in re.findall(r"<tr>(.*?)</tr>", body, re.S):
            cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
            rows.append([re.sub(r"<sup[^>]*>†</sup>", "†", re.sub(r"</?strong>", "", c)) for c in cells])
    return rows


def test_the_page_and_the_report_print_the_priming_figures_alike(composite, researcher, client, tmp_path):
    client.force_login(researcher)
    page = client.get(f"/analytics/campaigns/{composite.campaign.pk}/?resamples=20").content.decode()
    on_page = _page_priming_rows(page)
    call_command("export_report", "--campaign", str(composite.campaign.pk), "--format", "markdown", "-o",
                 str(tmp_path), stdout=io.StringIO())
    in_report = []
    for name in ("priming.md", "priming_errors.md"):
        for line in (tmp_path / "tables" / name).read_text().splitlines()[4:]:
            if line.startswith("| "):
                in_report.append([c.strip().replace("\\-", "-") for c in line.strip("| ").split(" | ")])
    assert on_page == in_report and len(on_page) == 4
    assert any("†" in cell for row in on_page for cell in row)  # the same daggers, not only the same digits
