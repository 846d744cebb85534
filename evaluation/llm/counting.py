"""What a server's prompt-token count means, release by release: whether it covers the whole prompt or only
the tokens evaluated after a prompt-cache hit, and whether the server refuses a prompt longer than its context
(so no count is needed to tell a cut). Pure functions over the numbers a response carries; sources in
../shared/REAL_SERVERS.md ("Prompt caches and what the token counts then mean").

- Ollama since PR #17943 (August 2026): `prompt_eval_count` is the whole prompt and `prompt_eval_cached_count`
  the cached part.
- Ollama 0.30 on llama-server counted only the newly evaluated tokens until PR #16428 (June 2026) added
  `cache_n` back; the 2024 releases left the field out (or sent 0) for a cached prompt (ollama #2068, #3427;
  `prompt_tokens` 0 on the OpenAI-compatible endpoint, #5370). Counts of those releases are never read as the
  whole prompt.
- Ollama >= 0.12.4 refuses an over-long prompt when the request sends `"truncate": false` (PR #12519); older
  releases cut it silently, and the only sign is the count: about `num_ctx` (cut to the context, <= 0.29) or
  `num_keep + num_ctx/2` (the context-shift limit of >= 0.30.9, `llm/llama_server.go:279-331`).
- OpenAI-compatible servers (vLLM, llama.cpp, TGI) refuse with 400/422 and count the whole prompt in
  `usage.prompt_tokens`; the cached part is `usage.prompt_tokens_details.cached_tokens` (vLLM with
  `--enable-prompt-tokens-details`, PR #18149; often null, vllm#44961) or llama.cpp's `timings.cache_n` /
  `tokens_cached`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

Version = tuple[int, int, int]

TRUNCATE_FALSE_SINCE: Version = (0, 12, 4)
# Releases whose prompt_eval_count may leave the cached tokens out: the 2024 line (up to the 0.5 series, the
# last of 2024) and the 0.30 series on llama-server (PR #16428 landed during it; the whole series is distrusted).
EVALUATED_ONLY: tuple[tuple[Version, Version], ...] = (((0, 0, 0), (0, 6, 0)), ((0, 30, 0), (0, 31, 0)))

REFUSAL = "refusal"  # the server refuses an over-long prompt: a count never says "cut"
COUNT = "count"  # the server cuts silently; its count, in the server's own signature, says so
NONE = "none"  # the server cuts silently and its count may leave cached tokens out: a cut cannot be told

_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


def parse_version(text: str | None) -> Version | None:
    match = _VERSION.search(text or "")
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)


def evaluated_only(version: Version | None) -> bool:
    """Whether this Ollama release may count only the evaluated prompt tokens (unknown: assume it may)."""
    return version is None or any(low <= version < high for low, high in EVALUATED_ONLY)


@dataclass(frozen=True)
class PromptCount:
    """A response's prompt tokens, read: `tokens` as reported, `cached` (None: not reported), whether `tokens`
    is known to be the whole prompt, and the server's guard against a cut (REFUSAL, COUNT or NONE)."""

    tokens: int
    cached: int | None
    whole: bool
    guard: str


def ollama_count(final: Mapping[str, Any], version: Version | None) -> PromptCount:
    """Read the final chunk of an Ollama answer from a server of `version` (None: unknown)."""
    raw = final.get("prompt_eval_count")
    cached = final.get("prompt_eval_cached_count")
    tokens = int(raw) if isinstance(raw, int) else 0
    if isinstance(cached, int):  # PR #17943: the count is the whole prompt, the cached part beside it
        whole = True
    else:
        cached = None
        whole = isinstance(raw, int) and raw > 0 and not evaluated_only(version)
    refuses = version is not None and version >= TRUNCATE_FALSE_SINCE
    guard = REFUSAL if refuses else (COUNT if whole else NONE)
    return PromptCount(tokens, cached, whole, guard)


def openai_cached(usage: Mapping[str, Any] | None, extra: Mapping[str, Any] | None) -> int | None:
    """The cached prompt tokens an OpenAI-compatible answer reports, if any: vLLM's
    `usage.prompt_tokens_details.cached_tokens`, or llama.cpp's `timings.cache_n` / `tokens_cached`."""
    details = (usage or {}).get("prompt_tokens_details") or {}
    if isinstance(details, Mapping) and isinstance(details.get("cached_tokens"), int):
        return int(details["cached_tokens"])
    extra = extra or {}
    timings = extra.get("timings") or {}
    if isinstance(timings, Mapping) and isinstance(timings.get("cache_n"), int):
        return int(timings["cache_n"])
    if isinstance(extra.get("tokens_cached"), int):
        return int(extra["tokens_cached"])
    return None
