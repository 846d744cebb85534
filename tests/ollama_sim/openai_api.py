"""The OpenAI-compatible dialect of the simulator: /v1/models, /v1/chat/completions, /v1/completions.

vLLM, the llama.cpp server and TGI speak this protocol. The same models, scheduler, replies and
faults serve both dialects; only the request and response shapes differ. `/v1/completions` with
`echo: true` and `logprobs` returns one log-probability per token of the prompt (the first is null,
as in vLLM), which is what GPTScore needs and what Ollama cannot give. Tokens are whitespace-led
words; their log-probabilities come from `SimConfig.logprob` (in-process) or a deterministic hash.
Streaming is not simulated in this dialect: a request with `stream: true` gets HTTP 400.
"""

from __future__ import annotations

import hashlib
import re
import time
import uuid
from collections.abc import Mapping
from typing import Any

from .config import SimConfig

CHAT = "openai-chat"
COMPLETION = "openai-completion"
_TOKEN = re.compile(r"\s*\S+|\s+")
# Request fields that become Ollama-style options, so the shared generation path can honour them.
_OPTION_FIELDS = {"temperature": "temperature", "top_p": "top_p", "seed": "seed", "stop": "stop"}


class BadRequest(ValueError):
    """The request body is not something an OpenAI-compatible server would accept."""


def is_openai(endpoint: str) -> bool:
    return endpoint in (CHAT, COMPLETION)


def tokens(text: str) -> list[str]:
    """Split text into tokens that join back to it: each token is a word with the whitespace before it."""
    return _TOKEN.findall(text)


def hashed_logprob(context: str, token: str) -> float:
    """Return a deterministic log-probability in [-6, -0.5) for `token` after `context`."""
    digest = hashlib.sha256(f"{context[-200:]}\x00{token}".encode()).digest()
    return -0.5 - 5.5 * int.from_bytes(digest[:4], "big") / 2**32


def options_of(body: Mapping[str, Any]) -> dict[str, Any]:
    options = {ours: body[theirs] for theirs, ours in _OPTION_FIELDS.items() if body.get(theirs) is not None}
    max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
    if max_tokens is not None:
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 0:
            raise BadRequest("max_tokens must be a non-negative integer")
        options["num_predict"] = max_tokens
    return options


def parse(endpoint: str, body: Mapping[str, Any]) -> tuple[str, tuple[Mapping[str, Any], ...], str | None]:
    """Return (prompt, messages, system) of a chat or completion request, or raise BadRequest."""
    if body.get("stream"):
        raise BadRequest("streaming is not simulated on the OpenAI-compatible endpoints")
    if endpoint == CHAT:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise BadRequest("messages must be a non-empty list")
        kept = tuple(m for m in messages if isinstance(m, dict))
        return "\n".join(str(m.get("content") or "") for m in kept), kept, None
    prompt = body.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], str):
        prompt = prompt[0]
    if not isinstance(prompt, str):
        raise BadRequest("prompt must be a string (a batch of prompts is not simulated)")
    logprobs = body.get("logprobs")
    if logprobs is not None and (not isinstance(logprobs, int) or isinstance(logprobs, bool) or logprobs < 0):
        raise BadRequest("logprobs must be a non-negative integer")
    return prompt, (), None


def error_body(status: int, message: str) -> dict[str, Any]:
    kind = "invalid_request_error" if status < 500 else "server_error"
    return {"error": {"message": message, "type": kind, "param": None, "code": status}}


def models(config: SimConfig) -> dict[str, Any]:
    entries = [{"id": name, "object": "model", "created": 1_717_200_000, "owned_by": "sim"} for name in config.models]
    if config.profile == "vllm":  # vLLM states each model's context (serving_models.py `max_model_len`)
        for entry in entries:
            entry["max_model_len"] = config.context_length
    return {"object": "list", "data": entries}


def _logprob(config: SimConfig, context: str, token: str) -> float:
    if config.logprob is not None:
        return float(config.logprob(context, token))
    return hashed_logprob(context, token)


def echo_refusal(config: SimConfig, endpoint: str, body: Mapping[str, Any]) -> str | None:
    """Return the error message of a server that rejects `echo` (llama.cpp), else None."""
    if endpoint == COMPLETION and body.get("echo") and config.echo == "rejected":
        return "Only no echo is supported"  # llama.cpp tools/server/server-common.cpp
    return None


def _logprobs(config: SimConfig, echoed: str, generated: str, want: int | None) -> dict[str, Any]:
    """Token log-probabilities of the echoed prompt (first one null) and of the generated text; with
    `bos_text`, the echo starts with the BOS token's text and the offsets count it, as vLLM's do."""
    bos = [config.bos_text] if echoed and config.bos_text else []
    toks = bos + tokens(echoed) + tokens(generated)
    text = "".join(bos) + echoed + generated
    offsets: list[int] = []
    values: list[float | None] = []
    position = 0
    shifted = config.echo == "shifted"
    for index, token in enumerate(toks):
        offsets.append(position)
        first_of_prompt = index == 0 and bool(echoed)
        seen = text[: position + len(token)] if shifted else text[:position]  # shifted: the token sees itself
        values.append(None if first_of_prompt else _logprob(config, seen, token))
        position += len(token)
    top = [None if value is None else {token: value} for token, value in zip(toks, values, strict=True)]
    if shifted:  # the likeliest token listed at each position is the one that follows it
        top = [t if t is None or i + 1 >= len(toks) else {toks[i + 1]: -0.05, **t} for i, t in enumerate(top)]
    return {"tokens": toks, "token_logprobs": values, "top_logprobs": top if want else None, "text_offset": offsets}


def payload(
    endpoint: str,
    config: SimConfig,
    body: Mapping[str, Any],
    *,
    model: str,
    prompt: str,
    reply: str,
    finish_reason: str,
    reasoning: str = "",
    cached: int = 0,
) -> dict[str, Any]:
    """Return the response object of a finished request. `usage.prompt_tokens` is always the whole prompt; the
    cached part is `usage.prompt_tokens_details.cached_tokens` on vLLM with `count` full (as with
    `--enable-prompt-tokens-details`, PR #18149) and `timings.cache_n` on llama.cpp (which always sends
    `timings`)."""
    prompt_tokens, completion_tokens = len(tokens(prompt)), len(tokens(reply))
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if config.profile == "vllm" and config.count == "full":
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    common: dict[str, Any] = {"created": int(time.time()), "model": model, "usage": usage}
    if config.profile == "llamacpp":
        common["timings"] = {"cache_n": cached, "prompt_n": prompt_tokens - cached}
    if endpoint == CHAT:
        message = {"role": "assistant", "content": reply}
        if reasoning:  # llama.cpp --reasoning-format auto (vLLM with a parser: `reasoning`)
            message["reasoning_content"] = reasoning
        choice = {"index": 0, "message": message, "finish_reason": finish_reason}
        return {"id": f"chatcmpl-{uuid.uuid4().hex[:12]}", "object": "chat.completion", "choices": [choice], **common}
    echo = bool(body.get("echo")) and config.echo in ("yes", "shifted")
    text = (prompt + reply) if echo else reply
    choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": finish_reason}
    if body.get("logprobs") is not None and config.echo != "ignored":
        choice["logprobs"] = _logprobs(config, prompt if echo else "", reply, body.get("logprobs"))
    return {"id": f"cmpl-{uuid.uuid4().hex[:12]}", "object": "text_completion", "choices": [choice], **common}
