"""One CSV writer for every spreadsheet-bound CSV: the source holds no other csv.writer, the writer neutralises
every formula start, and every CSV command, page and API download found at run time, fed names that begin
as formulas, writes no cell a spreadsheet would run."""

from __future__ import annotations

import ast
import csv
import io
import re
import subprocess

import pytest
from django.test import Client

from accounts.services.tokens import token_create
from config.api import api
from corpus.spreadsheet import SheetDictWriter, interchange_writer, sheet_writer
from tests.conftest import REPO
from tests.output_study import FORMULA_STARTS, MARK, build_output_study
from tests.test_json_commands import command_args, commands_with

CSV_WRITERS = {"writer", "DictWriter"}
WRITERS = {"sheet_writer", "SheetWriter", "SheetDictWriter", "interchange_writer"}
ONE_WRITER = "corpus/spreadsheet.py"


def _product_modules() -> list[str]:
    files = subprocess.run(["git", "ls-files", "*.py"], cwd=REPO, capture_output=True, text=True,
                           check=True).stdout.split()
    return [f for f in files if not f.startswith(("tests/", "bench/", "scripts/", "docs/")) and "/migrations/" not in f]


def csv_producers() -> tuple[list[str], list[str]]:
    """(raw, producers): the places that call csv's writers themselves, and the functions that call one of the
    spreadsheet module's writers (module:function, with the writer)."""
    raw, producers = [], []
    for path in _product_modules():
        tree = ast.parse((REPO / path).read_text(encoding="utf-8"))
        imported = {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                    and node.module == "csv" for a in node.names if a.name in CSV_WRITERS}
        for function in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]:
            for call in [n for n in ast.walk(function) if isinstance(n, ast.Call)]:
                name = (call.func.attr if isinstance(call.func, ast.Attribute) else
                        call.func.id if isinstance(call.func, ast.Name) else "")
                direct = (isinstance(call.func, ast.Attribute) and name in CSV_WRITERS
                          and isinstance(call.func.value, ast.Name) and call.func.value.id == "csv")
                if (direct or name in imported) and path != ONE_WRITER:
                    raw.append(f"{path}:{call.lineno}")
                if name in WRITERS and path != ONE_WRITER:
                    producers.append(f"{path}:{function.name} ({name})")
    return raw, sorted(set(producers))


def test_every_csv_goes_through_the_one_writer():
    raw, producers = csv_producers()
    print("CSV producers found:\n" + "\n".join(producers))
    assert not raw, f"csv.writer outside {ONE_WRITER} (use sheet_writer, or interchange_writer): {raw}"
    # the scan finds what it should: the exports, the analytics tables, the commands, the interchange file
    modules = {p.split(":")[0] for p in producers}
    assert {"annotator/services/exporting.py", "analytics/tables.py", "quality/management/commands/vigilance.py",
            "corpus/interop/factgenie.py"} <= modules, producers
    interchange = [p for p in producers if "interchange_writer" in p]
    assert interchange and all(p.startswith("corpus/interop/") for p in interchange), interchange


@pytest.mark.parametrize("start", FORMULA_STARTS)
def test_the_sheet_writers_neutralise_every_formula_start_and_keep_numbers(start):
    out = io.StringIO()
    sheet_writer(out, lineterminator="\n").writerows([[f"{start}HYPERLINK(x)", -3.5, 0, "a\rb"]])
    assert next(csv.reader(io.StringIO(out.getvalue(), newline=""))) == [f"'{start}HYPERLINK(x)", "-3.5", "0", "a\rb"]
    assert out.getvalue().endswith('"a\rb"\n')  # a CR in a cell is quoted even when rows end with LF alone
    out = io.StringIO()
    writer = SheetDictWriter(out, fieldnames=["a", "b"])
    writer.writeheader()
    writer.writerow({"a": f"{start}1+1", "b": -2})
    assert list(csv.reader(io.StringIO(out.getvalue())))[1] == [f"'{start}1+1", "-2"]


def test_the_interchange_writer_keeps_cells_byte_exact():
    """factgenie reads its db.csv back: a cell changed for spreadsheets would change the data it reads."""
    out = io.StringIO()
    interchange_writer(out).writerow(["=SUM(1)", "-x", "\tt"])
    assert out.getvalue() == "=SUM(1),-x,\tt\r\n"


@pytest.mark.parametrize(("text", "written"), [("-0.25", "-0.25"), ("+1", "+1"), ("-1e5", "-1e5"), ("-1+1", "'-1+1"),
                                               ("-", "'-"), ("-١", "'-١")])
def test_numbers_written_as_text_stay_numbers_and_sums_do_not(text, written):
    """A spreadsheet reads "-0.25" as a number, but runs "-1+1" as a formula."""
    out = io.StringIO()
    sheet_writer(out).writerow([text])
    assert next(csv.reader(io.StringIO(out.getvalue(), newline=""))) == [written]


def _runs_formula(cell: str) -> bool:
    """A cell a spreadsheet would run: it begins with a formula start and is not a plain number."""
    if not cell.startswith(FORMULA_STARTS):
        return False
    try:
        float(cell)
    except ValueError:
        return True
    return False


def _check(where: str, text: str, report: dict[str, int], bad: list[str]) -> None:
    cells = [cell for row in csv.reader(io.StringIO(text, newline="")) for cell in row]
    report[where] = sum(MARK in cell for cell in cells)
    bad += [f"{where}: {cell!r}" for cell in cells if _runs_formula(cell)]


@pytest.mark.django_db
def test_every_csv_command_and_download_writes_no_formula(make_user, tmp_path, capfd):
    study = build_output_study(make_user, tmp_path)
    report: dict[str, int] = {}
    bad: list[str] = []
    commands = commands_with("csv")
    assert {"esa_scores", "mqm_scores", "priming", "vigilance", "export_items", "compare_sources"} <= {
        n for n, _ in commands}
    from django.core.management import CommandError, call_command

    from errors import UserError

    capfd.readouterr()
    for name, options in commands:
        for values in study.values():
            args = command_args(options, values, "csv")
            try:
                call_command(name, *args, *(["--no-gamma"] if name == "compare_sources" else []))
            except (CommandError, UserError):
                capfd.readouterr()
                continue
            _check(f"manage.py {name} {args}", capfd.readouterr().out, report, bad)
    researcher = make_user("csv-researcher", role="researcher")
    browser = Client()
    browser.force_login(researcher)
    pages = [f"/analytics/campaigns/{c.pk}/" for c in (study.campaign, study.esa)]
    pages += [f"/analytics/datasets/{d.pk}/" for d in (study.campaign.dataset, study.mqm)]
    pages += [f"/datasets/{study.campaign.dataset_id}/", f"/comparisons/{study.job.pk}/", f"/dhp/runs/{study.dhp.pk}/",
              f"/campaigns/{study.campaign.pk}/"]
    links: set[str] = set()
    for page in pages:
        answer = browser.get(page)
        assert answer.status_code == 200, page
        links |= {href.replace("&amp;", "&") for href in re.findall(r'href="(/[^"#]+)"', answer.content.decode())
                  if ".csv" in href or "format=csv" in href}
    keys = {m.group(1) for link in links if (m := re.search(r"/tables/([\w-]+)\.csv", link))}
    for link in sorted(links):
        answer = browser.get(link)
        body = b"".join(answer.streaming_content) if answer.streaming else answer.content
        if answer.status_code == 200:
            _check(f"GET {link}", body.decode("utf-8"), report, bad)
    api_client = Client(HTTP_AUTHORIZATION=f"Bearer {token_create(user=researcher)}")
    ids = {"campaign_id": [study.campaign.pk, study.esa.pk], "dataset_id": [study.campaign.dataset_id, study.mqm.pk],
           "key": sorted(keys)}
    for path, ops in api.get_openapi_schema()["paths"].items():
        if "text/csv" not in str(ops.get("get", {}).get("responses", {})):
            continue
        urls = [path]
        for name in re.findall(r"{(\w+)}", path):
            urls = [u.replace(f"{{{name}}}", str(v)) for u in urls for v in ids[name]]
        for url in urls:
            answer = api_client.get(url, {"format": "csv", "reference": "gold:gold"})
            body = b"".join(answer.streaming_content) if answer.streaming else answer.content
            if answer.status_code == 200 and answer["Content-Type"].startswith("text/csv"):
                _check(f"GET {url}", body.decode("utf-8"), report, bad)
    print("CSV outputs read (cells holding an injected name):\n" + "\n".join(f"{n:3d}  {w}" for w, n in
                                                                              sorted(report.items())))
    assert not bad, "\n".join(bad)
    assert sum(1 for n in report.values() if n) >= 8, report  # the injected names reached many of them
    assert any(w.startswith("GET /api/") for w in report) and any("tables/" in w for w in report), report
