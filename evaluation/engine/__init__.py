"""Django-free core of the OpeNLGauge-style evaluator (prompts, parsing, span alignment, ensembling)."""

from __future__ import annotations

from evaluation.engine.errors import EngineError

__all__ = ["EngineError"]
