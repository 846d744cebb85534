"""A simulated source is marked everywhere it appears: every file of the three report zips (tables, main files,
figures), the analytics page's tables and charts, the API rows and the data cards."""

from __future__ import annotations

import base64
import io
import json
import re
import shutil
import subprocess
import zipfile

import pytest
from ninja.testing import TestClient

from analytics.exports.card import data_card
from analytics.exports.labeled import labeled_jsonl
from annotator.services.exporting import ExportFilter
from config.api import api
from tests.analytics.composite_study import SIMULATED_LABELS, build_composite

pytestmark = pytest.mark.django_db
MARK = " (simulated)"


@pytest.fixture
def composite(make_user):
    return build_composite(make_user)


def _unmarked(text: str) -> list[str]:
    """Every place a simulated run's label appears without the mark right after it (with some context)."""
    misses = []
    for label in SIMULATED_LABELS:
        for found in re.finditer(re.escape(label), text):
            if not text.startswith(MARK, found.end()):
                misses.append(text[max(0, found.start() - 40):found.end() + 40])
    return misses


def _svg_texts(html: str) -> list[str]:
    """The SVG charts a page embeds as data: URIs, decoded (matplotlib writes each label as a comment)."""
    return [base64.b64decode(uri).decode() for uri in re.findall(r"data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)",
                                                                   html)]


def test_every_file_of_every_report_format_marks_the_simulated_runs(composite, researcher):
    client = TestClient(api)
    checked: dict[str, int] = {}
    pdftotext = shutil.which("pdftotext")
    for fmt in ("latex", "markdown", "html"):
        answer = client.get(f"/analytics/campaigns/{composite.campaign.pk}/report.zip?format={fmt}", user=researcher)
        assert answer.status_code == 200
        archive = zipfile.ZipFile(io.BytesIO(answer.content))
        for name in archive.namelist():
            data = archive.read(name)
            if name.endswith(".pdf"):
                if pdftotext is None:
                    continue
                # what a reader can copy out of the figure (rotated tick labels come out in pieces)
                text = subprocess.run([pdftotext, "-", "-"], input=data, capture_output=True, check=True).stdout
                texts = [text.decode()]
            else:
                texts = [data.decode()]
                if name.endswith(".html"):
                    texts += _svg_texts(texts[0])
            for text in texts:
                assert not _unmarked(text), (name, _unmarked(text)[:3])
            checked[f"{fmt}:{name}"] = sum(text.count(MARK) for text in texts)
        main = {"latex": "report.tex", "markdown": "report.md", "html": "report.html"}[fmt]
        head = archive.read(f"campaign-{composite.campaign.pk}-report/{main}").decode()[:1500]
        assert "SIMULATED: composite-alpha (simulated), composite-beta (simulated) were answered by the simulated " \
               "server, not by a model." in head.replace("\n", " ")
    # every file was read (PDFs where poppler is installed); the ones that name the runs carry the mark
    assert len(checked) >= 40
    for name, marks in checked.items():
        if re.search(r"/(report\.(tex|md|html)|tables/(overview|accuracy|ranking_accuracy_span|priming)\.(tex|md)|"
                     r"figures/\w+\.svg)$", name):
            assert marks, name


def test_the_page_marks_table_rows_and_chart_labels(composite, researcher, client):
    client.force_login(researcher)
    page = client.get(f"/analytics/campaigns/{composite.campaign.pk}/?resamples=20").content.decode()
    cells = re.findall(r"<td>([^<]*)", page)
    named = [c for c in cells if any(label in c for label in SIMULATED_LABELS)]
    assert len(named) > 20 and all(c.endswith(MARK) for c in named)
    charts = _svg_texts(page)
    assert charts and all(not _unmarked(svg) for svg in charts)
    assert sum(svg.count(MARK) for svg in charts) >= 4


def _rows_naming_a_run(value) -> list[dict]:
    found = []
    if isinstance(value, dict):
        if any(v in SIMULATED_LABELS for v in value.values() if isinstance(v, str)):
            found.append(value)
        for v in value.values():
            found += _rows_naming_a_run(v)
    elif isinstance(value, list):
        for v in value:
            found += _rows_naming_a_run(v)
    return found


def test_every_api_row_naming_a_simulated_run_says_so(composite, researcher):
    client = TestClient(api)
    pk = composite.campaign.pk
    answers = {
        "dashboard": client.get(f"/analytics/campaigns/{pk}?resamples=20", user=researcher).json(),
        "table": client.get(f"/analytics/campaigns/{pk}/tables/overview?resamples=20", user=researcher).json(),
        "ranking": client.get(f"/analytics/campaigns/{pk}/ranking?by=span", user=researcher).json(),
        "priming": client.get(f"/analytics/campaigns/{pk}/priming", user=researcher).json(),
    }
    for where, body in answers.items():
        rows = _rows_naming_a_run(body)
        assert rows, where
        assert all(row.get("simulated") is True for row in rows), (where, rows[:2])
        # the API keeps the bare label: the flag says it, not the name
        assert not any(MARK in json.dumps(row) for row in rows)

    card = client.get(f"/analytics/campaigns/{pk}/labeled/card", user=researcher).json()
    assert card["simulated"] is True and card["campaign"]["simulated_runs"] == list(SIMULATED_LABELS)
    assert not _unmarked(card["warning"]) and card["warning"].startswith("SIMULATED:")
    assert all(row["simulated"] is True for row in card["control_arm"]["estimates"])
    assert not _unmarked(card["control_arm"]["reading"])
    records = [json.loads(line) for line in labeled_jsonl(composite.campaign)]
    assert records and all(r["simulated"] is True for r in records)
    export_card = data_card(composite.campaign.dataset, ExportFilter(campaign_id=pk), fmt="jsonl")
    assert {r["label"]: r["simulated"] for r in export_card["runs"]} == dict.fromkeys(SIMULATED_LABELS, True)
    assert not _unmarked(export_card["campaigns"][0]["control_arm"]["reading"])
