"""Exceptions of the LLM backend; each message says what went wrong and what to do about it."""

from __future__ import annotations

from collections.abc import Sequence


class BackendError(Exception):
    """The LLM backend could not give an answer."""


class BackendUnavailable(BackendError):
    """The server cannot be reached, or kept failing after every retry."""

    def __init__(self, message: str, *, url: str | None = None) -> None:
        super().__init__(message)
        self.url = url


class ModelMissing(BackendError):
    """The server does not have one or more models; `models` lists all of them."""

    def __init__(self, models: Sequence[str], *, url: str | None = None) -> None:
        self.models = list(models)
        self.url = url
        where = f"Ollama at {url}" if url else "Ollama"
        commands = "\n".join(f"  ollama pull {model}" for model in self.models)
        super().__init__(
            f"{where} does not have {len(self.models)} model(s): {', '.join(self.models)}. "
            f"Pull them on the Ollama machine with:\n{commands}"
        )

    @property
    def commands(self) -> list[str]:
        return [f"ollama pull {model}" for model in self.models]
