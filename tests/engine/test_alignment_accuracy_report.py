"""The alignment accuracy report's arithmetic, on the made-up corpus of tests/data (answers counted by hand)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.alignment_accuracy import (
    Report,
    data_dir,
    evaluate,
    format_report,
    load_text,
    main,
    precision,
    read_corpus,
    recall,
)

SAMPLE = Path(__file__).resolve().parents[1] / "data"
CORPUS = SAMPLE / "alignment_corpus.jsonl"
DATA = SAMPLE / "alignment"


def _report() -> Report:
    cases = read_corpus(CORPUS)
    return evaluate(cases, {c["id"]: load_text(DATA, c) for c in cases})


def test_report_sorts_every_case_into_its_cell() -> None:
    report = _report()
    assert {o.case["id"]: o.outcome for o in report.outcomes} == {
        "s01": "right", "s02": "right", "s03": "right", "s04": "wrong", "s05": "absent", "s06": "absent",
        "s07": "missed", "s08": "false", "s09": "right", "s10": "right",
    }
    assert [o.case["id"] for o in report.outcomes if o.ambiguous] == ["s04"]
    by_match = report.counts("match")
    assert by_match["exact"]["right"] == 4 and by_match["exact"]["wrong"] == 1 and by_match["exact"]["false"] == 1
    assert by_match["normalized"]["right"] == 1 and by_match["none"]["missed"] == 1


def test_report_precision_and_recall() -> None:
    total = _report().total()
    # 5 right, 1 wrong (flagged ambiguous), 1 aligned though absent, 1 missed
    assert precision(total) == pytest.approx(5 / 7)
    assert precision(total, trusted=True) == pytest.approx(5 / 6)
    assert recall(total) == pytest.approx(5 / 7)
    assert precision({}) is None and recall({"false": 2}) is None


def test_report_text_names_targets_and_verdicts() -> None:
    text = format_report(_report())
    assert "precision of aligned spans not flagged ambiguous: 83.3% (target >= 99%) BELOW TARGET" in text
    assert "recall of present locations (right place): 71.4% (target >= 95%) BELOW TARGET" in text
    assert "spans flagged ambiguous: 1 (0 at the right place, 1 elsewhere)" in text
    assert "unaligned though present" in text and "aligned though absent" in text


def test_report_runs_as_a_script(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--corpus", str(CORPUS), "--data", str(DATA), "--show-misses"]) == 0
    out = capsys.readouterr().out
    assert "confusion table by match kind" in out and "s07 paraphrase: missed" in out


def test_report_stops_when_the_shared_data_is_missing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--data", str(tmp_path)]) == 2
    assert f"the shared datasets are not in {tmp_path}" in capsys.readouterr().err
    with pytest.raises(Exception, match="need rotowire/train.jsonl"):
        data_dir(tmp_path)


def test_report_refuses_a_record_that_is_not_the_one_named(tmp_path: Path) -> None:
    case = {**read_corpus(CORPUS)[0], "record_id": "T9"}
    with pytest.raises(Exception, match="has id 'T1', not 'T9'"):
        load_text(DATA, case)


def test_committed_corpus_is_large_and_varied() -> None:
    cases = read_corpus(Path(__file__).resolve().parents[2] / "bench" / "alignment_corpus.jsonl")
    present = [c for c in cases if c["expected"] is not None]
    assert len(present) >= 300
    assert {c["style"] for c in cases} >= {
        "exact", "case", "punctuation", "paraphrase", "misquoted number", "invented phrase", "repeated phrase",
        "note", "ellipsis",
    }
    assert all(set(c) >= {"file", "record", "record_id", "field"} and "text" not in c for c in cases)


def test_committed_corpus_answers_hold_on_the_shared_data(rotowire_file: Path) -> None:
    """Every expected span of the committed corpus lies inside its text, and located copies are verbatim
    for the exact style."""
    data = rotowire_file.parents[1]
    for case in read_corpus(Path(__file__).resolve().parents[2] / "bench" / "alignment_corpus.jsonl"):
        text = load_text(data, case)
        if case["expected"] is not None:
            start, end = case["expected"]
            assert 0 <= start < end <= len(text)
            if case["style"] in ("exact", "repeated phrase"):
                assert text[start:end] == case["location"], case["id"]
