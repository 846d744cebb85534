"""The simulated Ollama speaks what the official client expects and models loads, slots and faults."""

from __future__ import annotations

import contextlib
import json
import threading
import time

import httpx
import ollama
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.ollama_sim import (
    FaultRule,
    OllamaSim,
    ReplyRule,
    SimConfig,
    SimProcess,
    default_reply,
    digest_for,
    judged_text,
)
from tests.ollama_sim.answers import _NUMERIC_SCALE  # the phrase the simulator reads as "give a number"

USER = [{"role": "user", "content": "### Data\nname: Aromi\n### Output\nAromi is a cheap pub in the centre."}]


def _chat(url: str, model: str, content: str = "hello", **kwargs: object) -> ollama.ChatResponse:
    with ollama.Client(host=url, timeout=10) as client:
        return client.chat(model=model, messages=[{"role": "user", "content": content}], **kwargs)


def _run_concurrently(calls: list[tuple[str, str]], url: str) -> float:
    """Run (model, prompt) chats on threads at once; return the wall time."""
    errors: list[BaseException] = []

    def one(model: str, prompt: str) -> None:
        try:
            _chat(url, model, prompt)
        except BaseException as exc:  # noqa: BLE001 - surfaced to the test below
            errors.append(exc)

    threads = [threading.Thread(target=one, args=call) for call in calls]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=20)
    assert not errors, errors
    return time.perf_counter() - started


def test_sim_speaks_official_client_endpoints(sim: OllamaSim) -> None:
    client = ollama.Client(host=sim.url, timeout=10)

    chat = client.chat(model="llama3", messages=USER, options={"temperature": 0, "seed": 7})
    assert chat.done is True and chat.done_reason == "stop"
    assert chat.message.role == "assistant" and "Overall score:" in (chat.message.content or "")
    assert chat.model == "llama3"

    generated = client.generate(model="gemma2:9b", prompt="### Output\nA short text.")
    assert generated.done is True and "Overall score:" in (generated.response or "")

    listing = client.list()
    assert [m.model for m in listing.models] == ["llama3:latest", "gemma2:9b", "qwen2.5:7b"]
    assert listing.models[0].digest == digest_for("llama3")
    assert listing.models[0].details is not None and listing.models[0].details.format == "gguf"

    shown = client.show("llama3")
    assert shown.modelinfo is not None and shown.details is not None
    assert "FROM llama3:latest" in (shown.modelfile or "")

    running = client.ps()
    assert [m.model for m in running.models] == ["gemma2:9b"]  # max_loaded=1: the last one stays

    assert httpx.get(f"{sim.url}/api/version").json() == {"version": sim.config.version, "simulated": True}
    assert httpx.get(sim.url).text == "Ollama is running"
    assert httpx.head(sim.url).status_code == 200
    client.close()


def test_sim_stream_chunks_join_to_the_full_reply(sim: OllamaSim) -> None:
    with ollama.Client(host=sim.url, timeout=10) as client:
        parts = list(client.chat(model="llama3", messages=USER, stream=True))
        whole = client.chat(model="llama3", messages=USER)
    assert [p.done for p in parts] == [False] * (len(parts) - 1) + [True]
    assert "".join(p.message.content or "" for p in parts) == whole.message.content
    assert parts[-1].eval_count == whole.eval_count


def test_sim_client_sends_stream_false_and_options_nested(sim: OllamaSim) -> None:
    _chat(sim.url, "llama3", options={"temperature": 0, "num_ctx": 4096})
    record = sim.stats.log[-1]
    assert record.stream is False
    assert record.options == {"temperature": 0, "num_ctx": 4096}
    assert "temperature" not in record.top_level_keys


def test_sim_streams_when_stream_is_absent(sim: OllamaSim) -> None:
    response = httpx.post(f"{sim.url}/api/generate", json={"model": "llama3", "prompt": "a b c"})
    lines = [json.loads(line) for line in response.text.splitlines()]
    assert response.headers["content-type"] == "application/x-ndjson"
    assert len(lines) > 1 and lines[-1]["done"] is True


def test_sim_missing_model_is_404_like_ollama(sim: OllamaSim) -> None:
    with pytest.raises(ollama.ResponseError) as caught:
        _chat(sim.url, "mistral")
    assert caught.value.status_code == 404
    assert caught.value.error == 'model "mistral" not found, try pulling it first'
    with pytest.raises(ollama.ResponseError) as shown:
        ollama.Client(host=sim.url).show("mistral")
    assert shown.value.status_code == 404
    assert sim.stats.log[0].status == "not_found"


def test_sim_token_counts_and_durations(sim: OllamaSim) -> None:
    sim.configure(call_time=0.05, swap_cost=0.05)
    first = _chat(sim.url, "llama3", "one two  three\nfour")
    second = _chat(sim.url, "llama3", "one two")
    assert first.prompt_eval_count == 4 and second.prompt_eval_count == 2
    assert first.eval_count == len((first.message.content or "").split())
    assert first.load_duration is not None and first.load_duration >= 50_000_000
    assert second.load_duration == 0
    for response in (first, second):
        assert response.prompt_eval_duration is not None and response.eval_duration is not None
        generation = response.prompt_eval_duration + response.eval_duration
        assert generation >= 50_000_000
        assert response.total_duration is not None
        assert response.total_duration >= generation + (response.load_duration or 0)


def test_sim_alternating_models_pay_a_swap_each_time(sim: OllamaSim) -> None:
    sim.configure(swap_cost=0.01)
    for model in ["llama3", "gemma2:9b", "llama3", "gemma2:9b"]:
        _chat(sim.url, model)
    assert sim.stats.loads == 4
    assert sim.stats.evictions == 3

    sim.unload_all()
    sim.reset_stats()
    for model in ["llama3", "llama3", "gemma2:9b", "gemma2:9b"]:
        _chat(sim.url, model)
    stats = sim.stats
    assert stats.loads == 2
    assert stats.load_order == ["llama3:latest", "gemma2:9b"]
    assert [r.loaded for r in stats.log] == [True, False, True, False]


def test_sim_two_places_keep_two_models(sim: OllamaSim) -> None:
    sim.configure(max_loaded=2)
    for model in ["llama3", "gemma2:9b", "llama3", "gemma2:9b", "qwen2.5:7b", "llama3"]:
        _chat(sim.url, model)
    # qwen evicts the least recently used (llama3), which then has to come back.
    assert sim.stats.load_order == ["llama3:latest", "gemma2:9b", "qwen2.5:7b", "llama3:latest"]


def test_sim_parallel_slots_cap_concurrency(sim: OllamaSim) -> None:
    sim.configure(parallel=2, call_time=0.2)
    _chat(sim.url, "llama3", "warm up")  # load outside the measured part
    sim.reset_stats()
    wall = _run_concurrently([("llama3", f"prompt {i}") for i in range(6)], sim.url)
    assert sim.stats.peak_concurrency == 2
    assert sim.stats.peak_per_model == {"llama3:latest": 2}
    assert wall >= 0.6


def test_sim_does_not_evict_a_model_with_requests_in_flight(sim: OllamaSim) -> None:
    sim.configure(call_time=0.2, parallel=4)
    _run_concurrently([("llama3", "a"), ("gemma2:9b", "b")], sim.url)
    first, second = sorted(sim.stats.log, key=lambda r: r.finished)
    assert second.finished - first.finished >= 0.19  # the second model waited for the first to idle
    assert sim.stats.peak_concurrency == 1
    assert sim.stats.loads == 2


def test_sim_changing_num_ctx_reloads_the_model(sim: OllamaSim) -> None:
    _chat(sim.url, "llama3", options={"num_ctx": 2048})
    _chat(sim.url, "llama3", options={"num_ctx": 2048})
    _chat(sim.url, "llama3", options={"num_ctx": 8192})
    assert sim.stats.loads == 2


def test_sim_keep_alive_zero_unloads(sim: OllamaSim) -> None:
    _chat(sim.url, "llama3", keep_alive=0)
    # The slot is released just after the answer is written, as in Ollama: allow that moment.
    deadline = time.monotonic() + 2
    while sim.loaded_models() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert sim.loaded_models() == []
    _chat(sim.url, "llama3")
    assert sim.loaded_models() == ["llama3:latest"]


def test_sim_scripted_rules_and_answer_function(sim: OllamaSim) -> None:
    sim.configure(
        rules=[
            {"model": "gemma2:9b", "reply": "gemma says hi"},
            {"contains": "SUPERVISOR", "reply": "merged"},
        ]
    )
    assert _chat(sim.url, "gemma2:9b", "anything").message.content == "gemma says hi"
    assert _chat(sim.url, "llama3", "You are the SUPERVISOR").message.content == "merged"
    sim.configure(answer=lambda request: f"echo {request.options.get('seed')}")
    assert _chat(sim.url, "llama3", "x", options={"seed": 3}).message.content == "echo 3"


def test_sim_default_reply_is_a_deterministic_annotation_of_the_output() -> None:
    prompt = USER[0]["content"]
    reply = default_reply("llama3", prompt)
    assert reply == default_reply("llama3", prompt)
    assert judged_text(prompt) == "Aromi is a cheap pub in the centre."
    locations = [line.removeprefix("Location: ") for line in reply.splitlines() if line.startswith("Location:")]
    assert all(location in "Aromi is a cheap pub in the centre." for location in locations)
    assert "Overall score:" in reply and "Explanation of the score:" in reply
    numeric = default_reply("llama3", prompt + "\nGive a score between 0 and 100.")
    assert numeric.splitlines()[-2].removeprefix("Overall score: ").isdigit()


def test_sim_num_predict_truncates_with_done_reason_length(sim: OllamaSim) -> None:
    response = _chat(sim.url, "llama3", options={"num_predict": 3})
    assert response.done_reason == "length"
    assert response.eval_count == 3


def test_sim_fault_first_k_then_success(sim: OllamaSim) -> None:
    sim.configure(faults=[{"kind": "error", "model": "llama3", "first": 2, "message": "runner crashed"}])
    for _ in range(2):
        with pytest.raises(ollama.ResponseError) as caught:
            _chat(sim.url, "llama3")
        assert caught.value.status_code == 500 and caught.value.error == "runner crashed"
    _chat(sim.url, "gemma2:9b")  # another model is not counted by the rule
    _chat(sim.url, "llama3")
    assert [r.status for r in sim.stats.log] == ["error", "error", "ok", "ok"]
    assert sim.stats.faults_injected == {"error": 2}


def test_sim_fault_drop_closes_the_connection(sim: OllamaSim) -> None:
    sim.configure(faults=[FaultRule(kind="drop", nth=(1,))])
    with pytest.raises(httpx.RemoteProtocolError):
        _chat(sim.url, "llama3")
    assert _chat(sim.url, "llama3").done is True


def test_sim_fault_garbage_slow_and_stream_error(sim: OllamaSim) -> None:
    sim.configure(faults=[FaultRule(kind="garbage", text="@@@"), FaultRule(kind="slow", delay=0.1)])
    started = time.perf_counter()
    assert _chat(sim.url, "llama3").message.content == "@@@"
    assert time.perf_counter() - started >= 0.1

    sim.configure(faults=[FaultRule(kind="stream_error", message="broken pipe in runner")])
    with ollama.Client(host=sim.url, timeout=10) as client:
        stream = client.chat(model="llama3", messages=USER, stream=True)
        with pytest.raises(ollama.ResponseError, match="broken pipe in runner"):
            list(stream)
        with pytest.raises(ollama.ResponseError) as caught:
            client.chat(model="llama3", messages=USER)
    assert caught.value.status_code == 500


def test_sim_fault_rate_is_reproducible_with_a_seed() -> None:
    def pattern() -> list[str]:
        config = SimConfig(models=["llama3"], faults=[FaultRule(kind="error", rate=0.5, seed=42)])
        with OllamaSim(config) as server:
            for _ in range(12):
                with contextlib.suppress(ollama.ResponseError):
                    _chat(server.url, "llama3")
            return [r.status for r in server.stats.log]

    first = pattern()
    assert first == pattern()
    assert 0 < first.count("error") < 12


def test_sim_stats_count_repeated_calls(sim: OllamaSim) -> None:
    _chat(sim.url, "llama3", "same", options={"seed": 1})
    _chat(sim.url, "llama3", "same", options={"seed": 1})
    _chat(sim.url, "llama3", "same", options={"seed": 2})
    stats = sim.stats
    assert stats.requests == 3 and stats.requests_per_model == {"llama3:latest": 3}
    assert stats.repeated_calls() == 1
    sim.reset_stats()
    assert sim.stats.requests == 0 and sim.stats.log == []


def test_sim_config_round_trips_through_json() -> None:
    config = SimConfig(
        models=["llama3"],
        swap_cost=1.5,
        rules=[ReplyRule(reply="x", contains="y")],
        faults=[FaultRule(kind="error", nth=(2, 5))],
    )
    assert SimConfig.from_dict(json.loads(json.dumps(config.to_dict()))) == config
    with pytest.raises(ValueError, match="swap_cots"):
        SimConfig.from_dict({"swap_cots": 1})


def test_sim_process_mode_prints_url_and_serves_control_endpoints() -> None:
    config = SimConfig(models=["llama3"], rules=[ReplyRule(reply="from the process")])
    with SimProcess(config) as proc:
        assert proc.url.startswith("http://127.0.0.1:")
        assert httpx.get(f"{proc.url}/api/version").json() == {"version": config.version, "simulated": True}
        assert _chat(proc.url, "llama3").message.content == "from the process"
        stats = proc.stats()
        assert stats.requests == 1 and stats.loads == 1
        proc.configure(faults=[{"kind": "error", "status": 503}])
        with pytest.raises(ollama.ResponseError) as caught:
            _chat(proc.url, "llama3")
        assert caught.value.status_code == 503
        bad = httpx.post(f"{proc.url}/_sim/config", json={"nonsense": 1})
        assert bad.status_code == 400 and "nonsense" in bad.json()["error"]
        proc.reset()
        assert proc.stats().requests == 0


def test_sim_error_after_a_started_stream_is_an_error_line(sim: OllamaSim) -> None:
    sim.configure(faults=[FaultRule(kind="error", after_call=True, message="runner died")])
    with ollama.Client(host=sim.url, timeout=10) as client:
        with pytest.raises(ollama.ResponseError, match="runner died"):
            list(client.generate(model="llama3", prompt="x y", stream=True))
        with pytest.raises(ollama.ResponseError) as caught:
            client.generate(model="llama3", prompt="x y")
    assert caught.value.status_code == 500


def test_sim_streamed_truncation_matches_the_plain_answer(sim: OllamaSim) -> None:
    with ollama.Client(host=sim.url, timeout=10) as client:
        parts = list(
            client.generate(model="llama3", prompt="### Output\nsome text", stream=True, options={"num_predict": 4})
        )
        plain = client.generate(model="llama3", prompt="### Output\nsome text", options={"num_predict": 4})
    assert "".join(p.response or "" for p in parts) == plain.response
    assert parts[-1].done_reason == plain.done_reason == "length"
    assert len((plain.response or "").split()) == 4


@settings(max_examples=200, deadline=None)
@given(output=st.text(min_size=0, max_size=200), model=st.sampled_from(["llama3", "gemma2:9b"]))
def test_sim_default_reply_locations_come_from_the_output(output: str, model: str) -> None:
    # A text that itself says "0 to 100" reads to the simulator as a prompt asking for a number (tested below).
    assume(not _NUMERIC_SCALE.search(output))
    prompt = f"### Instructions\nJudge it.\n### Output\n{output}\n### Output format:\nError 1: ..."
    text = judged_text(prompt)
    reply = default_reply(model, prompt)
    for line in reply.splitlines():
        if line.startswith("Location: "):
            assert line.removeprefix("Location: ") in text
    label = reply.splitlines()[-2].removeprefix("Overall score: ")
    assert label in {"Unacceptable", "Poor", "Fair", "Good", "Excellent"}
    assert ("Error 1:" in reply) == (label != "Excellent")


def test_sim_default_reply_points_at_words_the_inputs_do_not_have() -> None:
    prompt = "### Data\nname[Aromi] | food[Italian] | area[centre]\n### Output\nAromi serves Italian food in Paris."
    # Every error of every model starts at a word the data lacks ("serves", "food", "Paris"); never at
    # "Aromi" or "Italian", which the data has, nor at the common word "in".
    starts = set()
    for model in ("m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8"):
        for line in default_reply(model, prompt).splitlines():
            if line.startswith("Location: "):
                starts.add(line.removeprefix("Location: ").split()[0])
    assert starts and starts <= {"serves", "food", "Paris"}


def test_sim_supervisor_reply_merges_the_quoted_error_lists() -> None:
    text = "Aromi serves Italian food in Paris."
    prompt = (
        f"### Text\n{text}\n\n### Annotations\nAnnotation set 1:\nError 1:\nLocation: Paris\nExplanation: not in "
        "the data\nSeverity: 2\n\nAnnotation set 2:\nError 1:\nLocation: in Paris\nExplanation: made up\nSeverity: 4\n"
        "Error 2:\nLocation: serves\nExplanation: odd verb\nSeverity: 1\nError 3:\nLocation: Rome\nExplanation: x\n"
        "Severity: 5\n\n### Answer format\nError 1:\nLocation: <a span>\nExplanation: <why>\nSeverity: <1-5>\n"
    )
    reply = default_reply("judge", prompt)
    # "Paris" folds into "in Paris" with the higher severity; "Rome" is not in the text; the format's
    # placeholder is not an error.
    assert reply.splitlines()[:8] == [
        "Error 1:", "Location: in Paris", "Explanation: not in the data", "Severity: 4",
        "Error 2:", "Location: serves", "Explanation: odd verb", "Severity: 1",
    ]
    assert "Overall score: Fair" in reply
    no_errors = prompt.split("### Annotations")[0] + "### Annotations\nAnnotation set 1:\nNo Error\n"
    assert default_reply("judge", no_errors).startswith("No Error\n\nOverall score: Excellent")
