"""Schemas of the DHP API."""

from __future__ import annotations

from typing import Any

from ninja import Field, Schema

from corpus.cleaning import INT32_MAX, INT64_MAX
from dhp.services.runs import MAX_SAMPLES
from evaluation.runs.launch import MAX_PARALLEL


class DhpRunIn(Schema):
    dataset: str
    evaluator: str = Field(description="An Ollama model, 'ensemble' or 'distilled:MODEL'.")
    metrics: list[str]
    kinds: list[str] | None = Field(None, description="Perturbation kinds (default: every rule-based kind).")
    samples: int = Field(5, ge=1, le=MAX_SAMPLES)
    survey: int | None = Field(None, ge=1, le=INT64_MAX)
    seed: int = Field(0, ge=0, le=INT32_MAX)
    ollama_url: str | None = None
    parallel: int | None = Field(None, ge=1, le=MAX_PARALLEL)
    preset: str | None = Field(None, description="Ensemble preset (default: ENSEMBLE_PRESET).")


class DhpRunOut(Schema):
    id: int
    dataset: str
    evaluator: str
    metrics: list[str]
    kinds: list[str]
    samples: int
    seed: int
    status: str
    phase: str = Field(description="The run's stage: perturbing, scoring or statistics (empty before it starts).")
    message: str
    notes: list[str]
    done_steps: int
    total_steps: int
    llm_calls: int
    cache_hits: int
    weights_version: int | None
    survey: int | None
    perturbations: list[dict[str, Any]] = Field(
        description="Per perturbation: every metric's test (statistic, p, method), p_hmp, p_hmp_asym, p_hmp_ew, "
                    "p_hmp_ew_asym, D, D_ew."
    )
    summary: dict[str, float | None]


class SurveyIssueOut(Schema):
    issue: str
    title: str
    counts: dict[str, int]
    shares: dict[str, float]


class SurveyResultsOut(Schema):
    id: int
    task: str
    status: str
    metrics: list[str]
    n_experts: int
    n_invited: int
    alpha: float | None
    issues: list[SurveyIssueOut]
    weight_versions: list[int]


class ErrorOut(Schema):
    detail: str
