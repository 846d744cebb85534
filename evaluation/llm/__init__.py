"""LLM backends for evaluator runs: Ollama and OpenAI-compatible servers (no Django imports)."""

from __future__ import annotations

from .base import LLMBackend, LLMResult
from .errors import BackendError, BackendUnavailable, ModelMissing
from .ollama_backend import OllamaBackend, resolve_model, tag_matches
from .openai_backend import OpenAICompatBackend, TextLogprobs

__all__ = [
    "BackendError",
    "BackendUnavailable",
    "LLMBackend",
    "LLMResult",
    "ModelMissing",
    "OllamaBackend",
    "OpenAICompatBackend",
    "TextLogprobs",
    "resolve_model",
    "tag_matches",
]
