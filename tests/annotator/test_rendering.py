"""Input renderers, highlight segments, place grouping and guideline sanitizing (no database)."""

from __future__ import annotations

import json

import pytest

from annotator.rendering import (
    MAX_PYTHON_LITERAL_CHARS,
    MAX_STRUCTURED_CHARS,
    SpanRef,
    group_spans,
    markdown_html,
    render_input,
    segments,
)
from tests.conftest import SAMPLE_DATA


def test_key_value_input_becomes_an_attribute_table():
    view = render_input("Data", "name[The Eagle] | food[Indian, spicy] | near[Burger King]")
    assert view.kind == "key_value"
    assert view.tables[0].rows == [["name", "The Eagle"], ["food", "Indian, spicy"], ["near", "Burger King"]]


def test_triples_csv_pipe_tables_and_dialogue_are_recognised():
    triples = render_input("T", "Alan_Bean | occupation | Test_pilot\nAlan_Bean | birthPlace | Wheeler,_Texas")
    assert triples.kind == "triples" and triples.tables[0].rows[1] == ["Alan_Bean", "birthPlace", "Wheeler,_Texas"]
    table = render_input("T", "| team | pts |\n|---|---|\n| Celtics | 113 |")
    assert table.kind == "table" and table.tables[0].header == ["team", "pts"]
    assert table.tables[0].rows == [["Celtics", "113"]]
    csv_view = render_input("T", 'player,pts\n"Deng, Luol",3')
    assert csv_view.kind == "table" and csv_view.tables[0].rows == [["Deng, Luol", "3"]]
    dialogue = render_input("History", "A: hi there\nB: hello\nand more\nA: bye")
    assert dialogue.kind == "dialogue"
    assert [(t.speaker, t.text, t.side) for t in dialogue.turns] == [
        ("A", "hi there", 0), ("B", "hello\nand more", 1), ("A", "bye", 0)]


def test_plain_text_stays_text():
    for text in ["confirm(area=dont_care)", "Note: only one line here.", "a, b\nno commas"]:
        assert render_input("X", text).kind == "text"


def test_box_score_becomes_readable_tables():
    """The made-up sample game of tests/data, shaped like a RotoWire record."""
    record = json.loads((SAMPLE_DATA / "game_summaries.jsonl").read_text().splitlines()[0])
    view = render_input("Data", record["inputs"]["Data"])
    assert view.kind == "json"
    team, box = view.tables
    assert team.caption == "Team lines" and [row[0] for row in team.rows] == ["Home", "Visitors"]
    assert team.header[1:6] == ["CITY", "NAME", "PTS", "WINS", "LOSSES"]
    assert team.rows[0][1:4] == ["Harbor City", "Herons", "101"] and team.rows[1][3] == "96"
    assert box.caption == "box score"
    assert box.header[:6] == ["PLAYER NAME", "TEAM CITY", "START POSITION", "MIN", "PTS", "REB"]
    assert box.rows[0][:3] == ["Mara Quill", "Harbor City", "G"] and len(box.rows) == 5
    assert "FIRST NAME" not in box.header and "SECOND NAME" not in box.header
    assert ("home name", "Herons") in view.facts and ("day", "11_14_18") in view.facts


def test_rotowire_box_score_becomes_readable_tables(rotowire_file):
    record = json.loads(rotowire_file.read_text().splitlines()[0])
    view = render_input("Data", record["inputs"]["Data"])
    assert view.kind == "json"
    team, box = view.tables
    assert team.caption == "Team lines" and [row[0] for row in team.rows] == ["Home", "Visitors"]
    assert team.header[1:4] == ["CITY", "NAME", "PTS"]
    assert team.rows[0][1:4] == ["Boston", "Celtics", "113"] and team.rows[1][3] == "107"
    assert box.header[:3] == ["PLAYER NAME", "TEAM CITY", "START POSITION"]
    assert box.rows[0][0] == "Luol Deng" and "FIRST NAME" not in box.header
    assert ("home name", "Celtics") in view.facts


def test_segments_cut_at_every_boundary_and_skip_bad_offsets():
    pieces = segments("abcdefghij", [SpanRef(1, 2, 6), SpanRef(2, 4, 8), SpanRef(3, 5, 50)])
    assert [(p.start, p.end, p.text, p.span_ids) for p in pieces] == [
        (0, 2, "ab", ()), (2, 4, "cd", (1,)), (4, 6, "ef", (1, 2)), (6, 8, "gh", (2,)), (8, 10, "ij", ())]
    assert "".join(p.text for p in pieces) == "abcdefghij"


def test_group_spans_joins_marks_of_the_same_place_only():
    # 10-20 and 12-20 share 8 of the shorter's 8 chars; 18-30 shares 2 of 10 with the anchor: a new place.
    assert group_spans([SpanRef(1, 10, 20), SpanRef(2, 12, 20), SpanRef(3, 18, 30)]) == [[1, 2], [3]]


def test_guideline_markdown_is_sanitized():
    html = markdown_html(
        "**bold**\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n[x](javascript:alert(1))"
    )
    assert "<strong>bold</strong>" in html
    for bad in ("<script", "onerror", "<img", "javascript:"):
        assert bad not in html


def test_browser_offsets_count_crlf_once_and_round_trip():
    from annotator.rendering import from_browser_offset, to_browser_offset

    text = "Line one.\r\nLine two.\rThree\r\n"
    shown = text.replace("\r\n", "\n").replace("\r", "\n")  # what an HTML parser makes of it
    assert to_browser_offset(text, len(text)) == len(shown)
    for page_offset in range(len(shown) + 1):
        stored = from_browser_offset(text, page_offset)
        assert to_browser_offset(text, stored) == page_offset
        # the same characters before the boundary, as the page and as stored
        assert text[:stored].replace("\r\n", "\n").replace("\r", "\n") == shown[:page_offset]
    assert from_browser_offset("no breaks", 4) == 4 and to_browser_offset("no breaks", 4) == 4


def _box_score_input(rows: int) -> str:
    players = [{"PLAYER_NAME": f"Player {i}", "PTS": str(i)} for i in range(rows)]
    return json.dumps({"box_score": repr(players)})  # RotoWire nests Python-repr strings inside JSON


def test_structured_input_is_parsed_once_and_cached():
    text = _box_score_input(30)
    first = render_input("Data", text)
    assert first.kind == "json" and first.tables[0].rows[29][0] == "Player 29"
    assert render_input("Data", text) is first  # the second page view reuses the parsed view


def test_huge_structured_input_is_shown_as_text_without_parsing():
    text = _box_score_input(70_000)  # about 3 MB: parsing it once cost gigabytes
    assert len(text) > MAX_STRUCTURED_CHARS
    view = render_input("Data", text)
    assert view.kind == "text" and view.text == text and not view.tables


def test_large_python_literal_inside_json_is_not_evaluated():
    text = _box_score_input(7_000)  # the nested repr is over the literal cap, the whole input under the cap
    assert MAX_PYTHON_LITERAL_CHARS < len(text) < MAX_STRUCTURED_CHARS
    view = render_input("Data", text)
    assert view.kind == "json" and not view.tables
    assert view.facts[0][0] == "box score" and view.facts[0][1].startswith("[{'PLAYER_NAME'")


@pytest.mark.django_db
def test_item_page_with_a_huge_structured_input_opens(client, make_user):
    from annotator.models import Assignment
    from tests.factories import build_campaign

    ann = make_user("huge-input")
    built = build_campaign([ann], per_item=1)
    item = built.items[0]
    item.inputs = {"Data": _box_score_input(70_000) + "\n<b>not markup</b>"}
    item.save(update_fields=["inputs"])
    client.force_login(ann)
    response = client.get(f"/work/{Assignment.objects.get(annotator=ann, item=item).pk}/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "Player 69999" in page and "&lt;b&gt;not markup&lt;/b&gt;" in page
