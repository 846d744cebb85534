"""Counters and the call log of the simulated Ollama, as plain dataclasses that copy to JSON."""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass, field
from typing import Any


@dataclass
class CallRecord:
    """One chat/generate request as the simulator saw it.

    `status` is ok, not_found, bad_request, error, drop, stream_error, cancelled (the client went
    away before the answer), or running; `loaded` says whether this request paid the model load; times are
    `time.time()` seconds (`finished` stays 0 while running).
    """

    model: str
    endpoint: str
    prompt_sha256: str
    options: dict[str, Any]
    stream: bool
    started: float
    finished: float = 0.0
    status: str = "running"
    loaded: bool = False
    keep_alive: Any = None
    top_level_keys: list[str] = field(default_factory=list)
    answer_format: Any = None  # Ollama's `format` or the OpenAI-compatible `response_format`, as sent
    truncated: bool = False  # the server cut the prompt to its context (as Ollama does without truncate:false)
    prompt_tokens: int = 0
    cached_tokens: int = 0  # of prompt_tokens, those taken from the prompt cache (no prompt time)


@dataclass
class SimStats:
    """What happened since the last reset. `requests` counts chat/generate requests of every outcome."""

    requests: int = 0
    requests_per_model: dict[str, int] = field(default_factory=dict)
    endpoint_hits: dict[str, int] = field(default_factory=dict)
    loads: int = 0
    loads_per_model: dict[str, int] = field(default_factory=dict)
    load_order: list[str] = field(default_factory=list)
    evictions: int = 0
    peak_concurrency: int = 0
    peak_per_model: dict[str, int] = field(default_factory=dict)
    # The most requests of a model the server held at once, in its slots and queued for one: what a client sent.
    peak_held_per_model: dict[str, int] = field(default_factory=dict)
    faults_injected: dict[str, int] = field(default_factory=dict)
    abandoned_loads: int = 0  # loads given up because the requesting client disconnected
    truncated: int = 0  # requests whose prompt the server cut (its log line "truncating input prompt")
    refused_too_long: int = 0
    # Prompt tokens of answered requests: sent whole, evaluated, taken from the prompt cache.
    prompt_tokens_sent: int = 0
    prompt_tokens_evaluated: int = 0
    prompt_tokens_cached: int = 0
    log: list[CallRecord] = field(default_factory=list)

    def copy(self) -> SimStats:
        return SimStats.from_dict(self.to_dict())

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SimStats:
        values = dict(data)
        values["log"] = [CallRecord(**record) for record in data.get("log", [])]
        return cls(**values)

    def ok_calls(self) -> list[CallRecord]:
        return [record for record in self.log if record.status == "ok"]

    def repeated_calls(self) -> int:
        """Return how many successful calls repeated an earlier successful (model, prompt, options)."""
        keys = Counter((r.model, r.endpoint, r.prompt_sha256, repr(sorted(r.options.items()))) for r in self.ok_calls())
        return sum(count - 1 for count in keys.values())
