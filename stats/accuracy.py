"""The paper's Table 4: counts of (explanation verdict, span verdict) pairs and its two headline rates."""

from __future__ import annotations

from dataclasses import dataclass, field

from corpus.protocols import opennlgauge as protocol
from stats.shares import ratio

# The study protocol's verdicts as strings, in the column (span) and row (explanation) order of the paper's Table 4;
# corpus.protocols.opennlgauge's SPAN_VERDICTS and EXPLANATION_VERDICTS are its Terms in key order.
SPAN_COLUMNS: tuple[str, ...] = protocol.TABLE4_SPAN_ORDER
EXPLANATION_ROWS: tuple[str, ...] = protocol.TABLE4_EXPLANATION_ORDER
FLAGS: tuple[str, ...] = protocol.FLAG_VALUES


@dataclass
class AccuracyMatrix:
    """Counts of (explanation verdict, span verdict) pairs, with the paper's two headline rates."""

    counts: dict[str, dict[str, int]] = field(
        default_factory=lambda: {e: dict.fromkeys(SPAN_COLUMNS, 0) for e in EXPLANATION_ROWS}
    )

    def row_total(self, explanation: str) -> int:
        return sum(self.counts[explanation].values())

    def column_total(self, span: str) -> int:
        return sum(row[span] for row in self.counts.values())

    @property
    def total(self) -> int:
        return sum(self.row_total(e) for e in EXPLANATION_ROWS)

    @property
    def span_ok(self) -> float | None:
        """Share of judged spans whose span verdict is Error (the paper's "Span OK")."""
        return ratio(self.column_total(protocol.SPAN_OK), self.total)

    @property
    def exp_correct(self) -> float | None:
        """Share of judged spans whose explanation verdict is Correct (the paper's "Exp. correct")."""
        return ratio(self.row_total(protocol.EXPLANATION_OK), self.total)
