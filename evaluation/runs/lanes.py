"""Several servers at once: each works its own models model-major with P requests in flight, all in parallel.

A lane is one server and the models placed on it, in order; a feed is one model's steps on a lane. A
feed may stay open while more steps are still to come: the supervisor's get an item as soon as all its
annotators answered, wherever they ran. A lane keeps asking the model it is on while that model has
steps (in cache order: calls sharing a prefix back to back on one slot, `cache_order`), then lets its
requests finish and moves to the first model (in its order) with steps ready, so each model is loaded
once and a waiting supervisor never blocks a model behind it. A feed moves between lanes whole, so its
prefix groups do too.

A server that stops answering (the backend's retries spent) stops taking requests; once its requests
in flight have ended, `on_server_lost` decides where its unfinished feeds go (or raises to stop the
job). Steps cut short carry the answers they got as cached ones, so nothing answered is asked again.

No database and no Django: worker threads only talk HTTP and parse; every callback runs on the
calling thread, which stores what comes back.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

from evaluation.engine.parsing import ParsedAnswer
from evaluation.llm.base import LLMBackend
from evaluation.llm.errors import BackendError
from evaluation.llm.policy import server_lost
from evaluation.runs.cache_order import CacheOrder, InTransit, group_of
from evaluation.runs.scheduler import BATCH_SECONDS, BATCH_SIZE, Outcome, Passage, Step, StepInterrupted, perform

log = logging.getLogger(__name__)


@dataclass(eq=False)
class Feed:
    """One model's steps on a lane; `tag` is the caller's (its pass). Closed: no more steps will come. Its
    steps go out in cache order (`cache_order`: a prefix group's calls back to back on one slot; `grouped`
    false: in the order added)."""

    model: str
    parse: Callable[[str], ParsedAnswer]
    tag: Any = None
    closed: bool = True
    running: int = 0
    warmed: bool = False
    grouped: bool = True  # callers pass settings.LLM_CACHE_ORDER (this module reads no settings)
    steps: CacheOrder = field(init=False)

    def __post_init__(self) -> None:
        self.steps = CacheOrder(grouped=self.grouped)

    def add(self, steps: Iterable[Step]) -> None:
        self.steps.extend(steps)

    def finished(self) -> bool:
        return self.closed and not self.steps and not self.running


@dataclass(eq=False)
class Lane:
    server: str
    backend: LLMBackend
    feeds: list[Feed] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    failure: BaseException | None = None
    lost: bool = False
    warm: Callable[[str], None] | None = None  # loads a model before its requests come (None: no such call)
    parallel: int | None = None  # the most requests in flight on this server (None: the scheduler's `parallel`)
    # (prefix group, ticket) of the requests that just ended: the ticket is held until the freed slot's next call
    # takes it over or it is landed (cache_order.InTransit.hold)
    freed: deque[tuple[Any, int | None]] = field(default_factory=deque)
    transit: InTransit = field(default_factory=InTransit)  # its requests sent and not yet in a slot

    def unfinished(self) -> list[Feed]:
        return [feed for feed in self.feeds if not feed.finished()]

    def active(self) -> Feed | None:
        """The feed to send the next request of, or None to wait.

        The model in flight keeps going while it has steps; once it has none, its requests end before
        another model starts (one load each). Idle, the lane takes the first feed with steps ready."""
        unfinished = self.unfinished()
        busy = next((feed for feed in unfinished if feed.running), None)
        if busy is not None:
            return busy if busy.steps else None
        return next((feed for feed in unfinished if feed.steps), None)


ServerLost = Callable[[str, BackendError, list[Feed]], Mapping[str, str]]


class LaneScheduler:
    """Runs lanes to the end. Callbacks: `on_answers([(feed, outcome), ...])` with the steps that ended
    since the last call, right after the freed slots got new requests (store their calls: steps cut short
    come here only); `on_batch(feed, outcomes, interrupted)` for them again in batches (write annotations; may
    raise to stop); `on_server_lost(server, error,
    feeds)` returns model -> server for each unfinished feed of a lost server, or raises to stop the job.
    """

    def __init__(
        self,
        lanes: Sequence[Lane],
        *,
        parallel: int,
        on_answers: Callable[[list[tuple[Feed, Outcome]]], None],
        on_batch: Callable[[Feed, list[Outcome], bool], None],
        on_server_lost: ServerLost,
        batch_size: int = BATCH_SIZE,
        batch_seconds: float = BATCH_SECONDS,
    ) -> None:
        if parallel < 1:
            raise ValueError("parallel must be at least 1")
        self.lanes = {lane.server: lane for lane in lanes}
        self.parallel = parallel
        for lane in lanes:
            for feed in lane.feeds:
                feed.steps.join_at = 2 * self._at_once(lane)
        self.on_answers = on_answers
        self.arrived: list[tuple[Feed, Outcome]] = []  # ended since the last on_answers
        self.on_batch = on_batch
        self.on_server_lost = on_server_lost
        self.batch_size = batch_size
        self.batch_seconds = batch_seconds
        self.running: dict[Future[Outcome], tuple[Lane, Feed, Step]] = {}
        self.tickets: dict[Future[Outcome], int] = {}  # each running request's ticket in its lane's transit
        self.pending: dict[Feed, list[Outcome]] = {}
        self.pools: dict[str, ThreadPoolExecutor] = {}

    # --- the loop -------------------------------------------------------------------------------
    def run(self) -> None:
        with ExitStack() as stack:
            for server in self.lanes:
                self.pools[server] = stack.enter_context(ThreadPoolExecutor(
                    max_workers=self._at_once(self.lanes[server]), thread_name_prefix=f"llm-{len(self.pools)}"))
            try:
                self._loop()
            except BaseException:
                self._stop_all()
                raise
            self._flush(interrupted=False)

    def _loop(self) -> None:
        last_flush = time.monotonic()
        while True:
            self._top_up()
            if not self.running:
                self._flush(interrupted=False)  # what was held back may feed a waiting supervisor
                self._hand_over()
                self._top_up()
                if not self.running:
                    if all(not lane.unfinished() for lane in self.lanes.values()):
                        return
                    waiting = [f"{feed.model} on {lane.server}" for lane in self.lanes.values()
                               for feed in lane.unfinished()]
                    raise RuntimeError(f"the job stalled: {', '.join(waiting)} wait for steps that never come")
            finished, _ = wait(list(self.running), timeout=self.batch_seconds, return_when=FIRST_COMPLETED)
            ended_feed = False
            for future in finished:
                ended_feed |= self._collect(future)
            self._top_up()  # new requests go out before the answers are written
            self._store()
            self._hand_over()
            now = time.monotonic()
            big = any(len(outcomes) >= self.batch_size for outcomes in self.pending.values())
            due = now - last_flush >= self.batch_seconds
            if ended_feed or big or due or self._hungry() or self._feeding():
                self._flush(interrupted=False)
                last_flush = now
                self._top_up()
                self._warm_idle()

    def _top_up(self) -> None:
        for lane in self.lanes.values():
            if lane.lost or lane.failure is not None:
                continue
            in_flight = sum(1 for owner, _, _ in self.running.values() if owner is lane)
            while in_flight < self._at_once(lane):
                feed = lane.active()
                if feed is None:
                    break
                # The slot that came free holds the prefix of the group it ran: that group's next call goes there.
                after, kept = lane.freed.popleft() if lane.freed else (None, None)
                taken = feed.steps.take(after, idle=not in_flight)
                if taken is None:
                    self._land(lane, kept)
                    break
                step = taken.step
                # A new group's first call goes once the calls handed out before it to continue their groups
                # hold their slots, as the server says (a backend that cannot say would make it wait for whole
                # calls: it goes at once).
                gated = taken.opens_group and in_flight > 0 and lane.backend.signals_landing
                if taken.continues and kept is not None:
                    # The group's next call takes over the ticket its slot was kept under, so a first call handed
                    # out after the slot came free still waits for this one to hold it.
                    lane.transit.hold(kept)
                    ticket = kept
                else:
                    self._land(lane, kept)
                    ticket = lane.transit.send(continues=taken.continues)
                passage = Passage(lane.transit, ticket, after_earlier=gated)
                feed.running += 1
                future = self.pools[lane.server].submit(perform, lane.backend, feed.model, step, feed.parse, lane.stop,
                                                        passage)
                self.running[future] = (lane, feed, step)
                self.tickets[future] = ticket
                in_flight += 1
            # A freed slot no call took over keeps no ticket: nothing is coming to it now.
            for _, kept in lane.freed:
                self._land(lane, kept)
            lane.freed = deque((group, None) for group, _ in lane.freed)

    @staticmethod
    def _land(lane: Lane, ticket: int | None) -> None:
        if ticket is not None:
            lane.transit.land(ticket)

    def _at_once(self, lane: Lane) -> int:
        """The requests in flight on `lane`: its server's own limit when it has one, never above `parallel`."""
        return min(self.parallel, lane.parallel) if lane.parallel else self.parallel

    def _collect(self, future: Future[Outcome]) -> bool:
        """Take in one ended request; return whether its feed is now finished. Fatal errors propagate."""
        lane, feed, step = self.running.pop(future)
        feed.running -= 1
        lane.freed.append((group_of(step), self.tickets.pop(future, None)))
        while len(lane.freed) > self._at_once(lane):
            self._land(lane, lane.freed.popleft()[1])
        error = future.exception()
        if error is None:
            outcome = future.result()
            self.arrived.append((feed, outcome))
            self.pending.setdefault(feed, []).append(outcome)
            return feed.finished()
        if isinstance(error, StepInterrupted):
            self.arrived.append((feed, error.outcome))
            _keep_answers(step, error.outcome)
            feed.steps.put_back(step)
            return False
        if server_lost(error):
            if lane.failure is None:
                lane.failure = error
                lane.stop.set()  # its other requests end after their current attempt
            feed.steps.put_back(step)
            return False
        raise error

    def _hungry(self) -> bool:
        """Whether a live lane sits idle while it still has models to run (say, a supervisor waiting)."""
        busy = {owner.server for owner, _, _ in self.running.values()}
        return any(
            lane.failure is None and not lane.lost and lane.server not in busy and lane.unfinished()
            for lane in self.lanes.values()
        )

    def _feeding(self) -> bool:
        """Whether a live lane is on (or next to start) a feed that still takes steps from answers
        elsewhere: then every answer is written at once, since it may complete an item for it."""
        for lane in self.lanes.values():
            if lane.failure is None and not lane.lost:
                first = next(iter(lane.unfinished()), None)
                if first is not None and not first.closed:
                    return True
        return False

    def _warm_idle(self) -> None:
        """Load the next model of a lane that waits for its steps (a supervisor whose annotators run
        elsewhere), so the load overlaps the wait instead of following it."""
        busy = {owner.server for owner, _, _ in self.running.values()}
        for lane in self.lanes.values():
            if lane.warm is None or lane.failure is not None or lane.lost or lane.server in busy:
                continue
            waiting = next(iter(lane.unfinished()), None)
            if waiting is None or waiting.steps or waiting.warmed:
                continue
            waiting.warmed = True
            threading.Thread(target=_warm, args=(lane.warm, waiting.model), daemon=True,
                             name=f"warm-{waiting.model}").start()

    def _hand_over(self) -> None:
        """Move the unfinished feeds of every failed lane whose requests have all ended."""
        busy = {owner.server for owner, _, _ in self.running.values()}
        for lane in self.lanes.values():
            if lane.failure is None or lane.lost or lane.server in busy:
                continue
            self._flush(interrupted=False)  # its answers are stored before anything else is planned
            left = lane.unfinished()
            lane.lost = True
            lane.feeds = []
            targets = self.on_server_lost(lane.server, lane.failure, left) if left else {}
            for feed in left:
                target = self.lanes.get(targets.get(feed.model, ""))
                if target is None or target.lost or target.failure is not None:
                    raise RuntimeError(f"no live server was named for {feed.model}")
                target.feeds.append(feed)
                feed.steps.join_at = 2 * self._at_once(target)

    def _store(self) -> None:
        arrived, self.arrived = self.arrived, []
        if arrived:
            self.on_answers(arrived)

    def _flush(self, *, interrupted: bool) -> None:
        self._store()  # a batch never counts a step whose calls are not stored
        while self.pending:
            feed = next(iter(self.pending))
            outcomes = self.pending.pop(feed)
            if outcomes:
                self.on_batch(feed, outcomes, interrupted)  # if it raises, the other feeds' batches wait

    def _stop_all(self) -> None:
        """Something raised: no new request, the ones in flight end, and what arrived is handed over."""
        for lane in self.lanes.values():
            lane.stop.set()
        for future in list(self.running):
            future.cancel()
        wait(list(self.running))
        for future, (_, feed, _) in list(self.running.items()):
            if future.cancelled():
                continue
            error = future.exception()
            if error is None:
                self.arrived.append((feed, future.result()))
                self.pending.setdefault(feed, []).append(future.result())
            elif isinstance(error, StepInterrupted):
                self.arrived.append((feed, error.outcome))
        self.running.clear()
        self.tickets.clear()
        self._flush(interrupted=True)


def _warm(load: Callable[[str], None], model: str) -> None:
    try:
        load(model)
    except Exception:  # only a head start: the model's first request loads it anyway
        log.warning("could not load %s ahead of its requests", model, exc_info=True)


def _keep_answers(step: Step, outcome: Outcome) -> None:
    """A step cut short keeps the answers it got: asked again elsewhere, they come from `cached`."""
    for attempt in outcome.attempts:
        step.cached.setdefault(attempt.key, attempt.text)
