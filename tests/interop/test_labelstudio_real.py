"""Label Studio's own import and export code takes our Label Studio exports and gives them back whole.

label-studio 1.23 pins its own Django (and more) apart from ours, so it is not a dev requirement: the test
creates a separate virtualenv once under ~/.cache/spanjudge/label-studio-1.23.2/ (SPANJUDGE_CACHE moves it),
with a migrated SQLite template beside it, and drives Label Studio there through tests/interop/labelstudio_driver.py
(its project, import and export APIs). First run: a few minutes to install; later runs: ~10 s per dataset.
Skipped, saying so, only when the package index cannot be reached.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.interop.conftest import spans_of

VERSION = "1.23.2"
CACHE = Path(os.environ.get("SPANJUDGE_CACHE", Path.home() / ".cache" / "spanjudge")) / f"label-studio-{VERSION}"
DRIVER = Path(__file__).with_name("labelstudio_driver.py")
_OFFLINE = ("NewConnectionError", "Temporary failure in name resolution", "Network is unreachable",
            "No matching distribution found", "Could not find a version", "ConnectTimeoutError")


def _labelstudio_python() -> Path:
    """The cached venv's Python with label-studio installed (created on first use)."""
    venv = CACHE / "venv"
    python = venv / "bin" / "python"
    marker = CACHE / "installed"
    if marker.exists() and python.exists():
        return python
    CACHE.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True, timeout=300)
    done = subprocess.run([str(python), "-m", "pip", "install", "-q", f"label-studio=={VERSION}"],
                          capture_output=True, text=True, timeout=1800, check=False)
    if done.returncode != 0:
        if any(sign in done.stderr + done.stdout for sign in _OFFLINE):
            pytest.skip(f"label-studio {VERSION} cannot be installed: the package index is unreachable "
                        f"({(done.stderr or done.stdout).strip().splitlines()[-1][:200]})")
        raise AssertionError(f"pip install label-studio=={VERSION} failed:\n{done.stderr[-3000:]}")
    marker.write_text(VERSION)
    return python


@pytest.fixture(scope="module")
def labelstudio() -> Path:
    return _labelstudio_python()


def _through_labelstudio(python: Path, work: Path, config: Path, tasks: Path, emails: list[str]) -> dict:
    done = subprocess.run(
        [str(python), str(DRIVER), str(work), str(config), str(tasks), str(CACHE / "template.sqlite3"), *emails],
        capture_output=True, text=True, timeout=900, check=False, cwd=work,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_labelstudio_imports_and_exports_our_two_annotator_tasks_back_identical(interop, labelstudio):
    for dataset in interop.datasets:
        work = interop.root / f"ls-{dataset.replace(' ', '_')}"
        work.mkdir()
        tasks = work / "tasks.json"
        err = io.StringIO()
        call_command("export_items", dataset=dataset, format="labelstudio", output=tasks, stderr=err)
        card = json.loads((work / "tasks.card.json").read_text())
        people = card["labelstudio_users"]  # our annotator -> the Label Studio user's email
        assert people == {"alice@example.org": "alice@example.org", "bob@example.org": "bob@example.org",
                          "gold": "gold@annotators.spanjudge.invalid"}, people
        written = json.loads(tasks.read_text())
        assert all(len(t["annotations"]) == 3 and len(t["predictions"]) == 2 for t in written)
        result = _through_labelstudio(labelstudio, work, work / "tasks.labels.xml", tasks, sorted(people.values()))
        exported = result["export"]
        assert len(exported) == len(written)
        # who made what, where Label Studio keeps it: people as annotations by its users, models as predictions
        ids = result["users"]
        for task in exported:
            assert sorted(a["completed_by"] for a in task["annotations"]) == sorted(ids.values())
            assert sorted(p["model_version"] for p in task["predictions"]) == ["llama3.1:8b", "qwen2.5:7b"]
        back = work / "from-labelstudio.json"
        back.write_text(json.dumps(exported))
        mapping = [f"{ids[email]}={'' if who == 'gold' else who}" for who, email in people.items()]
        call_command("import_annotations", str(back), dataset=dataset, source="ls-back", format="labelstudio",
                     map_annotator=mapping, stdout=io.StringIO())
        original = sorted((s for source in interop.sources for s in spans_of(dataset, source) if s[2] is not None),
                          key=repr)
        assert spans_of(dataset, "ls-back") == original, dataset


def test_an_import_without_the_map_names_label_studio_users_by_id(interop, labelstudio):
    """Two annotators whose ids are not mapped still come back as two (never 'a second annotation by 1')."""
    dataset = interop.datasets[1]
    work = interop.root / "ls-unmapped"
    work.mkdir()
    tasks = work / "tasks.json"
    call_command("export_items", dataset=dataset, format="labelstudio", output=tasks, source="experts",
                 stderr=io.StringIO())
    result = _through_labelstudio(labelstudio, work, work / "tasks.labels.xml", tasks,
                                  ["alice@example.org", "bob@example.org"])
    back = work / "back.json"
    back.write_text(json.dumps(result["export"]))
    call_command("import_annotations", str(back), dataset=dataset, source="ls-ids", format="labelstudio",
                 stdout=io.StringIO())
    models = {s[8] for s in spans_of(dataset, "ls-ids")}
    assert models == {str(result["users"]["alice@example.org"]), str(result["users"]["bob@example.org"])}
