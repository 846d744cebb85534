"""The one pre-fill rule MQM and ESA^AI share: located spans only, the threshold, and overlaps per protocol."""

from __future__ import annotations

import pytest

from corpus import protocols
from corpus.protocols.errors import ProtocolError
from corpus.protocols.prefill import MachineSpan, major_from, prefill_choice

# Two runs mark "scored 20" (3-12) at severities 2 and 5, one marks "20 points" (10-19) at 4, one has no place.
SPANS = [MachineSpan(1, 3, 12, 2), MachineSpan(2, 3, 12, 5), MachineSpan(3, 10, 19, 4),
         MachineSpan(4, None, None, 5), MachineSpan(5, 25, 30, None)]


def test_overlapping_protocols_copy_every_located_span_in_text_order():
    chosen = prefill_choice(SPANS, overlapping=True)
    assert [(s.key, severity) for s, severity in chosen] == [(1, "minor"), (2, "major"), (3, "major"),
                                                             (5, "minor")]


def test_non_overlapping_protocols_keep_the_most_severe_of_overlapping_spans():
    chosen = prefill_choice(SPANS, overlapping=False)
    assert [(s.key, severity) for s, severity in chosen] == [(2, "major"), (5, "minor")]  # 3 overlaps 2 at "20"
    # at one severity the earlier wins, then the longer
    tie = [MachineSpan(7, 5, 9, 3), MachineSpan(8, 2, 6, 3), MachineSpan(9, 2, 8, 3)]
    assert [s.key for s, _ in prefill_choice(tie, overlapping=False)] == [9]


def test_the_threshold_is_the_campaigns_under_both_protocols():
    assert [sev for _, sev in prefill_choice(SPANS, major_from=2, overlapping=True)] == ["major"] * 3 + ["minor"]
    for name in (protocols.MQM, protocols.ESA):
        options = protocols.get(name).clean_options({"major_from": 2})
        assert options == {"major_from": 2} and major_from(options) == 2
        assert major_from(protocols.get(name).clean_options({})) == 4
        with pytest.raises(ProtocolError) as refused:
            protocols.get(name).clean_options({"major_from": 0})
        assert refused.value.field == "protocol_options.major_from"
