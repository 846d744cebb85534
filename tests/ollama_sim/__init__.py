"""A simulated Ollama server for tests and benchmarks (the product never imports it)."""

from __future__ import annotations

from .answers import default_reply, judged_text
from .config import FaultRule, ReplyRule, SimConfig, SimRequest, digest_for, normalize_name
from .process import SimProcess
from .server import OllamaSim
from .stats import CallRecord, SimStats

__all__ = [
    "CallRecord",
    "FaultRule",
    "OllamaSim",
    "ReplyRule",
    "SimConfig",
    "SimProcess",
    "SimRequest",
    "SimStats",
    "default_reply",
    "digest_for",
    "judged_text",
    "normalize_name",
]
