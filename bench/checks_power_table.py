"""The quality-checks guide's power table: items per participant x shares -> known answers met and the chance
that the vigilance rule flags a participant who accepts everything, rejects everything or answers at random.

Computed by the set-up's own engine (quality.engine.power) for outputs with two machine spans each, every decoy
and planted copy asked for made, the default vigilance minimum 0.6 and no training items:

    python bench/checks_power_table.py            # prints the markdown table of docs/guides/quality-checks.md
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from quality.engine import power  # noqa: E402
from quality.engine.planting import planted_count  # noqa: E402

ITEMS = (4, 6, 8, 10, 15, 20)
SHARES = (0.1, 0.2, 0.3, 0.5)
SPANS_PER_OUTPUT = 2
VIGILANCE_MIN = 0.6


def _pct(p: float) -> str:
    return f"{100 * p:.0f}" if p == 0 or p >= 0.995 or p >= 0.01 else "<1"


def table() -> str:
    """The table as the guide prints it: decoys and planted outputs both at the share given."""
    lines = ["| Items each | Share | Decoys met | Decoys flag accept-all % | Decoys flag random % | Planted met | "
             "Planted flag % | Any check: accept-all % | reject-all % | random % |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for items in ITEMS:
        for share in SHARES:
            decoys = items * SPANS_PER_OUTPUT * share / (1 - share)
            planted = planted_count(share, items)
            rows = power.checks_power(power.Design(
                vigilance_min=VIGILANCE_MIN, per_participant=items, decoys=share, decoys_met=decoys, planted=share,
                planted_met=planted, decoy_rate=decoys / items))
            by = {row.check: row for row in rows}
            cells = [str(items), f"{share:g}", f"{decoys:.1f}", _pct(by["decoys"].p_flag["accept_all"]),
                     _pct(by["decoys"].p_flag["random"]), str(planted), _pct(by["planted"].p_flag["accept_all"]),
                     *(_pct(power.p_flag_any(rows, b)) for b in power.BEHAVIOURS)]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table())
