"""compare_sources: any source against any other, named references, errors for unknown ones."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from analytics.compare.sources import available_sources


def _compare(**options) -> str:
    out = io.StringIO()
    call_command("compare_sources", dataset=options.pop("dataset", "tiny-study"), stdout=out, **options)
    return out.getvalue()


def _external(tmp_path, study) -> None:
    """An imported LLM source that repeats gold's spans on i1 and finds nothing on i2."""
    path = tmp_path / "llm.jsonl"
    i1 = study.items["i1"].output
    path.write_text(
        json.dumps({"item_id": "i1", "system": "sysA", "model": "m",
                    "spans": [{"start": 0, "text": i1[0:9]}, {"start": 10, "text": i1[10:18]}]}) + "\n"
        + json.dumps({"item_id": "i2", "system": "sysA", "model": "m", "spans": []}) + "\n"
    )
    call_command("import_annotations", str(path), dataset="tiny-study", source="llm", stdout=io.StringIO())


def test_compare_sources_run_against_gold_by_hand(study):
    rows = json.loads(_compare(reference="gold:gold", sources="run:ens-run", no_gamma=True))
    assert len(rows) == 1
    row = rows[0]
    assert (row["source"], row["reference"], row["outputs"]) == ("run:ens-run", "gold:gold", 3)
    # ens-run: i1 (0,9) (10,20); i2 (5,10) + one unlocated; i3 (0,4). gold: i1 (0,9) (10,18) (25,28); i2 (5,10)
    assert row["span_exact"] == {"p": 2 / 5, "r": 2 / 4, "f1": 4 / 9}
    assert row["span_overlap"] == {"p": 3 / 5, "r": 3 / 4, "f1": 6 / 9}
    assert row["gamma"] is None  # not asked for
    assert set(row) >= {"char", "char_factgenie", "pearson_counts"}


def test_compare_sources_imported_source_with_bare_name_and_every_other_source(study, tmp_path):
    _external(tmp_path, study)
    rows = {r["source"]: r for r in json.loads(_compare(reference="gold", no_gamma=True))}
    assert "external:llm" in rows and "run:ens-run" in rows and f"human:{study.campaign.pk}" in rows
    llm = rows["external:llm"]
    assert llm["outputs"] == 2 and llm["span_exact"] == {"p": 1.0, "r": 2 / 4, "f1": 4 / 6}
    assert "gold:gold" not in rows  # the reference itself
    table = list(csv.DictReader(io.StringIO(_compare(reference="gold:gold", sources="llm", format="csv",
                                                     no_gamma=True))))
    assert table[0]["source"] == "external:llm" and float(table[0]["span_exact_p"]) == 1.0


def test_compare_sources_unknown_reference_is_an_error_naming_the_sources(study):
    with pytest.raises(CommandError) as excinfo:
        _compare(reference="gold:nope")
    assert "no source 'gold:nope'" in str(excinfo.value) and "gold:gold" in str(excinfo.value)
    with pytest.raises(CommandError, match="no dataset named"):
        _compare(dataset="nope", reference="gold")
    names = [s.name for s in available_sources(study.dataset)]
    assert "run:silent-run" in names and f"human-added:{study.campaign.pk}" in names


def test_compare_sources_gamma_with_pygamma(study, tmp_path):
    pytest.importorskip("pygamma_agreement")
    _external(tmp_path, study)
    rows = json.loads(_compare(reference="gold:gold", sources="external:llm", categories=True))
    # two of gold's three spans on these outputs repeated exactly and nothing else: high, below 1
    assert 0.3 < rows[0]["gamma"] < 1.0
    assert rows[0]["mode"] == "categories" and "" in rows[0]["categories"]


def test_overlap_table_lists_imported_sources_and_refuses_unknown_reference(study, tmp_path, client):
    from tests import factories as make

    _external(tmp_path, study)
    client.force_login(make.user("rosa", role="researcher"))
    url = f"/api/analytics/datasets/{study.dataset.pk}/tables/overlap"
    rows = {r["run"]: r for r in client.get(url, {"reference": "gold:gold"}).json()["rows"]}
    assert "llm (imported)" in rows and "ens-run" in rows
    assert (rows["llm (imported)"]["items"], rows["llm (imported)"]["matched_exact"]) == (2, 2)
    # the imported source can be the reference too
    as_reference = client.get(url, {"reference": "external:llm"}).json()["rows"]
    assert {r["run"] for r in as_reference} == {"ens-run", "single-run", "silent-run"}
    refused = client.get(url, {"reference": "gold:nope"})
    assert refused.status_code == 422 and "unknown reference 'gold:nope'" in refused.json()["detail"]
    page = client.get(f"/analytics/datasets/{study.dataset.pk}/", {"reference": "gold:nope"})
    assert page.status_code == 422 and "gold:gold" in page.content.decode()  # the status the API answers
