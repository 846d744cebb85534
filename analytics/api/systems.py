"""The one schema of a system's line in every protocol's scores (MQM's and ESA's), stats.systems.SystemScore's."""

from __future__ import annotations

from ninja import Field, Schema


class SystemScoreOut(Schema):
    system: str
    score: float = Field(..., description="the mean of the system's ratings' values")
    ratings: int = Field(..., description="its ratings (MQM: rated (segment, rater) pairs)")
    segments: int = Field(..., description="the distinct source segments it was rated on, which the interval and "
                                           "the tests resample")
    ci_low: float | None
    ci_high: float | None
    rank_range: list[int] | None = Field(..., description="[best, worst] rank, 1-based")
