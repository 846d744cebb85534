"""The order in which one model's calls go to one server so that its prompt cache does the work.

LLM servers keep the tokens of recent prompts and evaluate only what is new, but a cache belongs to a slot
(Ollama: one per parallel request, and slots never share; the llama.cpp server likewise) and holds the last
prompt that slot ran. Calls that share a long prefix (DHP's original and perturbed copies of one output for
one metric, an item's repeated samples) therefore go back to back on the same slot: with P requests in
flight, P groups run side by side, each group's calls one after another. A slot whose group is done starts
the next group. When none is left it helps the group with the most calls still waiting only if that group
has at least `join_at` of them (the helper evaluates the whole shared prefix again), or when nothing else
runs. Retries and repairs of a step follow their first attempt on the same thread, so they stay on its slot.

A server gives a free slot to whichever request arrives first, by the longest common prefix: a new group's
first call could take the slot another group was about to continue on (it often shares more with it, say
the same metric's instructions). So the first call of a new group goes out only once every call handed out
before it to continue a group holds its slot (`InTransit`), as the server itself says (a streaming answer's
headers, `llm.landing`); the calls that continue a group go at once. No clock decides it, so the order holds
however loaded the machine is.

`CacheOrder` is the queue of one feed (one model on one server): the scheduler asks it for the next step of
the group a freed slot was running, and learns with it whether that step opens a group while others are under
way (send it after them). No Django, no I/O.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from collections.abc import Hashable, Iterable, Iterator
from typing import NamedTuple, Protocol


class Grouped(Protocol):
    prompt: str
    group: Hashable | None


def group_of(step: Grouped) -> Hashable:
    """The step's prefix group: the caller's key, else its prompt (identical prompts share everything)."""
    return step.group if step.group is not None else step.prompt


class Taken(NamedTuple):
    """A step for a free slot; `opens_group`: it starts a group while others are under way, so it should go
    out after the calls sent before it hold their slots (`InTransit.wait_for_earlier`)."""

    step: Grouped
    opens_group: bool = False
    continues: bool = False  # the next call of the group the freed slot ran: it belongs on that slot


class CacheOrder:
    """Steps grouped by shared prefix, handed out group by group (`grouped=False`: in the order given)."""

    def __init__(self, steps: Iterable[Grouped] = (), *, grouped: bool = True, join_at: int = 8) -> None:
        self.grouped = grouped
        self.join_at = join_at
        self._groups: OrderedDict[Hashable, deque[Grouped]] = OrderedDict()
        self._started: set[Hashable] = set()
        self._count = 0
        self.extend(steps)

    def extend(self, steps: Iterable[Grouped]) -> None:
        for step in steps:
            key = group_of(step) if self.grouped else None
            self._groups.setdefault(key, deque()).append(step)
            self._count += 1

    def take(self, after: Hashable | None = None, *, idle: bool = False) -> Taken | None:
        """The next step for a slot that just ran group `after` (None: a slot with no group yet): that group's
        next step, else the first group not started, else one of the group with the most steps left if it has
        `join_at` or more (or the caller has nothing running: `idle`); None: let this slot wait."""
        if not self._count:
            return None
        if not self.grouped:
            return Taken(self._pop(None))
        if after is not None and after in self._groups:
            return Taken(self._pop(after), continues=True)
        # Only worth a wait when another group is under way (single-call groups, an ensemble's, never wait).
        others_running = bool(self._started - {after})
        opened = next((key for key in self._groups if key not in self._started), None)
        if opened is not None:
            self._started.add(opened)
            # In prompt order, each call follows the one it shares the longest prefix with (sorted strings: the
            # common prefix of any two is the least of the adjacent ones between them), so the chain evaluates
            # the fewest tokens a single slot can.
            self._groups[opened] = deque(sorted(self._groups[opened], key=lambda step: step.prompt))
            return Taken(self._pop(opened), opens_group=others_running)
        busiest = max(self._groups, key=lambda key: len(self._groups[key]))
        if len(self._groups[busiest]) >= self.join_at or idle:
            return Taken(self._pop(busiest), opens_group=others_running)
        return None

    def put_back(self, step: Grouped) -> None:
        """A step that was cut short goes first again, its group open to the next free slot."""
        key = group_of(step) if self.grouped else None
        self._groups.setdefault(key, deque()).appendleft(step)
        self._groups.move_to_end(key, last=False)
        self._started.discard(key)
        self._count += 1

    def _pop(self, key: Hashable) -> Grouped:
        steps = self._groups[key]
        step = steps.popleft()
        self._count -= 1
        if not steps:
            del self._groups[key]
            self._started.discard(key)
        return step

    def clear(self) -> None:
        self._groups.clear()
        self._started.clear()
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def __bool__(self) -> bool:
        return self._count > 0

    def __iter__(self) -> Iterator[Grouped]:
        for steps in self._groups.values():
            yield from steps


class InTransit:
    """The calls of one server that continue a group, sent and not yet holding their slot, numbered in the
    order the scheduler handed calls out.

    Only a continuing call can lose its slot to a newcomer (the freed slot holds its prefix), so only those are
    waited for: a call that opens a group waits for the continuing calls handed out before it, and for nothing
    sent after it (it cannot starve), nor for other groups' first calls (fresh prefixes cannot be taken from
    each other). A call lands when its server says it holds a slot. When it ends its ticket is held again
    (`hold`) until the scheduler decides what the freed slot runs next: its group's next call goes out under
    that ticket, which lands when it holds the slot; otherwise the ticket lands at once."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._next = 0
        self._open: set[int] = set()

    def send(self, *, continues: bool) -> int:
        with self._cond:
            ticket = self._next
            self._next += 1
            if continues:
                self._open.add(ticket)
            return ticket

    def land(self, ticket: int) -> None:
        with self._cond:
            if ticket in self._open:
                self._open.discard(ticket)
                self._cond.notify_all()

    def hold(self, ticket: int) -> None:
        """Keep `ticket` open after its call ended: the slot it leaves holds its group's prefix until the
        scheduler hands that slot's next call out under the same ticket (or lands it: the group is done), so a
        new group's first call handed out after it cannot take that slot in between."""
        with self._cond:
            self._open.add(ticket)

    def wait_for_earlier(self, ticket: int, stop: threading.Event) -> bool:
        """Block until every continuing call handed out before `ticket` holds its slot; False when `stop` was
        set meanwhile."""
        with self._cond:
            while any(other < ticket for other in self._open):
                if stop.is_set():
                    return False
                self._cond.wait(0.05)  # only to look at `stop` again: landings notify
            return not stop.is_set()

    def pending(self) -> int:
        with self._cond:
            return len(self._open)
