"""An import lists every bad line (the first 50, then how many more) and keeps nothing."""

from __future__ import annotations

import json

import pytest

from corpus.formats import FormatError, FormatErrors
from corpus.models import Dataset
from corpus.services.importing import items_import

pytestmark = pytest.mark.django_db


def _good(i: int) -> str:
    return json.dumps({"id": str(i), "inputs": {"Data": f"row {i}"}, "outputs": {"Text": f"text {i}"}})


def test_every_bad_line_is_named_and_nothing_is_imported(tmp_path):
    lines = [_good(1), "{not json", _good(3), json.dumps({"id": "4", "inputs": {"Data": "x"}}), _good(5),
             json.dumps({"id": "6", "inputs": "flat", "outputs": {"Text": "t"}})]
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(FormatErrors) as caught:
        items_import(path=path, dataset_name="several", task_slug="data-to-text")
    text = str(caught.value)
    assert text.startswith("3 bad objects: fix them and import again")
    assert [e.where for e in caught.value.errors] == ["line 2", "line 4, id '4'", "line 6, id '6'"]
    assert "line 2: invalid JSON" in text and "line 4, id '4': field 'outputs' is missing" in text
    assert "line 6, id '6': field 'inputs' must be an object" in text
    assert not Dataset.objects.filter(name="several").exists()


def test_one_bad_line_keeps_the_plain_message(tmp_path):
    path = tmp_path / "one.jsonl"
    path.write_text(_good(1) + "\n{oops\n")
    with pytest.raises(FormatError) as caught:
        items_import(path=path, dataset_name="one", task_slug="data-to-text")
    assert not isinstance(caught.value, FormatErrors) and str(caught.value).startswith("line 2: invalid JSON")


def test_fifty_bad_lines_are_listed_then_counted(tmp_path):
    path = tmp_path / "many.jsonl"
    path.write_text("".join("{bad\n" for _ in range(57)))
    with pytest.raises(FormatErrors) as caught:
        items_import(path=path, dataset_name="many", task_slug="data-to-text")
    text = str(caught.value)
    assert text.startswith("57 bad objects")
    assert "line 50: invalid JSON" in text and "line 51:" not in text
    assert text.endswith("... and 7 more")
