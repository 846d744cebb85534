"""GPTScore in a comparison job: the mean log-probability of each output given an instruction with the aspect,
from an OpenAI-compatible server that echoes log-probabilities or from a local transformers model.

Both keep every answer in the ledger of LLM calls (the cache a rerun or a resumed job reads) and store each
score the moment its batch is done."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from django.conf import settings

from comparison.engine.metrics import MetricSpec
from comparison.models import ComparisonJob
from comparison.services.gptscore_hf import score_local
from comparison.services.gptscore_pairs import pending_pairs
from comparison.services.stored import ItemRow, Progress, store_scores
from evaluation.engine.parsing import ParsedAnswer
from evaluation.llm.base import LLMResult
from evaluation.llm.errors import BackendError
from evaluation.llm.logprob_preflight import logprob_preflight
from evaluation.llm.openai_backend import OpenAICompatBackend
from evaluation.llm.servers import ServerKind
from evaluation.runs.asking import Answered, Ask, ask_many
from evaluation.runs.backends import connect
from evaluation.runs.failures import LLM_ERRORS, llm_stopped

GPTSCORE_OPTIONS = {"endpoint": "completions", "echo": True, "logprobs": 0, "max_tokens": 1, "temperature": 0}


class _LogprobAsker:
    """The GPTScore server as the scheduler's backend: a "prompt" is context + output, and the step's
    `scored_from` option says where the output begins; the answer is the mean log-probability as JSON."""

    def __init__(self, backend: OpenAICompatBackend) -> None:
        self.backend = backend
        self.kind = backend.kind
        self.url = backend.url
        self._preflown = threading.Lock()
        self._checked = False

    def check(self, models: Sequence[str]) -> dict[str, str]:
        return self.backend.check(models)

    def close(self) -> None:
        self.backend.close()

    def context_length(self, model: str) -> int | None:
        return self.backend.context_length(model)

    def chat(self, model: str, prompt: str, *, options: Mapping[str, Any], system: str | None = None) -> LLMResult:
        with self._preflown:  # one token first, before the first uncached request: a server without echo
            if not self._checked:  # fails clearly instead of on every item (a cached rerun sends nothing)
                logprob_preflight(self.backend, model, prefix=options.get("prefix", ""))
                self._checked = True
        started = time.perf_counter_ns()
        split = int(options["scored_from"])
        result = self.backend.text_logprobs(model, prompt[:split], prompt[split:], prefix=options.get("prefix", ""))
        answer = json.dumps({"mean": result.mean, "tokens": len(result.logprobs)})
        # The server's count of the whole prompt is not in this answer (only the scored tokens are): 0, unknown.
        return LLMResult(text=answer, model=result.model, digest="", prompt_tokens=0,
                         completion_tokens=0, total_duration_ns=time.perf_counter_ns() - started, load_duration_ns=0,
                         prompt_eval_duration_ns=0, eval_duration_ns=0, done_reason=None, attempts=result.attempts)


def score_gptscore(job: ComparisonJob, spec: MetricSpec, items: Sequence[ItemRow], progress: Progress,
                   count_call: Callable[[int], None]) -> None:
    """Average token log-probability of each output given an instruction with the aspect: on a local
    transformers model (`gptscore-hf`, comparison.services.gptscore_hf), or asked through the lane scheduler with
    the ledger of LLM calls as cache (as every other LLM job) on an OpenAI-compatible server that echoes
    log-probabilities."""
    try:
        if spec.local:
            score_local(job, spec, items, progress, count_call)
        else:
            _score_on_server(job, spec, items, progress, count_call)
    except LLM_ERRORS as exc:
        raise llm_stopped(exc, kept=ComparisonJob.kept_message) from exc


def _score_on_server(job: ComparisonJob, spec: MetricSpec, items: Sequence[ItemRow], progress: Progress,
                     count_call: Callable[[int], None]) -> None:
    done, pending = pending_pairs(job, items, spec.name)
    # The prefix (a BOS token the server needs to align its echo) changes the scores, so it keys the cache.
    prefix = {"prefix": settings.GPTSCORE_PREFIX} if settings.GPTSCORE_PREFIX else {}
    asks = [Ask((p.aspect, p.item), p.context + p.output,
                {**GPTSCORE_OPTIONS, **prefix, "scored_from": len(p.context)}) for p in pending]
    progress(spec.name, done)
    if not asks:
        return

    def on_batch(answered: list[Answered], interrupted: bool) -> None:
        nonlocal done
        by_aspect: dict[str, list[tuple[int, float]]] = {}
        for a in answered:
            aspect, pk = a.ask.ref
            if a.outcome.problems:  # too long for the model: no score is invented, the item stays unscored
                continue
            by_aspect.setdefault(aspect, []).append((pk, float(json.loads(a.outcome.raw)["mean"])))
        for aspect, values in by_aspect.items():
            done += store_scores(spec.name, aspect, values)
        count_call(sum(a.fresh for a in answered))
        if not interrupted:
            progress(spec.name, done)

    # connect() checks the allowlist again here: it may have changed since the job was made
    with connect(job.options.get("gptscore_url", ""), default=ServerKind.OPENAI) as backend:
        if not isinstance(backend, OpenAICompatBackend):
            raise BackendError(f"GPTScore needs an OpenAI-compatible server (Ollama gives no prompt "
                               f"log-probabilities); {backend.url} is an Ollama address")
        backend.check([spec.model])
        ask_many(_LogprobAsker(backend), spec.model, "", asks, parse=lambda text: ParsedAnswer(status="ok"),
                 parallel=max(1, settings.OLLAMA_PARALLEL), on_batch=on_batch, answer_tokens=0)
