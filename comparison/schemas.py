"""Ninja schemas of the comparison API."""

from __future__ import annotations

from typing import Any

from ninja import Field, Schema

from comparison.engine.hf_plan import Precision
from comparison.engine.metrics import metric_names_help


class ComparisonIn(Schema):
    dataset: str
    metrics: list[str] = Field(..., description=metric_names_help())
    aspects: list[str] | None = None
    ollama_url: str | None = None
    gptscore_url: str | None = None
    precision: Precision | None = Field(
        None, description="What gptscore-hf:MODEL computes in (default: GPTSCORE_HF_PRECISION).")


class ComparisonOut(Schema):
    id: int
    dataset: str
    status: str
    metrics: list[str]
    aspects: list[str]
    done: int
    total: int
    percent: int
    llm_calls: int
    message: str
    per_metric: list[dict[str, Any]]
    runs: dict[str, Any]
    finished: bool


class ErrorOut(Schema):
    detail: str
