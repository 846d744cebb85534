"""Every copy of the study protocol's vocabulary is derived from corpus/protocols/opennlgauge.py and agrees with it.

The statistics' side (Table 4 order) is checked Django-free in tests/analytics/test_stats.py."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.urls import reverse

from annotator.forms import EXPLANATION_VERDICT_CHOICES, SPAN_VERDICT_CHOICES
from annotator.models import FLAG_FIELDS, Assignment, ControlVerdict, ExplanationVerdict, SpanJudgment, SpanVerdict
from annotator.selectors.spans import judged_span_by_handle
from corpus.formats import FormatError, parse_item
from corpus.protocols import opennlgauge as protocol
from tests.factories import build_campaign

REPO = Path(__file__).resolve().parent.parent
ALL_TERMS = [t for g in protocol.GROUPS for t in g.terms]


class _Page(HTMLParser):
    """Collects the attributes of every element, and the text of <script> elements by id."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.scripts: dict[str, str] = {}
        self._script: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        self.elements.append((tag, values))
        if tag == "script" and "id" in values:
            self._script = values["id"]
            self.scripts[self._script] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._script = None

    def handle_data(self, data: str) -> None:
        if self._script:
            self.scripts[self._script] += data


def _parse(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    return page


# ---- the protocol module itself -----------------------------------------------------------------------


def test_keys_are_unique_and_leave_the_screen_keys_alone():
    keys = [t.key for t in ALL_TERMS]
    assert len(keys) == len(set(keys))
    assert not protocol.SCREEN_KEYS & set(keys)
    assert set(protocol.key_map()) == set(keys)


def test_screen_keys_are_the_keys_the_page_script_binds_itself():
    """SCREEN_KEYS guards the protocol against collisions only if it matches the script's own key table."""
    script = (REPO / "static" / "js" / "annotate" / "main.js").read_text(encoding="utf-8")
    table = script[script.index("const KEYS = {"):]
    table = table[: table.index("\n  };")]
    bound = {a or b for a, b in re.findall(r'(?:^|[{,])\s*(?:"([^"]+)"|([A-Za-z]\w*))\s*:', table, re.M)}
    assert {k for k in bound if len(k) == 1} == protocol.SCREEN_KEYS
    # No verdict or flag key is written into the script any more.
    assert not bound & {t.key for t in ALL_TERMS}
    assert 'data-key="' not in table


# ---- models and forms ---------------------------------------------------------------------------------


def test_model_and_form_choices_are_the_protocol_values():
    assert tuple(SpanVerdict.values) == protocol.SPAN_VERDICT_VALUES
    assert tuple(ExplanationVerdict.values) == protocol.EXPLANATION_VERDICT_VALUES
    assert tuple(FLAG_FIELDS) == protocol.FLAG_VALUES
    for model in (SpanJudgment, ControlVerdict):
        assert [v for v, _ in model._meta.get_field("span_verdict").choices] == list(protocol.SPAN_VERDICT_VALUES)
        assert [v for v, _ in model._meta.get_field("explanation_verdict").choices] == list(
            protocol.EXPLANATION_VERDICT_VALUES)
    for flag in protocol.FLAGS:
        assert SpanJudgment._meta.get_field(flag.value).get_internal_type() == "BooleanField"
    assert SPAN_VERDICT_CHOICES[1:] == protocol.choices(protocol.SPAN_VERDICTS)
    assert EXPLANATION_VERDICT_CHOICES[1:] == protocol.choices(protocol.EXPLANATION_VERDICTS)
    assert SPAN_VERDICT_CHOICES[0][0] == EXPLANATION_VERDICT_CHOICES[0][0] == ""


# ---- import / export validation -----------------------------------------------------------------------


def _item_with(judgment: dict) -> dict:
    return {"id": "x1", "outputs": {"Text": "The cafe is cheap."},
            "spans": [{"start": 4, "end": 8, "text": "cafe", "judgments": [{"annotator": "ann", **judgment}]}]}


def test_formats_accept_every_protocol_value():
    pairs = zip(protocol.SPAN_VERDICT_VALUES * 2, protocol.EXPLANATION_VERDICT_VALUES, strict=False)
    for span_verdict, explanation_verdict in pairs:
        item = parse_item(_item_with({"span_verdict": span_verdict, "explanation_verdict": explanation_verdict,
                                      "flags": list(reversed(protocol.FLAG_VALUES))}), "line 1")
        (judgment,) = item.spans[0]["judgments"]
        assert (judgment["span_verdict"], judgment["explanation_verdict"]) == (span_verdict, explanation_verdict)
        assert judgment["flags"] == list(protocol.FLAG_VALUES)  # stored in protocol order


@pytest.mark.parametrize("judgment", [
    {"span_verdict": "wrong_place"},
    {"explanation_verdict": "Correct"},  # a label is not a value
    {"flags": ["too_strict", "sloppy"]},
])
def test_formats_reject_an_unknown_value(judgment):
    with pytest.raises(FormatError):
        parse_item(_item_with(judgment), "line 1")


# ---- the item page ------------------------------------------------------------------------------------


@pytest.fixture
def item_page(client, make_user):
    ann = make_user("proto")
    built = build_campaign([ann], per_item=1)
    assignment = Assignment.objects.get(annotator=ann, item=built.items[0])
    client.force_login(ann)
    response = client.get(f"/work/{assignment.pk}/")
    assert response.status_code == 200
    return assignment, response.content.decode()


def test_item_page_hands_the_protocol_key_map_to_its_script(item_page):
    _, html = item_page
    page = _parse(html)
    assert json.loads(page.scripts["sj-keys"]) == protocol.key_map()
    assert set(json.loads(page.scripts["sj-keys"])) == {t.key for t in ALL_TERMS}


def test_every_card_has_a_chip_per_protocol_term(item_page):
    _, html = item_page
    page = _parse(html)
    chips = [a for tag, a in page.elements if tag == "button" and "data-key" in a]
    n_cards = sum(1 for tag, a in page.elements if tag == "article" and "error-card" in a.get("class", ""))
    assert n_cards == 3
    for group in protocol.GROUPS:
        for term in group.terms:
            mine = [a for a in chips if a["data-key"] == term.key]
            assert len(mine) == n_cards, term
            vals = {"field": mine[0]["data-field"], "value": mine[0]["data-value"]}
            if group.field:
                assert vals == {"field": group.field, "value": term.value}
            else:
                assert vals == {"field": term.value, "value": "true"} and "flag" in mine[0]["class"].split()
    legends = re.findall(r"<legend>([^<]*)</legend>", html)
    assert all(g.name in legends for g in protocol.GROUPS)


def test_shortcut_sheet_lists_every_protocol_key_and_label(item_page):
    _, html = item_page
    sheet = html[html.index('id="help-dialog"'):]
    sheet = sheet[: sheet.index("</dialog>")]
    for term in ALL_TERMS:
        assert term.label in sheet, term
    for keys, _ in protocol.shortcut_lines():
        assert f"<kbd>{keys}</kbd>" in sheet


def test_every_chip_posts_a_value_the_judgment_service_stores(client, item_page):
    """What a chip posts (built from the protocol) is accepted, stored, and shown pressed on the new card."""
    assignment, html = item_page
    page = _parse(html)
    card = next(a for tag, a in page.elements if tag == "article" and "error-card" in a.get("class", ""))
    span_pk = int(card["data-span"])
    url = reverse("judgment_save", args=[assignment.pk, span_pk])
    assert card["data-save-url"] == url
    # The first card's chips (each card carries one chip per key; the first of each key is this card's).
    chips: dict[str, dict] = {}
    for tag, a in page.elements:
        if tag == "button" and "data-key" in a:
            chips.setdefault(a["data-key"], a)
    assert set(chips) == {t.key for t in ALL_TERMS}
    for term in ALL_TERMS:
        vals = {"field": chips[term.key]["data-field"], "value": chips[term.key]["data-value"]}
        response = client.post(url, {**vals, "number": "1"}, HTTP_HX_REQUEST="true")
        assert response.status_code == 200, (term, response.content)
        pressed = [a for tag, a in _parse(response.content.decode()).elements
                   if tag == "button" and a.get("data-key") == term.key]
        assert pressed and pressed[0]["aria-pressed"] == "true", term
    judgment = SpanJudgment.objects.get(assignment=assignment, span_id=judged_span_by_handle(assignment, span_pk)[0].pk)
    assert judgment.span_verdict == protocol.SPAN_VERDICTS[-1].value
    assert judgment.explanation_verdict == protocol.EXPLANATION_VERDICTS[-1].value
    assert judgment.flags() == list(protocol.FLAG_VALUES)
