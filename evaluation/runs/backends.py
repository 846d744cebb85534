"""The one way a job opens an LLM server: from its address, through the allowlist, as the client of its kind.

Evaluator runs, DHP scoring and perturbation, and GPTScore all open their backends here, so no caller
can take an OpenAI-compatible address for an Ollama one, or reach a server an admin did not list.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from urllib.parse import urlsplit

from django.conf import settings

from evaluation.engine.presets import SMALL_MODEL_LABEL
from evaluation.llm.base import LLMBackend
from evaluation.llm.errors import ServerNotAllowed
from evaluation.llm.policy import RetryPolicy
from evaluation.llm.servers import Server, ServerKind, ServerListError, open_backend, parse_server, parse_servers


def allowed_server_names() -> set[str]:
    """The servers a job may use: OLLAMA_URL, OLLAMA_URLS and GPTSCORE_URL (an OpenAI-compatible one). The app
    fetches a job's servers itself, so a free-form address would let a user make it probe the network behind it."""
    names: set[str] = set()
    for entry in [settings.OLLAMA_URL, *settings.OLLAMA_URLS]:
        try:
            names.update(server.name for server in parse_servers(entry))
        except ServerListError:
            continue  # a bad entry in the settings allows nothing
    if settings.GPTSCORE_URL:
        with contextlib.suppress(ServerListError):
            names.add(parse_server(settings.GPTSCORE_URL, default=ServerKind.OPENAI).name)
    names.update(_simulator_names())
    names.update(_small_model_names())
    return names


SIMULATOR_LABEL = "Simulated server (no model)"


def _names(value: str) -> set[str]:
    if not value:
        return set()
    try:
        return {server.name for server in parse_servers(value)}
    except ServerListError:
        return set()


def _simulator_names() -> set[str]:
    return _names(settings.SIMULATOR_URL)


def _small_model_names() -> set[str]:
    return _names(settings.SMALL_MODEL_URL)


def server_choices() -> list[tuple[str, str]]:
    """The allowed servers as form choices: real ones by address, then the small real model and the simulator
    under their plain names (what a researcher without a GPU looks for)."""
    simulated = _simulator_names()
    small = _small_model_names() - simulated
    real = sorted(allowed_server_names() - simulated - small)
    return ([(name, name) for name in real] + [(name, f"{SMALL_MODEL_LABEL}: {name}") for name in sorted(small)]
            + [(name, f"{SIMULATOR_LABEL}: {name}") for name in sorted(simulated)])


def server_allowed(server: Server) -> bool:
    if settings.LLM_ALLOW_LOOPBACK and urlsplit(server.url).hostname in ("127.0.0.1", "localhost", "::1"):
        return True
    return server.name in allowed_server_names()


def refused(servers: Sequence[Server]) -> str:
    """'' when every server is allowed, else the message naming those that are not."""
    names = [server.name for server in servers if not server_allowed(server)]
    if not names:
        return ""
    shown = ", ".join(name[:200] for name in names)
    allowed = ", ".join(sorted(allowed_server_names()))
    return (f"{shown}: not an allowed LLM server; allowed: {allowed} (an admin adds servers with "
            "the OLLAMA_URLS environment variable)")


def retry_policy() -> RetryPolicy:
    """The retry policy every LLM job uses: the policy's defaults with the settings' overrides (LLM_RETRY)."""
    return RetryPolicy(**settings.LLM_RETRY)


def connect(
    address: str | Server, *, default: ServerKind = ServerKind.OLLAMA, timeout: float | None = None,
    keep_alive: str | int | None = None, policy: RetryPolicy | None = None,
) -> LLMBackend:
    """The client of one server named by `address` (`openai+` prefix or `default` kind) under `policy` (default
    the settings'); raise ServerListError for a malformed address and ServerNotAllowed for one outside the
    allowlist."""
    server = address if isinstance(address, Server) else parse_server(address, default=default)
    why = refused([server])
    if why:
        raise ServerNotAllowed(why)
    return open_backend(
        server, timeout=settings.LLM_LOAD_TIMEOUT if timeout is None else timeout,
        idle_timeout=settings.LLM_IDLE_TIMEOUT,
        keep_alive=settings.OLLAMA_KEEP_ALIVE if keep_alive is None else keep_alive,
        policy=policy or retry_policy(),
    )


# Where a server's number of requests at once comes from, as the run page says it.
SLOTS_SETTING = "LLM_SERVER_SLOTS"
SLOTS_SMALL_MODEL = "llama-cpp-python's server answers one request at a time (under a lock)"
SLOTS_PROPS = "the server's /props (total_slots)"
SLOTS_ASKED = "the run's Parallel (the server does not say how many it serves at once; LLM_SERVER_SLOTS can)"


def declared_slots() -> dict[str, int]:
    """Server name -> requests it serves at once, from LLM_SERVER_SLOTS (`ADDRESS=N` entries; a bad entry
    declares nothing, as a bad entry of OLLAMA_URLS allows nothing)."""
    found: dict[str, int] = {}
    for entry in settings.LLM_SERVER_SLOTS:
        address, _, number = entry.rpartition("=")
        try:
            server = parse_server(address)
        except ServerListError:
            continue
        if number.isascii() and number.isdigit() and 1 <= int(number) <= 1024:
            found[server.name] = int(number)
    return found


def server_parallel(server: Server, backend: LLMBackend, asked: int) -> tuple[int, str]:
    """How many requests a run keeps in flight on `server` (never more than the server serves at once), and
    where that number comes from: the setting, the small model's server, the server's own report, or the run.

    More requests than slots only queue on the server: the run's expected time, computed for `asked` at
    once, would then be off by as much (a server serving one at a time takes four times longer than four)."""
    declared = declared_slots()
    if server.name in declared:
        slots, source = declared[server.name], SLOTS_SETTING
    elif server.name in _small_model_names():
        slots, source = 1, SLOTS_SMALL_MODEL
    else:
        ask = getattr(backend, "total_slots", None)
        slots, source = (ask() if ask is not None else None), SLOTS_PROPS
    if slots is None:
        return asked, SLOTS_ASKED
    return min(asked, slots), f"{slots} at once: {source}"
