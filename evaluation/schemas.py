"""Ninja schemas of the evaluation API."""

from __future__ import annotations

from typing import Any

from ninja import Field, Schema

from evaluation.engine.presets import PRESETS
from evaluation.runs.modes import DEFAULT_MODE, modes_help


class RunOut(Schema):
    id: int
    label: str
    evaluator: str
    dataset: str
    aspect: str
    status: str
    done_calls: int
    total_calls: int


class RunIn(Schema):
    dataset: str
    aspect: str
    annotators: list[str] | None = None
    supervisor: str | None = None
    ollama_url: str | list[str] | None = Field(
        None, description="LLM server(s): a list, or one comma-separated string, of http://HOST:PORT (Ollama) or "
        "openai+http://HOST:PORT (OpenAI-compatible); default OLLAMA_URLS",
    )
    parallel: int | None = None
    outlier_rule: str = "leave_one_out"
    mode: str = Field(DEFAULT_MODE.value, description=modes_help())
    preset: str | None = Field(
        None, description=f"Where models not given come from: {', '.join(PRESETS)} (default: ENSEMBLE_PRESET)."
    )
    answer_format: str | None = Field(None, description="text, or json: a schema-constrained JSON answer (Ollama "
                                      "`format`, OpenAI-compatible `response_format`; a departure from the paper). "
                                      "Default (null): the preset's (text, except the `tiny` preset's json); text "
                                      "for models given by name.")
    repair: bool = Field(True, description="Send an unreadable answer back once to be restated in our format.")


class ModelProgressOut(Schema):
    model: str
    done: int
    total: int
    failed: int
    percent: float


class RunProgressOut(Schema):
    id: int
    label: str
    status: str
    message: str
    done: int
    total: int
    percent: float
    cache_hits: int
    failed: int
    llm_calls: int
    elapsed_seconds: float
    eta_seconds: float | None
    calls_per_second: float
    tokens_per_second: float
    prompt_tokens: dict[str, int] = Field(
        description="Prompt tokens of the run's own calls: sent (as the servers counted them), evaluated, and "
        "cached (taken from the servers' prompt caches, as they reported it)",
    )
    completion_tokens: int
    models: list[ModelProgressOut]
    failures: list[dict[str, Any]]
    problems: dict[str, int] = Field(
        description="(item, model) pairs whose prompt was too long to send (prompt_too_long) or whose answer "
        "was cut at the answer budget (answer_cut); `truncation_unchecked: <server>`: answers of a server that "
        "cuts over-long prompts silently and whose counts cannot tell a cut (once per server)",
    )
    finished: bool
    servers: list[str]
    placement: dict[str, Any]


class ErrorOut(Schema):
    detail: str
