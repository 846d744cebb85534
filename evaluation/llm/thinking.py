"""Keep a reasoning model's trace apart from its answer before anything parses the answer.

Thinking models (deepseek-r1, qwen3, gpt-oss) write a trace first. Ollama 0.12.4+ returns it in
`message.thinking` and vLLM/llama.cpp with a reasoning parser in `reasoning_content`/`reasoning`, but older
Ollama, vLLM without a parser and TGI leave it in the content: as `<think>...</think>`, or - when the chat
template opened the tag itself (R1 distills) - as a trace ending in a bare `</think>`. Traces contain draft
lines such as `Score: ...`, which a parser would take for the answer (REAL_SERVERS.md, "Reasoning output").
"""

from __future__ import annotations

import re

_BLOCK = re.compile(r"<(think|thinking|reasoning)>(.*?)</\1>", re.DOTALL | re.IGNORECASE)
_BARE_END = re.compile(r"</(think|thinking|reasoning)>", re.IGNORECASE)
_OPEN = re.compile(r"<(think|thinking|reasoning)>", re.IGNORECASE)


def split_thinking(content: str, thinking: str = "") -> tuple[str, str]:
    """Return (answer, trace): `thinking` as the server gave it apart, plus every trace found in `content`.

    A `<think>` left open (the answer was cut while thinking) leaves no answer at all."""
    traces = [thinking.strip()] if thinking and thinking.strip() else []
    for match in _BLOCK.finditer(content):
        traces.append(match.group(2).strip())
    answer = _BLOCK.sub("", content)
    bare = _BARE_END.search(answer)
    if bare is not None:  # the opening tag was in the template: everything before the bare close is trace
        traces.append(answer[: bare.start()].strip())
        answer = answer[bare.end():]
    opened = _OPEN.search(answer)
    if opened is not None:  # thinking never finished
        traces.append(answer[opened.end():].strip())
        answer = answer[: opened.start()]
    return answer.strip(), "\n\n".join(t for t in traces if t)
