"""The side-by-side MQM TSV on a small made-up file (tests/data/sxs_mqm.tsv): the screens recovered from time and
side, the planted-error checks kept apart, the import's units and a byte-identical round trip."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from corpus.formats import FormatError
from corpus.interop.mqm_sxs import CHECK, is_side_by_side, read_sxs_tsv, sxs_tsv_lines, system_of
from corpus.models import Annotation, ErrorSpan, Item, Unit

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "sxs_mqm.tsv"
TEXT = FIXTURE.read_text(encoding="utf-8")


def _read(text: str = TEXT):
    return read_sxs_tsv(io.StringIO(text), name="sxs.tsv")


def _screens(read) -> dict[tuple[str, str, int], dict[str, int | None]]:
    """(rater, segment, screen) -> {system label: position}."""
    found: dict[tuple[str, str, int], dict[str, int | None]] = {}
    for r in read.ratings:
        found.setdefault((r.rating.rater, r.rating.seg_id, r.screen), {})[r.rating.system] = r.position
    return found


def test_screens_follow_the_time_order_of_each_raters_rows_two_at_a_time():
    # r1 on segment 1 rated R and S first (t=1000, 1100), then P and Q (t=5000...); the file lists them by system
    assert _screens(_read()) == {
        ("r1", "1", 1): {"R": 1, "S": 2},  # R's error is on side 1, so S (clean) was the other column
        ("r1", "1", 2): {"P_with_Q": 2, "Q": 1},
        ("r1", "2", 1): {"Q": None, "P_with_Q": None},  # a source-side error and a clean output: no column known
        ("r1", "2", 2): {"R": 2, "S": 1},
        ("r2", "1", 1): {"P_with_Q": None, "Q": None},  # equal timestamps: file order decides who came first
        ("r2", "1", 2): {"R": 2, "S": 1},
        ("r2", "2", 1): {"R": 1, "S": 2},
        ("r2", "2", 2): {"P_with_Q": 1, "Q": 2},
    }


def test_checks_are_rows_not_errors_and_a_marker_past_the_text_is_kept_as_padding():
    ratings = {(r.rating.system, r.rating.seg_id, r.rating.rater): r for r in _read().ratings}
    q = ratings[("Q", "1", "r1")]
    assert [e.category for e in q.rating.errors] == ["Fluency/Spelling", "Style/Awkward"]
    assert [(row.kind, row.found) for row in q.rows if row.kind == CHECK] == [(CHECK, True)]
    assert [row.found for row in ratings[("R", "2", "r1")].checks] == [False]
    padded = ratings[("S", "2", "r1")]
    assert padded.rating.target == "Regen." and padded.rows[0].pad == " "
    assert (padded.rating.errors[0].start, padded.rating.errors[0].end) == (None, None)
    source_side = ratings[("Q", "2", "r1")].rating.errors[0]
    assert (source_side.side, source_side.start, source_side.end) == ("source", 3, 9)


def test_the_writer_gives_back_the_file_byte_for_byte():
    read = _read()
    assert "".join(sxs_tsv_lines(read.header, read.ratings)) == TEXT


def test_x_with_y_is_system_x_shown_with_y_only_when_y_is_a_label_of_the_file():
    assert system_of("GPT4-5shot_with_refA", {"refA"}) == ("GPT4-5shot", "refA")
    assert system_of("model_with_rag", {"refA"}) == ("model_with_rag", None)
    assert is_side_by_side(TEXT.splitlines()[0]) and not is_side_by_side("system\tdoc\tdoc_id\tseg_id\trater")


def _lines() -> list[str]:
    return TEXT.splitlines(keepends=True)


def test_an_odd_number_of_outputs_on_a_segment_is_refused():
    lines = [line for line in _lines() if not line.startswith("S\tdoc1\t2\t2\tr2")]
    with pytest.raises(FormatError, match="rater 'r2' on doc 'doc1', globalSegId 2: rated 3 outputs"):
        _read("".join(lines))


def test_x_with_y_on_a_screen_without_y_is_refused():
    # Q's rows on segment 2 for r2 moved after R and S: P_with_Q would then share its screen with R
    text = TEXT.replace('{"timestamp":9600}', '{"timestamp":8990}').replace('"timestamp":9500', '"timestamp":8995')
    text = text.replace('"timestamp": 9450', '"timestamp": 8994')
    with pytest.raises(FormatError, match="shares its screen with"):
        _read(text)


def test_interleaved_screens_and_two_outputs_on_one_side_are_refused():
    with pytest.raises(FormatError, match="interleave in time"):
        # one of Q's errors on r1's segment 1 moved into R and S's time: Q's rows straddle the other screen
        _read(TEXT.replace('"timestamp": 5020', '"timestamp": 1050'))
    with pytest.raises(FormatError, match="marked on the same side"):
        _read(TEXT.replace('"timestamp": 8000, "side": 2', '"timestamp": 8000, "side": 1'))


def _import(**options) -> str:
    out = io.StringIO()
    call_command("import_mqm", str(FIXTURE), dataset="sxs", stdout=out, **options)
    return out.getvalue()


@pytest.mark.django_db
def test_import_keeps_every_row_with_units_positions_and_checks(tmp_path):
    summary = _import(side_by_side=True)
    assert "8 new items" in summary and "16 ratings (5 clean segments), 12 errors" in summary
    assert "8 screens; planted-error checks 2 found, 1 missed" in summary
    assert Unit.objects.filter(dataset__name="sxs").count() == 8
    r1_first = Unit.objects.get(source__label="mqm:r1", segment="doc1:1", number=1)
    assert dict(Annotation.objects.filter(unit=r1_first).values_list("item__system", "unit_position")) == {
        "R": 1, "S": 2}
    rows = sum(len(a["mqm_sxs_rows"]) for a in Annotation.objects.values_list("extra", flat=True))
    assert rows == len(_lines()) - 1
    assert ErrorSpan.objects.filter(annotation__item__dataset__name="sxs").count() == 12
    assert Item.objects.get(system="P_with_Q", external_id="doc1:1").output == "Die Katze saß."
    back = tmp_path / "back.tsv"
    call_command("export_annotations", dataset="sxs", format="mqm-tsv", output=back, stdout=io.StringIO())
    assert back.read_bytes() == FIXTURE.read_bytes()


@pytest.mark.django_db
def test_side_by_side_flag_refuses_a_pointwise_file(tmp_path):
    path = tmp_path / "pointwise.tsv"
    path.write_text("system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\n"
                    "A\td\t1\t1\tr1\tx\ty\tNo-error\tNo-error\n", encoding="utf-8")
    with pytest.raises(CommandError, match="--side-by-side: the header is not the side-by-side layout's"):
        call_command("import_mqm", str(path), dataset="pw", side_by_side=True, stdout=io.StringIO())
    assert "1 new items" in _import_path(path)
    assert not Unit.objects.exists()


def _import_path(path: Path) -> str:
    out = io.StringIO()
    call_command("import_mqm", str(path), dataset="pw", stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_a_prefix_mixing_both_layouts_is_refused_by_the_export_not_half_written(tmp_path):
    _import()
    pointwise = tmp_path / "pointwise.tsv"
    pointwise.write_text("system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\n"
                         "R\tdoc1\t1\t1\tr9\tThe cat sat.\tDer Kater saß.\tNo-error\tNo-error\n", encoding="utf-8")
    call_command("import_mqm", str(pointwise), dataset="sxs", stdout=io.StringIO())
    with pytest.raises(CommandError, match="mix ratings made side by side with ratings made one output at a time"):
        call_command("export_annotations", dataset="sxs", format="mqm-tsv", output=tmp_path / "x.tsv",
                     stdout=io.StringIO())
    assert not (tmp_path / "x.tsv").exists()
