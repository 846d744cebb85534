"""Server lists: the two address forms, bad entries named, one interface over both kinds of server."""

from __future__ import annotations

import pytest

from evaluation.llm import BackendUnavailable, OllamaBackend, OpenAICompatBackend
from evaluation.llm.servers import ServerKind, ServerListError, models_on, open_backend, parse_server, parse_servers
from tests.ollama_sim import OllamaSim


def test_parse_server_reads_both_forms() -> None:
    ollama = parse_server(" http://gpu1:11434/ ")
    assert (ollama.kind, ollama.url, ollama.name) == (ServerKind.OLLAMA, "http://gpu1:11434", "http://gpu1:11434")
    vllm = parse_server("openai+https://gpu2:8000/v1")
    assert (vllm.kind, vllm.url, vllm.name) == (ServerKind.OPENAI, "https://gpu2:8000/v1", "openai+https://gpu2:8000/v1")
    assert parse_server("OPENAI+http://h:1").kind is ServerKind.OPENAI


@pytest.mark.parametrize("bad", ["gpu1:11434", "ftp://gpu1", "http://", "openai+gpu2:8000", "vllm+http://h:1",
                                 "http://h:port"])
def test_parse_server_names_a_bad_entry_and_the_accepted_forms(bad: str) -> None:
    with pytest.raises(ServerListError) as caught:
        parse_server(bad)
    assert repr(bad) in str(caught.value) and "openai+http://HOST:PORT" in str(caught.value)


def test_parse_servers_takes_a_comma_separated_string_or_a_list() -> None:
    names = ["http://a:11434", "openai+http://b:8000", "http://c:11434"]
    assert [s.name for s in parse_servers("http://a:11434, openai+http://b:8000,http://c:11434")] == names
    assert [s.name for s in parse_servers(names)] == names
    assert [s.name for s in parse_servers(["http://a:11434,openai+http://b:8000", "http://c:11434"])] == names


def test_parse_servers_refuses_an_empty_list_and_a_server_listed_twice() -> None:
    with pytest.raises(ServerListError, match="no LLM server given"):
        parse_servers(" , ")
    with pytest.raises(ServerListError, match="http://a:1 is listed twice"):
        parse_servers("http://a:1, http://a:1/")


def test_open_backend_picks_the_client_of_the_servers_kind() -> None:
    assert isinstance(open_backend(parse_server("http://a:1"), timeout=5), OllamaBackend)
    backend = open_backend(parse_server("openai+http://a:1"), timeout=5)
    assert isinstance(backend, OpenAICompatBackend) and backend.base_url == "http://a:1/v1"


def test_models_on_returns_the_models_a_server_has_in_either_dialect(sim: OllamaSim) -> None:
    for address in (sim.url, f"openai+{sim.url}"):
        backend = open_backend(parse_server(address), timeout=5)
        try:
            found = models_on(backend, ["llama3", "ghost:70b", "qwen2.5:7b"])
        finally:
            backend.close()
        assert sorted(found) == ["llama3", "qwen2.5:7b"]
        if address.startswith("openai+"):
            assert set(found.values()) == {""}  # OpenAI-compatible servers publish no digest
        else:
            assert all(len(digest) == 64 for digest in found.values())


def test_models_on_an_unreachable_server_raises(closed_port_url: str) -> None:
    backend = open_backend(parse_server(closed_port_url), timeout=2)
    with pytest.raises(BackendUnavailable, match=closed_port_url):
        models_on(backend, ["llama3"])
