"""The single domain exception raised by the Django-free evaluation engine."""

from __future__ import annotations


class EngineError(Exception):
    """A caller asked the engine for something it cannot do (unknown aspect, bad template, ...)."""
