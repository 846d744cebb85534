"""The LLM servers of a job: how an address names its kind, the client of each kind, and the model check.

A job may use several servers of two kinds: `http://host:11434` (or https) is an Ollama server,
`openai+http://host:8000` (or openai+https) an OpenAI-compatible one (vLLM, the llama.cpp server, TGI).
The prefix keeps a list of servers one plain string (a CLI flag, an environment variable), and the
address without it is what the client talks to.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import urlsplit

from corpus import cleaning

from .base import LLMBackend
from .errors import ModelMissing, ServerListError
from .ollama_backend import OllamaBackend
from .openai_backend import OpenAICompatBackend
from .policy import RetryPolicy

OPENAI_PREFIX = "openai+"
FORMS = "http://HOST:PORT (Ollama) or openai+http://HOST:PORT (an OpenAI-compatible server)"


class ServerKind(StrEnum):
    OLLAMA = "ollama"
    OPENAI = "openai"


@dataclass(frozen=True)
class Server:
    kind: ServerKind
    url: str  # the http(s) address the client talks to

    @property
    def name(self) -> str:
        """The address as a job lists it: the URL, with the `openai+` prefix for OpenAI-compatible servers."""
        return f"{OPENAI_PREFIX}{self.url}" if self.kind is ServerKind.OPENAI else self.url


def parse_server(text: str, *, default: ServerKind = ServerKind.OLLAMA) -> Server:
    """Read one address; raise ServerListError naming it when it is neither form. An address without the
    `openai+` prefix is of kind `default` (GPTScore's server can only be OpenAI-compatible)."""
    raw = text.strip()
    if problem := cleaning.identifier_problem(raw):
        raise ServerListError(f"server {ascii(raw)} {problem}")
    kind, rest = default, raw
    if raw.lower().startswith(OPENAI_PREFIX):
        kind, rest = ServerKind.OPENAI, raw[len(OPENAI_PREFIX):]
    parts = urlsplit(rest)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ServerListError(f"server {raw!r} is not an address of the form {FORMS}")
    try:
        parts.port  # noqa: B018 - a port that is not a number raises here
    except ValueError:
        raise ServerListError(f"server {raw!r} has a bad port; the forms are {FORMS}") from None
    return Server(kind, rest.rstrip("/"))


def parse_servers(value: str | Sequence[str]) -> list[Server]:
    """Read a list of servers: a string of comma- (or whitespace-) separated addresses, or a list of them.

    Raise ServerListError when the list is empty, an entry is bad, or a server is listed twice."""
    entries = [value] if isinstance(value, str) else list(value)
    texts = [piece for entry in entries for piece in re.split(r"[,\s]+", entry or "") if piece]
    if not texts:
        raise ServerListError(f"no LLM server given; list one or more as {FORMS}, separated by commas")
    servers = [parse_server(text) for text in texts]
    seen: set[str] = set()
    for server in servers:
        if server.name in seen:
            raise ServerListError(f"server {server.name} is listed twice")
        seen.add(server.name)
    return servers


def open_backend(
    server: Server, *, timeout: float, idle_timeout: float | None = None, keep_alive: str | int | None = None,
    policy: RetryPolicy | None = None,
) -> LLMBackend:
    """A client of `server` under the retry policy (the connection opens on first use); `timeout` is
    the wait for an answer's first byte, `idle_timeout` the wait between its chunks."""
    if server.kind is ServerKind.OPENAI:
        return OpenAICompatBackend(server.url, timeout=timeout, idle_timeout=idle_timeout, policy=policy)
    return OllamaBackend(server.url, timeout=timeout, idle_timeout=idle_timeout, keep_alive=keep_alive, policy=policy)


def servers_kind(servers: Sequence[Server]) -> str:
    """The kind messages about these servers speak of: OpenAI-compatible only when all of them are."""
    if servers and all(server.kind is ServerKind.OPENAI for server in servers):
        return ServerKind.OPENAI.value
    return ServerKind.OLLAMA.value


def models_on(backend: LLMBackend, models: Sequence[str]) -> dict[str, str]:
    """Return model -> digest for those of `models` the server has (the others are simply absent).

    An unreachable server raises BackendUnavailable, as `check` does."""
    wanted = list(dict.fromkeys(models))
    try:
        return backend.check(wanted)
    except ModelMissing as missing:
        present = [model for model in wanted if model not in missing.models]
        return backend.check(present) if present else {}
