"""Google's MQM TSV: markers, clean segments, tolerant categories, bad rows refused with their line, writing back."""

from __future__ import annotations

import pytest

from corpus.formats import FormatError
from corpus.interop.mqm import mqm_tsv_lines, rating_sort_key, read_mqm_tsv
from corpus.protocols.mqm import canonical_category

HEADER = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\tcomment\n"


def _rows(*rows: str) -> list[str]:
    return [HEADER, *(r + "\n" for r in rows)]


def test_read_places_target_and_source_spans_and_groups_rows_by_rating():
    ratings = read_mqm_tsv(_rows(
        "A\td1\t1\t7\tr1\tHello 😀 world\tHallo 😀 <v>Welt</v>\tAccuracy/Mistranslation\tMajor\tbad word",
        "A\td1\t1\t7\tr1\tHello 😀 <v>world</v>\tHallo 😀 Welt\tAccuracy/Omission\tminor\t",
        "B\td1\t1\t7\tr2\tHello 😀 world\tHallo Welt\tNo-error\tno-error\tall fine",
    ))
    assert [(r.system, r.rater, len(r.errors)) for r in ratings] == [("A", "r1", 2), ("B", "r2", 0)]
    first, second = ratings[0].errors
    # offsets count code points of the text without markers (the emoji is one)
    assert ratings[0].target[first.start:first.end] == "Welt" and (first.start, first.end) == (8, 12)
    assert (second.side, ratings[0].source[second.start:second.end]) == ("source", "world")
    assert (first.severity, second.severity, first.comment) == ("major", "minor", "bad word")
    assert ratings[1].comment == "all fine" and ratings[1].target == "Hallo Welt"


@pytest.mark.parametrize(("row", "message"), [
    ("A\td\t1\t1\tr\ts\t<v>t</v> <v>u</v>\tOther\tMinor\t", "at most one span"),
    ("A\td\t1\t1\tr\ts\tt</v>x<v>\tOther\tMinor\t", "closes </v> before"),
    ("A\td\t1\t1\tr\ts\t<v></v>t\tOther\tMinor\t", "empty span"),
    ("A\td\t1\t1\tr\t<v>s</v>\t<v>t</v>\tOther\tMinor\t", "both the source and the target"),
    ("A\td\t1\t1\tr\ts\tt\tOther\tCritical-ish\t", "unknown severity"),
    ("A\td\t1\t1\tr\ts\tt\t\tMinor\t", "column 'category' is empty"),
    ("A\td\t1\t\tr\ts\tt\tOther\tMinor\t", "column 'seg_id' is empty"),
    ("A\td\t1\t1\tr\ts\tt\tOther", "has 8 tab-separated fields"),
    ("A\td\t1\t1\tr\ts\t<v>t</v>\tNo-error\tNo-error\t", "a no-error row marks no span"),
])
def test_read_refuses_a_bad_row_naming_its_line(row, message):
    with pytest.raises(FormatError) as caught:
        read_mqm_tsv(_rows("A\td\t1\t2\tr\ts\tt\tNo-error\tNo-error\t", row), name="f.tsv")
    assert "f.tsv, line 3" in str(caught.value) and message in str(caught.value)


def test_read_refuses_errors_in_a_segment_called_clean_and_texts_that_differ():
    with pytest.raises(FormatError) as caught:
        read_mqm_tsv(_rows(
            "A\td\t1\t1\tr\ts\tt\tNo-error\tNo-error\t",
            "A\td\t1\t1\tr\ts\t<v>t</v>\tOther\tMinor\t",
            "A\td\t1\t1\tr2\ts\tT\tOther\tMinor\t",
        ), name="f.tsv")
    text = str(caught.value)
    assert "2 bad rows" in text and "line 3: rater 'r' already called this segment clean on line 2" in text
    assert "line 4: the target of system 'A'" in text


def test_read_refuses_a_header_without_the_columns():
    with pytest.raises(FormatError, match="missing: rater"):
        read_mqm_tsv(["system\tdoc\tdoc_id\tseg_id\tsource\ttarget\tcategory\tseverity\n"])


def test_an_unclosed_marker_runs_to_the_end_and_is_written_back_unclosed():
    rows = _rows("A\td\t1\t1\tr\ts\tEnde. <v>?\tFluency/Punctuation\tMinor\t")
    (rating,) = read_mqm_tsv(rows)
    assert rating.target[rating.errors[0].start:rating.errors[0].end] == "?"
    assert list(mqm_tsv_lines([rating])) == rows


def test_write_round_trips_rows_sorted_by_system_doc_id_seg_id_rater_and_span():
    rows = [
        "B\td\t2\t10\tr1\tx y\t<v>x</v> y\tStyle/Awkward\tMinor\t",
        "B\td\t2\t10\tr1\tx y\tx <v>y</v>\tNon-translation!\tMajor\tgarbled",
        "A\td\t10\t3\tr2\tu\tu\tNo-error\tNo-error\t",
        "A\td\t2\t9\tr1\t<v>u</v>\tv\tAccuracy/Omission\tMajor\t",
    ]
    ratings = read_mqm_tsv(_rows(*reversed(rows)))
    written = list(mqm_tsv_lines(sorted(ratings, key=rating_sort_key)))
    # numeric ids sort as numbers (2 before 10); the file's category spelling is kept
    assert written == [HEADER, rows[3] + "\n", rows[2] + "\n", rows[0] + "\n", rows[1] + "\n"]


@pytest.mark.parametrize(("written", "canonical"), [
    ("Non-translation!", "Non-translation"),
    ("non-translation", "Non-translation"),
    ("Fluency / punctuation", "Fluency/Punctuation"),
    ("Terminology/Inappropriate", "Terminology/Inappropriate for context"),
    ("Terminology/Inconsistent use of terminology", "Terminology/Inconsistent use"),
    ("Locale convention/Currency format", "Locale convention/Currency"),
    ("Source issue", "Source error"),
    ("Fluency/Display", "Fluency/Display"),
])
def test_category_spellings_map_onto_the_tree(written, canonical):
    assert canonical_category(written) == canonical
