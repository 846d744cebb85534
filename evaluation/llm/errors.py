"""Exceptions of the LLM backends; each message names the kind of server and says what to do about it."""

from __future__ import annotations

from collections.abc import Sequence

from errors import UserError

OLLAMA = "Ollama"
OPENAI = "the OpenAI-compatible server (vLLM, llama.cpp, TGI)"


class BackendError(Exception):
    """The LLM backend could not give an answer."""


class BackendUnavailable(BackendError):
    """The server cannot be reached, or kept failing after every retry."""

    def __init__(self, message: str, *, url: str | None = None) -> None:
        super().__init__(message)
        self.url = url


class OutOfMemory(BackendError):
    """The server cannot load the model in the memory it has: retrying does not help, the run pauses."""

    def __init__(self, message: str, *, url: str | None = None, model: str = "") -> None:
        super().__init__(message)
        self.url = url
        self.model = model


class PromptTooLong(BackendError):
    """The server refused one prompt as longer than its context: only that (item, model) fails."""

    def __init__(self, message: str, *, tokens: int | None = None, limit: int | None = None) -> None:
        super().__init__(message)
        self.tokens = tokens
        self.limit = limit


class ModelMissing(BackendError):
    """The server does not have one or more models; `models` lists all of them.

    Advice depends on the kind: Ollama pulls models, an OpenAI-compatible server serves the ones it was
    started with."""

    def __init__(self, models: Sequence[str], *, url: str | None = None, kind: str = "ollama") -> None:
        self.models = list(models)
        self.url = url
        self.kind = kind
        listed = f"{len(self.models)} model(s): {', '.join(self.models)}"
        if kind == "ollama":
            where = f"Ollama at {url}" if url else "Ollama"
            commands = "\n".join(f"  ollama pull {model}" for model in self.models)
            text = f"{where} does not have {listed}. Pull them on the Ollama machine with:\n{commands}"
        else:
            where = f"The OpenAI-compatible server at {url}" if url else "The OpenAI-compatible server"
            text = (f"{where} does not serve {listed}. Use a model id exactly as its /v1/models lists it, or "
                    "start the server with that model (vLLM `--served-model-name`, llama.cpp `--alias`).")
        super().__init__(text)

    @property
    def commands(self) -> list[str]:
        return [f"ollama pull {model}" for model in self.models] if self.kind == "ollama" else []


class FormatRefused(BackendError):
    """The server refuses the request's structured-answer field (`response_format`) in the shape sent: another
    shape may pass (llama-cpp-python takes `json_object` with a schema, not `json_schema`); retrying does not."""


class ServerNotAllowed(BackendError):
    """An address outside the allowlist: the app fetches a job's servers itself, so it talks to none other."""


class ServerListError(UserError):
    """A server address that cannot be used; the message names it and shows the accepted forms."""
