"""Whether an LLM server is the project's simulator (tests/ollama_sim), so its figures can be marked simulated.

The simulator says what it is twice: a `simulated` field in `GET /api/version` and a header on every answer.
Real servers send neither, so a server that cannot be asked counts as real; a run on it is then not marked.
"""

from __future__ import annotations

from collections.abc import Iterable

import httpx

from .servers import Server

SIMULATOR_HEADER = "X-Simulated-Server"
PROBE_SECONDS = 3.0


def server_simulated(server: Server, *, timeout: float = PROBE_SECONDS) -> bool:
    """Return whether `server` answers as the simulator. OpenAI-compatible servers answer 404 on the path,
    but the simulator's header comes with its 404 too."""
    try:
        response = httpx.get(f"{server.url}/api/version", timeout=timeout)
    except (httpx.HTTPError, ValueError):
        return False
    if response.headers.get(SIMULATOR_HEADER):
        return True
    try:
        body = response.json()
    except ValueError:
        return False
    return isinstance(body, dict) and body.get("simulated") is True


def any_simulated(servers: Iterable[Server], *, timeout: float = PROBE_SECONDS) -> bool:
    return any(server_simulated(server, timeout=timeout) for server in servers)
