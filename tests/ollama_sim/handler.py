"""HTTP side of the simulated Ollama: routing, JSON and NDJSON I/O, and the chat/generate flow."""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import select
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from . import catalog, openai_api, profiles
from .answers import choose_reply
from .config import FaultRule, SimConfig, SimRequest, normalize_name
from .prompt_cache import make_cache
from .scheduler import RequestAbandoned, Runner, SimClosed, keep_alive_seconds
from .stats import CallRecord

if TYPE_CHECKING:
    from .server import OllamaSim

_PROMPT_EVAL_SHARE = 0.2  # share of the generation time reported as prompt evaluation


def _now_iso() -> str:
    return catalog.iso(time.time())


def _tokens(text: str) -> int:
    return len(text.split())


CACHED_COUNT_SINCE = (0, 33, 0)  # prompt_eval_cached_count (PR #17943, August 2026: the v0.33 line)


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def prompt_counts(config: SimConfig, tokens: int, cached: int) -> dict[str, int]:
    """The prompt fields of Ollama's final chunk, as the `count` mode's releases send them."""
    if config.count == "evaluated":  # 0.30 on llama-server before PR #16428: only what it evaluated
        return {"prompt_eval_count": tokens - cached}
    if config.count == "zero":  # 2024 releases: no count at all for a cached prompt (#2068, #3427)
        return {} if cached else {"prompt_eval_count": tokens}
    if _version(config.version) >= CACHED_COUNT_SINCE:
        return {"prompt_eval_count": tokens, "prompt_eval_cached_count": cached}
    return {"prompt_eval_count": tokens}


def _pieces(text: str) -> list[str]:
    """Split text into stream chunks (a word and the whitespace after it) that join back to it."""
    return [piece for piece in re.findall(r"\s*\S+\s*|\s+", text) if piece]


class _DropConnection(Exception):
    """Close the socket without answering."""


class SimHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512
    sim: OllamaSim

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(*args, **kwargs)

    def track(self, conn: socket.socket, add: bool) -> None:
        with self._connections_lock:
            if add:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)

    def close_connections(self) -> None:
        with self._connections_lock:
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)


SIMULATOR_HEADER = "X-Simulated-Server"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "OllamaSim/1"
    server: SimHTTPServer

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in separate writes; without this, Nagle plus delayed ACKs add ~40 ms.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.track(self.connection, add=False)

    def log_message(self, format: str, *args: Any) -> None:
        return

    def end_headers(self) -> None:
        # Invented, not reproduced: no real server sends this. Every answer says it comes from a simulator, so
        # the app can mark what it computed from these answers as simulated.
        self.send_header(SIMULATOR_HEADER, "tests.ollama_sim")
        super().end_headers()

    # --- routing ---------------------------------------------------------------------------
    def do_HEAD(self) -> None:
        self.sim.count_hit("HEAD " + self.path)
        self._send_text(200 if self.path == "/" else 404, "", head=True)

    def do_GET(self) -> None:
        self.sim.count_hit("GET " + self.path)
        routes = {
            "/": lambda: self._send_text(200, "Ollama is running"),
            "/api/version": lambda: self._send_json(200, {"version": self.sim.config.version, "simulated": True}),
            "/api/tags": self._tags,
            "/api/ps": self._ps,
            "/v1/models": lambda: self._send_json(200, openai_api.models(self.sim.config)),
            "/props": self._props,
            "/_sim/stats": lambda: self._send_json(200, self.sim.stats.to_dict()),
            "/_sim/config": lambda: self._send_json(200, self.sim.config.to_dict()),
        }
        self._dispatch(routes)

    def do_POST(self) -> None:
        self.sim.count_hit("POST " + self.path)
        routes = {
            "/api/chat": lambda: self._generate("chat"),
            "/api/generate": lambda: self._generate("generate"),
            "/api/show": self._show,
            "/v1/chat/completions": lambda: self._generate(openai_api.CHAT),
            "/v1/completions": lambda: self._generate(openai_api.COMPLETION),
            "/_sim/config": self._sim_config,
            "/_sim/reset": self._sim_reset,
        }
        self._dispatch(routes)

    def do_DELETE(self) -> None:
        self.sim.count_hit("DELETE " + self.path)
        self._dispatch({})

    @property
    def sim(self) -> OllamaSim:
        return self.server.sim

    def _dispatch(self, routes: dict[str, Any]) -> None:
        route = routes.get(self.path.split("?", 1)[0])
        self._dialect_body = None
        try:
            if route is None:
                self._read_body()
                self._send_text(404, "404 page not found")
            else:
                route()
        except _DropConnection:
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
        except (BrokenPipeError, ConnectionResetError, SimClosed, RequestAbandoned):
            self.close_connection = True

    # --- I/O helpers -----------------------------------------------------------------------
    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _read_json(self) -> dict[str, Any] | None:
        raw = self._read_body()
        try:
            data = json.loads(raw or b"{}")
        except ValueError:
            self._send_json(400, {"error": "invalid JSON in request body"})
            return None
        if not isinstance(data, dict):
            self._send_json(400, {"error": "request body must be a JSON object"})
            return None
        return data

    def _client_gone(self) -> bool:
        """Return whether the client closed its end (readable socket with nothing to read)."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def _pause(self, seconds: float) -> None:
        """Sleep like a generating model, but stop when the client goes away (Ollama cancels then)."""
        deadline = time.monotonic() + seconds
        while (remaining := deadline - time.monotonic()) > 0:
            readable, _, _ = select.select([self.connection], [], [], remaining)
            if readable:
                if self._client_gone():
                    raise RequestAbandoned
                time.sleep(max(0.0, deadline - time.monotonic()))  # bytes of a next request: keep going
                return

    def _send_text(self, status: int, text: str, *, head: bool = False) -> None:
        body = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _error(self, status: int, message: str) -> None:
        """Answer an error in the shape of the request's dialect (Ollama or OpenAI-compatible)."""
        if getattr(self, "_dialect_body", None) is not None:
            self._send_json(status, openai_api.error_body(status, message))
        else:
            self._send_json(status, {"error": message})

    def _send_json(self, status: int, payload: Any) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _stream_line(self, payload: Any) -> None:
        data = json.dumps(payload).encode() + b"\n"
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    # --- model information -----------------------------------------------------------------
    def _props(self) -> None:
        """llama.cpp's server settings (tools/server/README.md, GET /props): the context it was started with, and
        `total_slots`, the requests it processes at once (its --parallel)."""
        if self.sim.config.profile != "llamacpp":
            self._send_text(404, "404 page not found")
            return
        self._send_json(200, {"default_generation_settings": {"n_ctx": self.sim.config.context_length},
                              "total_slots": self.sim.config.parallel})

    def _tags(self) -> None:
        self._send_json(200, catalog.tags(self.sim.config))

    def _ps(self) -> None:
        self._send_json(200, catalog.running(self.sim.config, self.sim.scheduler.loaded()))

    def _show(self) -> None:
        body = self._read_json()
        if body is None:
            return
        requested = str(body.get("model") or body.get("name") or "")
        digest = self.sim.config.digest(requested) if requested else None
        if digest is None:
            self._send_json(404, {"error": f"model '{requested}' not found"})
            return
        self._send_json(200, catalog.show(self.sim.config, normalize_name(requested), digest))

    # --- test control ----------------------------------------------------------------------
    def _sim_config(self) -> None:
        body = self._read_json()
        if body is None:
            return
        try:
            config = self.sim.configure(**body)
        except (TypeError, ValueError) as exc:
            self._send_json(400, {"error": str(exc)})
            return
        self._send_json(200, config.to_dict())

    def _sim_reset(self) -> None:
        body = self._read_json()
        if body is None:
            return
        if body.get("stats", True):
            self.sim.reset_stats()
        if body.get("models", True):
            self.sim.unload_all()
        self._send_json(200, {"status": "ok"})

    # --- generation ------------------------------------------------------------------------
    def _generate(self, endpoint: str) -> None:
        arrived = time.perf_counter_ns()
        body = self._read_json()
        if body is None:
            return
        sim = self.sim
        config = sim.config
        self._dialect_body = body if openai_api.is_openai(endpoint) else None
        requested = body.get("model")
        if not isinstance(requested, str) or not requested:
            self._error(400, "model is required")
            return
        model = normalize_name(requested)
        options = body.get("options") or {}
        if not isinstance(options, dict):
            self._error(400, "options must be an object")
            return
        if openai_api.is_openai(endpoint):
            try:
                options = openai_api.options_of(body)
                prompt, messages, system = openai_api.parse(endpoint, body)
            except openai_api.BadRequest as exc:
                self._error(400, str(exc))
                return
            refusal = openai_api.echo_refusal(config, endpoint, body)
            if refusal:
                self._error(400, refusal)
                return
            stream = False
        elif endpoint == "chat":
            messages = tuple(m for m in body.get("messages") or [] if isinstance(m, dict))
            system = None
            prompt = "\n".join(str(m.get("content") or "") for m in messages)
        else:
            messages = ()
            system = body.get("system") or None
            prompt = "\n".join(p for p in (system, body.get("prompt") or "") if p)
        if not openai_api.is_openai(endpoint):
            stream = body.get("stream", True) is not False  # Ollama streams unless told not to
        if endpoint == "chat" and not messages:
            self._load_only(requested, model, options, body, config)
            return
        record = CallRecord(
            model=model,
            endpoint=endpoint,
            prompt_sha256=hashlib.sha256(prompt.encode()).hexdigest(),
            options=dict(options),
            stream=stream,
            started=time.time(),
            keep_alive=body.get("keep_alive"),
            top_level_keys=sorted(body),
            answer_format=body.get("format", body.get("response_format")),
        )
        sim.begin_call(record)
        if config.digest(model) is None:
            sim.end_call(record, "not_found")
            self._error(404, f'model "{requested}" not found, try pulling it first')
            return
        try:
            num_ctx = int(options.get("num_ctx") or config.default_num_ctx)
            keep_alive = keep_alive_seconds(body.get("keep_alive", config.default_keep_alive))
        except (TypeError, ValueError) as exc:
            sim.end_call(record, "bad_request")
            self._error(400, str(exc))
            return

        asked = body.get("response_format") if openai_api.is_openai(endpoint) else None
        if config.response_format_types and isinstance(asked, dict) \
                and asked.get("type") not in config.response_format_types:
            sim.end_call(record, "bad_request")
            allowed = " or ".join(repr(kind) for kind in config.response_format_types)
            self._error(500, "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', "
                             f"'type'), 'msg': \"Input should be {allowed}\", 'input': {asked.get('type')!r}}}")
            return
        if config.profile:
            ended, prompt, options = self._as_real_server(config, record, model, prompt, options, body)
            if ended:
                return
        faults = sim.draw_faults(model)
        if self._strike(faults, record, after_call=False):
            return
        request = SimRequest(
            model=requested, endpoint=endpoint, prompt=prompt, messages=messages, system=system, options=options
        )
        try:
            runner, must_load = sim.scheduler.admit(
                model, num_ctx=num_ctx, max_loaded=config.max_loaded, gone=self._client_gone
            )
            try:
                load_ns = self._load(runner, must_load, config)
                record.loaded = must_load
                self._answer(request, config, faults, record, runner, arrived=arrived, load_ns=load_ns, stream=stream)
            finally:
                sim.scheduler.release(runner, keep_alive)
        except (RequestAbandoned, BrokenPipeError, ConnectionResetError):
            sim.end_call(record, "cancelled")
            raise

    def _as_real_server(
        self, config: SimConfig, record: CallRecord, model: str, prompt: str, options: dict[str, Any],
        body: dict[str, Any],
    ) -> tuple[bool, str, dict[str, Any]]:
        """Apply the profile's memory and context rules (profiles.py): (whether the request ended, the prompt
        the model sees, the options it runs with)."""
        profile = config.profile
        if model in config.oom_models:  # Ollama's handleScheduleError default branch (routes.go:3107-3120)
            self.sim.end_call(record, "error")
            self._error(500, "model requires more system memory (48.0 GiB) than is available (15.6 GiB)")
            return True, prompt, options
        words = prompt.split()
        record.prompt_tokens = len(words)
        num_ctx = int(options.get("num_ctx") or config.default_num_ctx)
        ctx = profiles.effective_ctx(profile, num_ctx, config.context_length)
        max_tokens = options.get("num_predict")
        if max_tokens is None and profiles.default_max_tokens(profile) is not None:
            options = {**options, "num_predict": profiles.default_max_tokens(profile)}
            max_tokens = options["num_predict"]
        refused = profiles.refusal(profile, prompt_tokens=len(words), max_tokens=max_tokens, ctx=ctx,
                                   truncate=body.get("truncate"))
        if refused is not None:
            self.sim.count_context(truncated=False)
            self.sim.end_call(record, "bad_request")
            self._error(refused.status, refused.message)
            return True, prompt, options
        kept = profiles.kept_words(profile, words, ctx)
        if kept is not None:  # cut silently; a real server only logs "truncating input prompt"
            record.truncated = True
            self.sim.count_context(truncated=True)
            prompt = " ".join(kept)
        return False, prompt, options

    def _load_only(
        self, requested: str, model: str, options: dict[str, Any], body: dict[str, Any], config: SimConfig
    ) -> None:
        """A chat without messages, as in Ollama: load the model (if needed) and answer with nothing.

        It is no request (not in `requests` or the log), but a load it pays counts in `loads`."""
        if config.digest(model) is None:
            self._error(404, f'model "{requested}" not found, try pulling it first')
            return
        try:
            num_ctx = int(options.get("num_ctx") or config.default_num_ctx)
            keep_alive = keep_alive_seconds(body.get("keep_alive", config.default_keep_alive))
        except (TypeError, ValueError) as exc:
            self._error(400, str(exc))
            return
        runner, must_load = self.sim.scheduler.admit(
            model, num_ctx=num_ctx, max_loaded=config.max_loaded, gone=self._client_gone
        )
        try:
            load_ns = self._load(runner, must_load, config)
        finally:
            self.sim.scheduler.release(runner, keep_alive)
        self._send_json(200, {
            "model": requested, "created_at": _now_iso(), "message": {"role": "assistant", "content": ""},
            "done": True, "done_reason": "load", "load_duration": load_ns,
        })

    def _load(self, runner: Runner, must_load: bool, config: SimConfig) -> int:
        if not must_load:
            self.sim.scheduler.wait_loaded(runner)
            return 0
        started = time.perf_counter_ns()
        digest = config.digest(runner.name) or ""
        deadline = time.monotonic() + config.swap_cost + config.load_seconds_per_gb * catalog.size(digest) / 1e9
        try:
            while (left := deadline - time.monotonic()) > 0:
                time.sleep(min(left, 0.05))
                # Ollama ties a load to the request that started it (`WaitUntilRunning(req.ctx)`, sched.go:733):
                # a client that gives up mid-load takes the load with it; the next request loads again.
                if self._client_gone():
                    self.sim.scheduler.abandon(runner)
                    raise RequestAbandoned
        finally:
            runner.ready.set()
        return max(1, time.perf_counter_ns() - started)

    def _strike(
        self, faults: list[FaultRule], record: CallRecord, *, after_call: bool, streaming: bool = False
    ) -> bool:
        """Apply the first error/drop fault due at this point; return whether the request ended.

        Once a stream has begun, an error can only arrive as an {"error": ...} line, as in Ollama.
        """
        for rule in faults:
            if rule.kind in ("error", "drop") and rule.after_call == after_call:
                self.sim.end_call(record, rule.kind)
                if rule.kind == "drop":
                    raise _DropConnection
                if streaming:
                    self._stream_line({"error": rule.message})
                    self._end_stream()
                else:
                    self._error(rule.status, rule.message)
                return True
        return False

    def _answer(
        self,
        request: SimRequest,
        config: SimConfig,
        faults: list[FaultRule],
        record: CallRecord,
        runner: Runner,
        *,
        arrived: int,
        load_ns: int,
        stream: bool,
    ) -> None:
        sim = self.sim
        reply = choose_reply(config, request)
        for rule in faults:
            if rule.kind == "garbage":
                reply = rule.text
                sim.count_fault("garbage")
        done_reason = "stop"
        num_predict = request.options.get("num_predict")
        trace = config.thinking_text if config.profile and normalize_name(request.model) in config.thinking_models \
            else ""
        if num_predict == 0 and openai_api.is_openai(request.endpoint):
            reply, done_reason = "", "length"  # max_tokens=0: score the prompt, generate nothing
        elif isinstance(num_predict, int) and 0 < num_predict < _tokens(trace) + _tokens(reply):
            # Thinking shares the answer budget (REAL_SERVERS.md, thinking models): the trace comes first.
            trace_words = [p for p in _pieces(trace) if p.strip()]
            words = [p for p in _pieces(reply) if p.strip()]
            trace = "".join(trace_words[:num_predict]).rstrip()
            reply = "".join(words[: max(0, num_predict - len(trace_words))]).rstrip()
            done_reason = "length"
        generated = _tokens(trace) + _tokens(reply)
        thinking = ""
        if trace:
            reply, thinking = profiles.thinking_shape(config.profile, trace, reply)
            if done_reason == "length" and not reply.strip() and not thinking:
                reply = f"<think>\n{trace}"  # cut while thinking: the tag never closes
        pieces = _pieces(reply)
        call_time = config.call_time
        if config.tokens_per_second:
            call_time += generated / config.tokens_per_second
        for rule in faults:
            if rule.kind == "slow":
                call_time += rule.delay
                sim.count_fault("slow")
        broken = next((rule for rule in faults if rule.kind == "stream_error"), None)

        sim.scheduler.take_slot(runner, config.parallel, self._client_gone)
        words = request.prompt.split()
        cache = self._prompt_cache(runner, config)
        cache_slot, cached = cache.take(words) if cache is not None else (None, 0)
        record.prompt_tokens, record.cached_tokens = len(words), cached
        prompt_time = 0.0
        if config.prompt_tokens_per_second:  # cached tokens cost no prompt time
            prompt_time = (len(words) - cached) / config.prompt_tokens_per_second
            call_time += prompt_time
        generation_started = time.perf_counter_ns()
        try:
            if stream and broken is None:
                # Ollama's headers go with the first chunk, once the runner has read the prompt into its slot
                # (gin writes them on the first write of `streamResponse`, server/routes.go).
                self._pause(prompt_time)
                self._start_stream()
                step = (call_time - prompt_time) / (len(pieces) + 1)
                self._pause(step)
                if thinking:
                    self._stream_line(self._payload(request, "", done=False, thinking=thinking))
                for piece in pieces:
                    self._stream_line(self._payload(request, piece, done=False))
                    self._pause(step)
            elif stream:
                self._start_stream()
                half = pieces[: len(pieces) // 2]
                self._pause(call_time / 2)
                for piece in half:
                    self._stream_line(self._payload(request, piece, done=False))
                self._stream_line({"error": broken.message})
                self._end_stream()
                sim.end_call(record, "stream_error")
                return
            else:
                self._pause(call_time)
        finally:
            generation_ns = time.perf_counter_ns() - generation_started
            if cache is not None:
                cache.give_back(cache_slot, words)
            sim.scheduler.free_slot(runner)

        if not stream and broken is not None:
            sim.end_call(record, "stream_error")
            self._error(500, broken.message)
            return
        if self._strike(faults, record, after_call=True, streaming=stream):
            return
        prompt_eval_ns = int(generation_ns * _PROMPT_EVAL_SHARE)
        final = self._payload(request, "" if stream else reply, done=True, thinking="" if stream else thinking)
        final.update(
            done_reason=done_reason,
            total_duration=time.perf_counter_ns() - arrived,
            load_duration=load_ns,
            prompt_eval_duration=prompt_eval_ns,
            eval_count=generated if trace else _tokens(reply),
            eval_duration=generation_ns - prompt_eval_ns,
            **prompt_counts(config, len(words), cached),
        )
        sim.end_call(record, "ok")
        if self._dialect_body is not None:
            finish = "length" if done_reason == "length" else "stop"
            self._send_json(200, openai_api.payload(
                request.endpoint, config, self._dialect_body,
                model=request.model, prompt=request.prompt, reply=reply, finish_reason=finish, reasoning=thinking,
                cached=cached,
            ))
            return
        if stream:
            self._stream_line(final)
            self._end_stream()
        else:
            self._send_json(200, final)

    def _prompt_cache(self, runner: Runner, config: SimConfig) -> Any:
        """The loaded model's prompt cache (None without cache slots), made on first use."""
        if config.cache_slots <= 0:
            return None
        with self.sim.scheduler._cond:
            if runner.prompt_cache is None:
                runner.prompt_cache = make_cache(config.profile, slots=config.cache_slots,
                                                 context_length=config.context_length)
            return runner.prompt_cache

    @staticmethod
    def _payload(request: SimRequest, text: str, *, done: bool, thinking: str = "") -> dict[str, Any]:
        payload: dict[str, Any] = {"model": request.model, "created_at": _now_iso()}
        if request.endpoint == "chat":
            payload["message"] = {"role": "assistant", "content": text}
            if thinking:
                payload["message"]["thinking"] = thinking
        else:
            payload["response"] = text
        payload["done"] = done
        return payload
