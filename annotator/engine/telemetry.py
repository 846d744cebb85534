"""Telemetry of expert work, Django-free: milliseconds to a verdict and active time with idle gaps capped."""

from __future__ import annotations

import math

from errors import UserError


class TelemetryError(UserError):
    """A telemetry value the page sent that is no number (422, from the page and the API alike)."""


# ---- telemetry ---------------------------------------------------------------------------------------------

MAX_MS = 10 * 60 * 1000
"""Time since focus is clamped to 0..10 minutes: a card left open over lunch says nothing about reading."""
IDLE_CAP_SECONDS = 60
"""Pearmut's rule: a pause between two actions counts as active time up to 60 s, never more."""


def clamp_ms(value: object) -> int | None:
    """Return the browser's milliseconds since focus as a whole number in 0..MAX_MS (None when not given)."""
    if value is None or value == "":
        return None
    try:
        number = float(str(value))
    except ValueError:
        raise TelemetryError(f"ms: {value!r} is not a number", field="ms") from None
    if not math.isfinite(number):
        raise TelemetryError(f"ms: {value!r} is not a finite number", field="ms")
    return int(min(max(number, 0), MAX_MS))


def active_increment(gap_seconds: float | None, cap: float = IDLE_CAP_SECONDS) -> float:
    """Active time a new signal adds: the gap since the annotator's previous signal on the item, capped (0 for
    the first one, or when the item was just opened). The definition of active time; annotator.selectors.
    worktime says which signals count."""
    if gap_seconds is None or gap_seconds <= 0:
        return 0.0
    return min(gap_seconds, cap)
