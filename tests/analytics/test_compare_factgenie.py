"""Our `char_factgenie` figures against factgenie's own function (runs when factgenie is installed)."""

from __future__ import annotations

import pytest

from analytics.compare.metrics import CatSpan as S
from analytics.compare.metrics import factgenie_chars

# Three outputs: overlapping spans on one side, a category mismatch, and an output where one side is silent.
SOURCE = {
    1: [S(0, 4, "0"), S(2, 6, "0"), S(10, 15, "1")],
    2: [S(3, 9, "1")],
    3: [S(0, 5, "0")],
}
REFERENCE = {
    1: [S(0, 6, "0"), S(12, 20, "0")],
    2: [S(5, 12, "1"), S(0, 2, "0")],
    3: [],
}


def _span_index(pd):
    rows = []
    for campaign, spans in (("ref", REFERENCE), ("hyp", SOURCE)):
        for example, items in spans.items():
            for s in items:
                rows.append({
                    "dataset": "d", "split": "test", "setup_id": "s", "example_idx": example, "campaign_id": campaign,
                    "annotator_group": 0, "annotation_start": s.start, "annotation_end": s.end,
                    "annotation_type": int(s.category),
                })
    return pd.DataFrame(rows)


@pytest.mark.parametrize(("mode", "by_category"), [("soft", False), ("hard", True)])
def test_char_factgenie_equals_factgenie_compute_f1_scores(mode, by_category):
    pd = pytest.importorskip("pandas")
    f1 = pytest.importorskip("factgenie.iaa.f1")
    examples = pd.DataFrame(
        [("d", "test", "s", e) for e in sorted(SOURCE)], columns=["dataset", "split", "setup_id", "example_idx"]
    )
    theirs = f1.compute_f1_scores(_span_index(pd), [("ref", None), ("hyp", None)], examples, match_mode=mode)
    ours = factgenie_chars(SOURCE, REFERENCE, sorted(SOURCE), by_category=by_category)
    # factgenie rounds to three decimals
    assert round(ours.precision, 3) == theirs["precision"]
    assert round(ours.recall, 3) == theirs["recall"]
    assert round(ours.f1, 3) == theirs["f1"]
    assert 0 < theirs["f1"] < 1  # the fixture is not a trivial case
