"""The moment a request holds a slot on its server, as the server itself signals it.

A server with a prompt cache per slot gives an arriving request the free slot whose cache shares the longest
prefix with it (Ollama's runner, `findLongestCacheSlot`; llama.cpp's server by similarity). The scheduler
therefore sends the first call of a new prefix group only once the calls sent before it hold their slots
(`evaluation.runs.cache_order.InTransit`), and needs to learn when that is without guessing at a delay.
A streaming backend learns it from the answer's headers: Ollama sends them with the first chunk, after it
has read the prompt into a slot. The backend calls `landed()`; the scheduler listens with `listening()`.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator
from contextlib import contextmanager

_listener: contextvars.ContextVar[Callable[[], None] | None] = contextvars.ContextVar("landing", default=None)


@contextmanager
def listening(callback: Callable[[], None]) -> Iterator[None]:
    """Call `callback` when a request made by this thread inside the block holds its slot."""
    token = _listener.set(callback)
    try:
        yield
    finally:
        _listener.reset(token)


def landed() -> None:
    """Said by a backend once the server has taken the request into a slot (a no-op when nobody listens)."""
    callback = _listener.get()
    if callback is not None:
        callback()
