"""How each real server treats long prompts, answer budgets and thinking: the simulator's `--profile`.

Every rule cites its source as ../shared/REAL_SERVERS.md does (server source at the versions listed there).
`""` (no profile) keeps the simulator as it was: no context limit, no thinking, answers as scripted.

- ollama (>= 0.30.9): a prompt longer than the context is cut silently, keeping the first 4 tokens and the
  last num_ctx/2 (`llm/llama_server.go:279-331`); with `"truncate": false` it is refused, 400 "the input
  length exceeds the context length" (PR #12519). Thinking in `message.thinking` (>= 0.12.4, PR #12533).
  num_ctx is capped at the trained length (`llm/server.go:112-115`).
- ollama-0.6: cut to num_ctx, first 4 tokens and the tail (`runner/ollamarunner/runner.go@v0.12.0:126-160`);
  `truncate` unknown; thinking inline as `<think>...</think>` (< 0.9.0).
- vllm: 400 "This model's maximum context length is N tokens..." when prompt + max_tokens > max_model_len;
  without a reasoning parser the content is `trace</think>answer`, no opening tag (vllm#13125);
  `max_model_len` in /v1/models.
- llamacpp: 400 `exceed_context_size_error` (PR #15780); `reasoning_content` (`--reasoning-format auto`);
  `n_ctx` in /props (tools/server/README.md).
- tgi2: 422 "inputs tokens + max_new_tokens must be <= N" (`validation.rs`); thinking inline (no parser);
  max_tokens defaults to 100 before v3.0.0 (`lib.rs@8c3669b2^:940`).
- every profile: `oom_models` answer 500 "model requires more system memory" (Ollama `routes.go:3107-3120`).
"""

from __future__ import annotations

from dataclasses import dataclass

PROFILES = ("", "ollama", "ollama-0.6", "vllm", "llamacpp", "tgi2")
NUM_KEEP = 4  # Ollama's default num_keep: the head it keeps when it cuts a prompt


@dataclass(frozen=True)
class Refusal:
    status: int
    message: str


def is_ollama(profile: str) -> bool:
    return profile in ("ollama", "ollama-0.6")


def effective_ctx(profile: str, num_ctx: int, context_length: int) -> int:
    """The context Ollama runs with: the request's num_ctx, capped at the trained length."""
    return min(num_ctx, context_length) if is_ollama(profile) else context_length


def refusal(profile: str, *, prompt_tokens: int, max_tokens: int | None, ctx: int, truncate: object) -> Refusal | None:
    """The error a server answers a prompt that does not fit, or None (it fits, or the server cuts it)."""
    if profile == "ollama" and prompt_tokens > ctx and truncate is False:
        return Refusal(400, "the input length exceeds the context length")
    if profile in ("vllm", "llamacpp", "tgi2") and prompt_tokens + (max_tokens or 0) > ctx:
        if profile == "vllm":
            return Refusal(400, f"This model's maximum context length is {ctx} tokens. However, you requested "
                                f"{prompt_tokens + (max_tokens or 0)} tokens ({prompt_tokens} in the messages, "
                                f"{max_tokens or 0} in the completion).")
        if profile == "llamacpp":
            return Refusal(400, "exceed_context_size_error: the request exceeds the available context size "
                                f"({prompt_tokens} tokens, n_ctx {ctx})")
        return Refusal(422, f"Input validation error: `inputs` tokens + `max_new_tokens` must be <= {ctx}. "
                            f"Given: {prompt_tokens} `inputs` tokens and {max_tokens or 0} `max_new_tokens`")
    return None


def kept_words(profile: str, words: list[str], ctx: int) -> list[str] | None:
    """The words of a prompt Ollama keeps when it is longer than the context (None: not cut)."""
    if not is_ollama(profile) or len(words) <= ctx:
        return None
    tail = ctx // 2 if profile == "ollama" else ctx - NUM_KEEP
    return words[:NUM_KEEP] + words[-tail:]


def default_max_tokens(profile: str) -> int | None:
    return 100 if profile == "tgi2" else None


def thinking_shape(profile: str, trace: str, answer: str) -> tuple[str, str]:
    """(content, separate trace) of a thinking model's answer, as this server returns it."""
    if profile == "ollama":
        return answer, trace
    if profile == "llamacpp":
        return answer, trace
    if profile == "vllm":
        return f"{trace}\n</think>\n\n{answer}", ""
    return f"<think>\n{trace}\n</think>\n\n{answer}", ""
