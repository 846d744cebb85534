"""A simulated Ollama: a real HTTP server on loopback that speaks enough of Ollama's API for our tests
(and the OpenAI-compatible /v1 endpoints of vLLM-style servers: see openai_api.py).

Endpoints: POST /api/chat, POST /api/generate (streamed NDJSON or one JSON object), GET /api/tags,
POST /api/show, GET /api/ps, GET /api/version, GET|HEAD / ("Ollama is running"), and for tests
GET /_sim/stats, GET|POST /_sim/config (POST merges the given fields), POST /_sim/reset
({"stats": true, "models": true}). Model loading, slots, replies and faults follow `SimConfig`.
"""

from __future__ import annotations

import random
import threading
import time
from typing import Any

from .config import FaultRule, SimConfig
from .handler import Handler, SimHTTPServer
from .scheduler import ModelScheduler
from .stats import CallRecord, SimStats


class OllamaSim:
    """The simulator: start it (or use `with OllamaSim(config) as sim:`) and point a client at `sim.url`."""

    def __init__(self, config: SimConfig | None = None, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self._cond = threading.Condition(threading.RLock())
        self._config = config or SimConfig()
        self._stats = SimStats()
        self._scheduler = ModelScheduler(self._cond, self._stats)
        self._fault_state: dict[int, tuple[list[int], random.Random]] = {}
        self._httpd = SimHTTPServer((host, port), Handler)
        self._httpd.sim = self
        self._thread: threading.Thread | None = None
        self.host, self.port = self._httpd.server_address[0], self._httpd.server_address[1]
        self.url = f"http://{self.host}:{self.port}"

    # --- lifecycle -------------------------------------------------------------------------
    def start(self) -> OllamaSim:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="ollama-sim", daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        self._scheduler.close()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._httpd.close_connections()
        self._httpd.server_close()

    def __enter__(self) -> OllamaSim:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- configuration and statistics ------------------------------------------------------
    @property
    def config(self) -> SimConfig:
        return self._config

    def configure(self, **changes: Any) -> SimConfig:
        """Change configuration fields at runtime; fault counters restart when `faults` changes."""
        with self._cond:
            self._config = self._config.replace(**changes)
            if "faults" in changes:
                self._fault_state.clear()
            self._cond.notify_all()
            return self._config

    @property
    def stats(self) -> SimStats:
        """Return a snapshot of the statistics (a copy, safe to inspect while requests run)."""
        with self._cond:
            return self._stats.copy()

    def reset_stats(self) -> None:
        with self._cond:
            self._stats = SimStats()
            self._scheduler.stats = self._stats

    def unload_all(self) -> None:
        """Unload every idle model, as if their keep_alive had expired."""
        self._scheduler.unload_all()

    def loaded_models(self) -> list[str]:
        return [runner.name for runner in self._scheduler.loaded()]

    # --- helpers used by the handler -------------------------------------------------------
    def count_hit(self, path: str) -> None:
        with self._cond:
            self._stats.endpoint_hits[path] = self._stats.endpoint_hits.get(path, 0) + 1

    def begin_call(self, record: CallRecord) -> None:
        with self._cond:
            self._stats.requests += 1
            per_model = self._stats.requests_per_model
            per_model[record.model] = per_model.get(record.model, 0) + 1
            self._stats.log.append(record)

    def end_call(self, record: CallRecord, status: str) -> None:
        with self._cond:
            record.status = status
            record.finished = time.time()
            if status in ("error", "drop", "stream_error"):
                self.count_fault(status)
            if status == "ok":
                self._stats.prompt_tokens_sent += record.prompt_tokens
                self._stats.prompt_tokens_cached += record.cached_tokens
                self._stats.prompt_tokens_evaluated += record.prompt_tokens - record.cached_tokens

    def count_context(self, truncated: bool) -> None:
        """A prompt longer than the context: cut (Ollama's default) or refused."""
        with self._cond:
            if truncated:
                self._stats.truncated += 1
            else:
                self._stats.refused_too_long += 1

    def count_fault(self, kind: str) -> None:
        with self._cond:
            self._stats.faults_injected[kind] = self._stats.faults_injected.get(kind, 0) + 1

    def draw_faults(self, model: str) -> list[FaultRule]:
        """Return the fault rules that fire for this request, advancing their counters in arrival order."""
        fired: list[FaultRule] = []
        with self._cond:
            for index, rule in enumerate(self._config.faults):
                if not rule.applies_to(model):
                    continue
                counter, rng = self._fault_state.setdefault(index, ([0], random.Random(rule.seed)))
                counter[0] += 1
                k = counter[0]
                draw = rng.random() if rule.rate > 0 else 1.0
                if rule.always or k in rule.nth or k <= rule.first or draw < rule.rate:
                    fired.append(rule)
        return fired

    @property
    def scheduler(self) -> ModelScheduler:
        return self._scheduler
