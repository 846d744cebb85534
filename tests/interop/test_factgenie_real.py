"""The real factgenie 1.2.1 opens, lists, shows and scores our factgenie exports as they are, and they come back whole.

factgenie runs in its own process (tests/interop/factgenie_driver.py) with its campaign, data and config paths
pointed at a scratch folder. Two datasets with string ids, three sources each.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

from analytics.compare.sources import sources_compare
from corpus.interop import slug
from corpus.models import Dataset
from jobs.kinds import job_execute
from tests.interop.conftest import spans_of

pytest.importorskip("factgenie", reason="factgenie 1.2.1 is a dev requirement (requirements-dev.txt)")
DRIVER = Path(__file__).with_name("factgenie_driver.py")


def _export(interop, dataset: str, **options) -> Path:
    folder = interop.root / "fg" / slug(dataset)
    err = io.StringIO()
    call_command("export_items", dataset=dataset, format="factgenie", output=folder, stderr=err, **options)
    return folder


def _factgenie(home: Path, commands: dict) -> dict:
    spec = home / "commands.json"
    spec.write_text(json.dumps(commands))
    done = subprocess.run([sys.executable, str(DRIVER), str(home), str(spec)], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _printed(output: str) -> dict[str, float]:
    """The figures `factgenie iaa f1` prints ('  Precision: 0.667', '  Hyp Len (Chars): 21', ...)."""
    names = {"Precision": "precision", "Recall": "recall", "F1": "f1", "Ref Len (Chars)": "ref_length",
             "Hyp Len (Chars)": "hyp_length", "Overlap Len (Chars)": "overlap_length"}
    figures = {}
    for line in output.splitlines():
        label, _, value = line.strip().partition(": ")
        if label in names and names[label] not in figures:
            figures[names[label]] = float(value)
    assert len(figures) == len(names), output
    return figures


def test_slug_is_the_slugify_factgenie_applies_on_reading():
    import factgenie.workflows

    from corpus.interop import factgenie as ours

    assert ours.slugify is factgenie.workflows.slugify
    assert slug("Caf\u00e9 d'\u00e9t\u00e9 A\u2013B 1,000") == "cafe-d-ete-a-b-1000"


def test_factgenie_opens_lists_shows_and_scores_our_exports(interop):
    home = interop.root / "factgenie-home"
    campaigns = home / "campaigns"
    campaigns.mkdir(parents=True)
    ids = []
    for dataset in interop.datasets:
        folder = _export(interop, dataset)
        for campaign in sorted(folder.iterdir()):
            shutil.copytree(campaign, campaigns / campaign.name)
            ids.append(campaign.name)
    assert sorted(ids) == sorted(slug(f"{d}-{s}") for d in interop.datasets for s in interop.sources)
    first = interop.datasets[0]
    gold, llm = slug(f"{first}-gold"), slug(f"{first}-llm-a")
    # (factgenie's own --output fails to write its JSON: numpy keys; its printed figures are read instead)
    pairs = {f"f1-{mode}": ["iaa", "f1", "--ref-campaign", gold, "--hyp-campaign", llm, "--match-mode", mode]
             for mode in ("soft", "hard")}
    results = _factgenie(home, {
        "cli": {"list": ["list", "campaigns"], **{f"info-{c}": ["info", "-c", c] for c in ids}, **pairs},
        "pages": ["/analyze", "/manage", *[f"/analyze/detail/{c}" for c in ids]],
    })
    # lists every campaign, shows each (its metadata), and its pages answer
    assert results["list"]["exit"] == 0, results["list"]
    assert set(results["list"]["output"].split()) >= set(ids)
    for campaign in ids:
        shown = results[f"info-{campaign}"]
        assert shown["exit"] == 0 and f"'id': '{campaign}'" in shown["output"], shown
        assert "not found" not in shown["output"]
    assert results["pages"] == {path: 200 for path in results["pages"]}
    # scores: factgenie's own iaa f1 equals our char_factgenie, from the same figures
    dataset = Dataset.objects.get(name=first)
    for mode, by_category in (("soft", False), ("hard", True)):
        assert results[f"f1-{mode}"]["exit"] == 0, results[f"f1-{mode}"]
        theirs = _printed(results[f"f1-{mode}"]["output"])
        (row,) = sources_compare(dataset, reference="external:gold", sources=["external:llm-a"],
                                 by_category=by_category, gamma=False)
        ours = row["char_factgenie"]
        assert theirs["hyp_length"] > 0 and 0 < theirs["overlap_length"] < theirs["hyp_length"]
        assert ours["p"] == theirs["overlap_length"] / theirs["hyp_length"]
        assert ours["r"] == theirs["overlap_length"] / theirs["ref_length"]
        assert (round(ours["p"], 3), round(ours["r"], 3), round(ours["f1"], 3)) == (
            theirs["precision"], theirs["recall"], theirs["f1"])


def test_factgenie_exports_come_back_identical(interop):
    for dataset in interop.datasets:
        folder = _export(interop, dataset)
        for source in interop.sources:
            campaign = folder / slug(f"{dataset}-{source}")
            meta = json.loads((campaign / "metadata.json").read_text())
            assert meta["id"] == campaign.name and meta["created"] and meta["mode"] == "external"
            lines = [json.loads(line) for line in (campaign / "files" / "annotations.jsonl").open()]
            assert all(isinstance(line["example_idx"], int) for line in lines)
            assert {line["metadata"]["campaign_id"] for line in lines} == {campaign.name}
            db = (campaign / "db.csv").read_text().splitlines()
            assert db[0].startswith("dataset,split,setup_id,example_idx") and len(db) == len(lines) + 1
            back = f"{source}-back"
            call_command("import_annotations", str(campaign), dataset=dataset, source=back, format="factgenie",
                         stdout=io.StringIO())
            placed = [s for s in spans_of(dataset, source) if s[2] is not None]
            assert spans_of(dataset, back) == placed, (dataset, source)


def test_one_category_list_per_dataset_whatever_the_filter(interop):
    dataset = interop.datasets[0]
    whole = _export(interop, dataset)
    lists = {json.dumps(json.loads((c / "metadata.json").read_text())["config"]["annotation_span_categories"])
             for c in whole.iterdir()}
    only = interop.root / "fg-only"
    call_command("export_items", dataset=dataset, format="factgenie", output=only, source="llm-b",
                 stderr=io.StringIO())
    (campaign,) = only.iterdir()
    lists.add(json.dumps(json.loads((campaign / "metadata.json").read_text())["config"]["annotation_span_categories"]))
    assert len(lists) == 1
    assert [c["name"] for c in json.loads(lists.pop())] == ["Incorrect", "Misleading", "Not checkable", "Omission"]


def test_export_reports_spans_it_could_not_write_per_source(interop):
    dataset = interop.datasets[0]
    err = io.StringIO()
    folder = interop.root / "fg-report"
    call_command("export_items", dataset=dataset, format="factgenie", output=folder, stderr=err)
    assert "Left out 1 span without a position in the text from source 'gold'" in err.getvalue()
    assert "Left out 1 span without a position in the text from source 'llm-b'" in err.getvalue()
    card = json.loads(folder.with_name(folder.name + ".card.json").read_text())
    assert card["not_written"]["spans_without_position"] == {"gold": 1, "llm-b": 1}
    meta = json.loads((folder / slug(f"{dataset}-gold") / "metadata.json").read_text())
    assert meta["spanjudge"]["spans_without_position"] == 1
    jsonl = interop.root / "all.jsonl"
    call_command("export_items", dataset=dataset, format="jsonl", output=jsonl, stderr=io.StringIO())
    assert json.loads(jsonl.with_name("all.card.json").read_text())["not_written"]["spans_without_position"] == {}


def test_factgenie_import_honours_dataset_and_split(interop):
    """One campaign holding lines of both datasets and two splits: each import takes its own lines only."""
    first, second = interop.datasets
    a = _export(interop, first) / slug(f"{first}-llm-a")
    b = _export(interop, second) / slug(f"{second}-llm-a")
    mixed = interop.root / "mixed-campaign"
    shutil.copytree(a, mixed)
    lines = [json.loads(line) for line in (b / "files" / "annotations.jsonl").open()]
    lines[0]["split"] = "dev"
    with (mixed / "files" / "annotations.jsonl").open("a") as handle:
        handle.writelines(json.dumps(line) + "\n" for line in lines)
    out = io.StringIO()
    call_command("import_annotations", str(mixed), dataset=first, source="mixed-a", format="factgenie", stdout=out)
    assert f"left {len(lines)} records of other datasets or splits aside" in out.getvalue()
    assert spans_of(first, "mixed-a") == [s for s in spans_of(first, "llm-a") if s[2] is not None]
    call_command("import_annotations", str(mixed), dataset=second, source="mixed-b", format="factgenie",
                 split="test", stdout=io.StringIO())
    dev_item = lines[0]["metadata"]["spanjudge"]["item_id"]
    expected = [s for s in spans_of(second, "llm-a") if s[2] is not None and s[0] != dev_item]
    assert spans_of(second, "mixed-b") == expected and expected
    from django.core.management import CommandError

    with pytest.raises(CommandError, match="holds no annotations of dataset 'reviews-2', split 'train'"):
        call_command("import_annotations", str(mixed), dataset=second, source="mixed-c", format="factgenie",
                     split="train", stdout=io.StringIO())


def test_an_export_job_zips_the_campaign_folder_and_it_imports_back(interop, settings, tmp_path):
    import zipfile

    from analytics.exports.jobs import export_file
    from analytics.models import ExportJob

    dataset = Dataset.objects.get(name=interop.datasets[1])
    job = ExportJob.objects.create(dataset=dataset, format="factgenie", filters={}, total=dataset.items.count())
    assert job_execute(ExportJob, job.pk) == "done"
    job.refresh_from_db()
    stem = f"{dataset.pk}-reviews-2-export{job.pk}"  # each export job's files have names of their own
    assert job.files == [f"{stem}.zip", f"{stem}.zip.card.json"]
    unpacked = tmp_path / "unpacked"
    with export_file(job, job.files[0]) as stored, zipfile.ZipFile(stored) as archive:
        archive.extractall(unpacked)
    assert sorted(p.name for p in unpacked.iterdir()) == sorted(slug(f"reviews-2-{s}") for s in interop.sources)
    for source in interop.sources:
        call_command("import_annotations", str(unpacked / slug(f"reviews-2-{source}")), dataset=dataset.name,
                     source=f"zip-{source}", format="factgenie", stdout=io.StringIO())
        assert spans_of(dataset.name, f"zip-{source}") == [
            s for s in spans_of(dataset.name, source) if s[2] is not None]
    with export_file(job, job.files[1]) as stored:
        card = json.loads(stored.read())
    assert card["not_written"]["spans_without_position"] == {"gold": 1, "llm-b": 1}


def test_sources_whose_names_slugify_alike_get_their_own_campaigns(interop):
    dataset = interop.datasets[1]
    path = interop.root / "llm-space.jsonl"
    path.write_text(json.dumps({"item_id": "r-alpha", "system": "gpt", "model": "m", "spans": []}) + "\n")
    call_command("import_annotations", str(path), dataset=dataset, source="llm a", stdout=io.StringIO())
    folder = _export(interop, dataset)
    sources = {json.loads((c / "metadata.json").read_text())["spanjudge"]["source"]: c.name for c in folder.iterdir()}
    assert sources["llm-a"] != sources["llm a"]
    assert {sources["llm-a"], sources["llm a"]} == {"reviews-2-llm-a", "reviews-2-llm-a-2"}
