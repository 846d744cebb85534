"""How every analytics figure is printed, on the page, in the downloads and in the report: one function per mark."""

from __future__ import annotations

from typing import Any, Literal

ColumnKind = Literal["text", "int", "pct", "num", "p"]
MIN_UNITS = 10  # a figure over fewer units is marked and never shown as the best
FEW_MARK = "†"
FEW_NOTE = f"{FEW_MARK} computed over fewer than {MIN_UNITS} units (spans, outputs or pairs): read with care."
SIMULATED_MARK = "(simulated)"


def display(value: Any, kind: ColumnKind) -> str:
    """A figure as every screen and report prints it: percentages (0-100) with one decimal, other numbers with
    three, p-values with three significant digits, a missing figure as an em dash."""
    if value is None:
        return "—"
    if kind == "pct":
        return f"{value:.1f}"
    if kind == "num":
        return f"{value:.3f}"
    if kind == "p":
        return f"{value:.3g}"
    return str(value)


def simulated_name(label: str, simulated: bool) -> str:
    """A source's name as people read it: a simulated run's carries the mark."""
    return f"{label} {SIMULATED_MARK}" if simulated else label
