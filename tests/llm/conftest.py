"""Fixtures for LLM-backend tests: a simulated Ollama per test and a port nobody listens on."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from tests.ollama_sim import OllamaSim, SimConfig

MODELS = ["llama3", "gemma2:9b", "qwen2.5:7b"]


@pytest.fixture
def sim() -> Iterator[OllamaSim]:
    with OllamaSim(SimConfig(models=MODELS)) as server:
        yield server


@pytest.fixture
def closed_port_url() -> str:
    """Return a loopback URL whose port was just free (connections are refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture(autouse=True)
def _fast_hashing() -> None:
    """Shadow tests/conftest.py's Django-only autouse fixture: these tests need no Django settings."""
