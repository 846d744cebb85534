"""Model loading and slot accounting of the simulated Ollama, modelled on how the real server queues.

Requests are admitted to a model in arrival order (one FIFO queue, like Ollama's scheduler loop):
the head of the queue either finds its model loaded (with the same num_ctx), loads it into a free
place, evicts the least recently used idle model, or waits - and everything behind it waits too.
An admitted request holds a reference on its model until it finishes, so a model with running or
queued requests is never evicted. Inside a loaded model at most `parallel` requests generate at
once; the rest wait for a slot, as in a llama.cpp runner.
"""

from __future__ import annotations

import itertools
import re
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .stats import SimStats

_WAIT_STEP = 0.2  # how often waiters look for a vanished client or a shutdown
_DURATION = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


class SimClosed(Exception):
    """The simulator is shutting down; waiting requests give up."""


class RequestAbandoned(Exception):
    """The client went away; like Ollama, drop the request instead of generating for nobody."""


def _never() -> bool:
    return False


def keep_alive_seconds(value: Any) -> float | None:
    """Return a keep_alive value in seconds, None for "forever" (negative), like Ollama reads it."""
    if isinstance(value, bool):
        raise ValueError(f"invalid keep_alive {value!r}")
    if isinstance(value, int | float):
        seconds = float(value)
    else:
        match = _DURATION.match(str(value))
        if match is None:
            raise ValueError(f"invalid keep_alive {value!r}")
        seconds = float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
    return None if seconds < 0 else seconds


@dataclass
class Runner:
    """A loaded (or loading) model."""

    name: str
    num_ctx: int
    ready: threading.Event = field(default_factory=threading.Event)
    refs: int = 0
    active: int = 0
    parallel: int = 1
    slot_waiters: deque[threading.Event] = field(default_factory=deque)
    expires_at: float | None = None
    loaded_at: float = field(default_factory=time.time)
    abandoned: bool = False  # its load died with the client that started it
    prompt_cache: Any = None  # prompt_cache.SlotCache | BlockCache, made with the first request that uses it


class ModelScheduler:
    """Admit requests to models and slots; all state is guarded by the simulator's condition."""

    def __init__(self, cond: threading.Condition, stats: SimStats) -> None:
        self._cond = cond
        self.stats = stats
        self._runners: OrderedDict[str, Runner] = OrderedDict()
        self._queue: deque[int] = deque()
        self._tickets = itertools.count()
        self._active_total = 0
        self.closed = False

    # --- admission -------------------------------------------------------------------------
    def admit(
        self, model: str, *, num_ctx: int, max_loaded: int, gone: Callable[[], bool] = _never
    ) -> tuple[Runner, bool]:
        """Wait until `model` is (being) loaded for this request; return it and whether we must load it."""
        with self._cond:
            ticket = next(self._tickets)
            self._queue.append(ticket)
            try:
                while True:
                    self._raise_if_closed()
                    if gone():
                        raise RequestAbandoned
                    self._expire_idle()
                    if self._queue[0] == ticket:
                        admitted = self._try_admit(model, num_ctx, max_loaded)
                        if admitted is not None:
                            return admitted
                    self._cond.wait(_WAIT_STEP)
            finally:
                self._queue.remove(ticket)
                self._cond.notify_all()

    def _try_admit(self, model: str, num_ctx: int, max_loaded: int) -> tuple[Runner, bool] | None:
        runner = self._runners.get(model)
        if runner is not None:
            if runner.num_ctx == num_ctx:
                runner.refs += 1
                self._runners.move_to_end(model)
                return runner, False
            if runner.refs > 0:
                return None  # a different context size needs a reload, once the model is idle
            self._unload(model)
        while len(self._runners) >= max_loaded:
            idle = next((r for r in self._runners.values() if r.refs == 0), None)
            if idle is None:
                return None
            self._unload(idle.name)
            self.stats.evictions += 1
        runner = Runner(name=model, num_ctx=num_ctx, refs=1)
        self._runners[model] = runner
        self.stats.loads += 1
        self.stats.loads_per_model[model] = self.stats.loads_per_model.get(model, 0) + 1
        self.stats.load_order.append(model)
        return runner, True

    def wait_loaded(self, runner: Runner) -> None:
        while not runner.ready.wait(_WAIT_STEP):
            if self.closed:
                raise SimClosed
        if runner.abandoned:  # the load this request waited for was given up: it ends without an answer
            raise RequestAbandoned

    def abandon(self, runner: Runner) -> None:
        """The load of `runner` was abandoned: forget the model, so the next request loads it again."""
        with self._cond:
            runner.abandoned = True
            self.stats.abandoned_loads += 1
            if self._runners.get(runner.name) is runner:
                self._unload(runner.name)
            self._cond.notify_all()

    # --- slots -----------------------------------------------------------------------------
    def take_slot(self, runner: Runner, parallel: int, gone: Callable[[], bool] = _never) -> None:
        """Take one of the runner's slots, waiting in line; a freed slot goes straight to the next waiter.

        Handing slots over one by one (instead of waking every waiter) keeps the simulator's own
        overhead small when hundreds of requests queue for a model.
        """
        with self._cond:
            runner.parallel = parallel
            held = self.stats.peak_held_per_model
            held[runner.name] = max(held.get(runner.name, 0), runner.active + len(runner.slot_waiters) + 1)
            if runner.active < parallel and not runner.slot_waiters:
                self._grant(runner)
                return
            turn = threading.Event()
            runner.slot_waiters.append(turn)
        while not turn.wait(_WAIT_STEP):
            if self.closed or gone():
                with self._cond:
                    if turn.is_set():  # granted just now: give the slot back
                        self._hand_over(runner, freed=True)
                    else:
                        runner.slot_waiters.remove(turn)
                raise SimClosed if self.closed else RequestAbandoned

    def free_slot(self, runner: Runner) -> None:
        with self._cond:
            self._hand_over(runner, freed=True)

    def _grant(self, runner: Runner) -> None:
        runner.active += 1
        self._active_total += 1
        peaks = self.stats.peak_per_model
        peaks[runner.name] = max(peaks.get(runner.name, 0), runner.active)
        self.stats.peak_concurrency = max(self.stats.peak_concurrency, self._active_total)

    def _hand_over(self, runner: Runner, *, freed: bool) -> None:
        if freed:
            runner.active -= 1
            self._active_total -= 1
        while runner.slot_waiters and runner.active < runner.parallel:
            self._grant(runner)
            runner.slot_waiters.popleft().set()

    def release(self, runner: Runner, keep_alive: float | None) -> None:
        """Drop this request's reference; a model idle with keep_alive 0 unloads at once."""
        with self._cond:
            runner.refs -= 1
            if self._runners.get(runner.name) is runner:
                self._runners.move_to_end(runner.name)
                runner.expires_at = None if keep_alive is None else time.monotonic() + keep_alive
                if runner.refs == 0 and keep_alive == 0:
                    self._unload(runner.name)
            self._cond.notify_all()

    # --- housekeeping ----------------------------------------------------------------------
    def loaded(self) -> list[Runner]:
        with self._cond:
            self._expire_idle()
            return [r for r in self._runners.values() if r.ready.is_set()]

    def unload_all(self) -> None:
        with self._cond:
            for name in [n for n, r in self._runners.items() if r.refs == 0]:
                self._unload(name)
            self._cond.notify_all()

    def close(self) -> None:
        with self._cond:
            self.closed = True
            self._cond.notify_all()

    def _expire_idle(self) -> None:
        now = time.monotonic()
        for name, runner in list(self._runners.items()):
            if runner.refs == 0 and runner.expires_at is not None and runner.expires_at <= now:
                self._unload(name)

    def _unload(self, name: str) -> None:
        self._runners.pop(name, None)

    def _raise_if_closed(self) -> None:
        if self.closed:
            raise SimClosed
