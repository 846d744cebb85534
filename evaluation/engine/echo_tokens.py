"""Which echoed tokens belong to the scored text: found by text, not by the server's raw offsets.

A server that echoes the prompt with log-probabilities (vLLM's /v1/completions with `echo`) returns its
tokens' texts and `text_offset`s. vLLM's offsets are running sums of the decoded tokens from 0, and a
BOS-adding tokenizer puts the BOS *text* first (`<s>`, 3 characters; `<|begin_of_text|>`, 17), so raw
offsets are shifted against the prompt (REAL_SERVERS.md, `completion/serving.py`). Here the tokens' texts
are joined back into one string, `context + text` is located in it, and the tokens are cut at that
boundary. A tokenizer that drops or changes spaces when decoding single tokens is handled by matching
with whitespace ignored.
"""

from __future__ import annotations

from collections.abc import Sequence

from evaluation.engine.errors import EngineError


class EchoMismatch(EngineError):
    """The echoed tokens do not spell the prompt that was sent."""


def _squeeze(text: str) -> tuple[str, list[int]]:
    """Return the text without whitespace and, per kept character, its index in the text."""
    kept = [(i, ch) for i, ch in enumerate(text) if not ch.isspace()]
    return "".join(ch for _, ch in kept), [i for i, _ in kept]


def scored_token_indices(context: str, text: str, tokens: Sequence[str]) -> list[int]:
    """Return the indices of the echoed tokens that overlap `text` (the part after `context`).

    Tokens before the prompt (a BOS string) or after it (a generated token) are left out; a token that
    straddles the boundary ("\\n" + the text's first letters) counts with the text, as it carries the
    text's first characters.
    """
    if not text:
        raise EchoMismatch("there is no text to score")
    prompt = context + text
    echoed = "".join(tokens)
    start = echoed.find(prompt)
    if start >= 0:
        first, last = start + len(context), start + len(prompt)
    else:
        squeezed_echo, echo_at = _squeeze(echoed)
        squeezed_context, _ = _squeeze(context)
        squeezed_prompt, _ = _squeeze(prompt)
        at = squeezed_echo.find(squeezed_prompt)
        if at < 0 or len(squeezed_prompt) == len(squeezed_context):
            raise EchoMismatch(
                f"the echoed tokens ({len(tokens)}, {len(echoed)} characters) do not contain the prompt sent "
                f"({len(prompt)} characters): the server did not echo it"
            )
        first = echo_at[at + len(squeezed_context)]
        last = echo_at[at + len(squeezed_prompt) - 1] + 1
    indices: list[int] = []
    position = 0
    for index, token in enumerate(tokens):
        end = position + len(token)
        if end > first and position < last and token:
            indices.append(index)
        position = end
    return indices
