"""LLM backends for evaluator runs (no Django imports)."""

from __future__ import annotations

from .errors import BackendError, BackendUnavailable, ModelMissing
from .ollama_backend import LLMResult, OllamaBackend, resolve_model, tag_matches

__all__ = [
    "BackendError",
    "BackendUnavailable",
    "LLMResult",
    "ModelMissing",
    "OllamaBackend",
    "resolve_model",
    "tag_matches",
]
