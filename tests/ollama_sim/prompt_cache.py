"""Prompt caches of the simulated servers: which prompt tokens a request takes from a cache, per profile.

Tokens are whitespace words, as everywhere in the simulator. Each loaded model has its own cache (a reload
starts empty). Sources (../shared/REAL_SERVERS.md, "Prompt caches and what the token counts then mean"):

- Ollama (`""`, `ollama`, `ollama-0.6`): per-slot caches, one slot per parallel request, slots never share
  (`runner/ollamarunner/cache.go`, `InputCache` with `numCtx = kvSize / numSlots`). `LoadCacheSlot` takes the
  free slot with the longest common prefix (`findLongestCacheSlot`); only the tokens after it are evaluated,
  and a prompt cached whole still evaluates its last token ("leave one input to sample").
- llama.cpp server (`llamacpp`): `get_available_slot` takes the free slot whose cached prompt shares the
  largest fraction of the new prompt as a common prefix, if above `--slot-prompt-similarity` (README: 0.5),
  else the least recently used free slot; `cache_prompt` (on by default) reuses that slot's common prefix.
- vLLM (`vllm`): automatic prefix caching hashes full KV blocks (16 tokens) and shares them between all
  requests; a hit covers whole blocks only, never the last token (V1 `get_computed_blocks` caps the hit at
  `num_tokens - 1`). Evicted least recently used when the cache is full.
- TGI before 3.0 (`tgi2`): no prefix cache (prefix caching came with v3.0.0).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

BLOCK_SIZE = 16  # vLLM's default block size
SLOT_SIMILARITY = 0.5  # llama.cpp's --slot-prompt-similarity default (tools/server/README.md@00dc805)


def common_prefix(a: list[str], b: list[str]) -> int:
    """The number of leading tokens `a` and `b` share (a binary search over slice comparisons)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


@dataclass
class _Slot:
    tokens: list[str] = field(default_factory=list)
    in_use: bool = False
    last_used: float = 0.0


class SlotCache:
    """Per-slot caches: Ollama's longest-prefix choice, or llama.cpp's similarity choice with an LRU fallback."""

    def __init__(self, slots: int, *, similarity: float | None = None) -> None:
        self.slots = [_Slot() for _ in range(slots)]
        self.similarity = similarity  # None: Ollama's rule
        self._lock = threading.Lock()

    def take(self, tokens: list[str]) -> tuple[int | None, int]:
        """Take a free slot for a prompt: (the slot, or None when all are busy; the tokens taken from it)."""
        with self._lock:
            free = [(i, s) for i, s in enumerate(self.slots) if not s.in_use]
            if not free:
                return None, 0
            shared = {i: common_prefix(s.tokens, tokens) for i, s in free}
            if self.similarity is None:  # findLongestCacheSlot: the first free slot with the longest prefix
                chosen = max(free, key=lambda pair: (shared[pair[0]], -pair[0]))[0]
            else:
                similar = [(shared[i] / max(len(tokens), 1), i) for i, s in free if s.tokens]
                best = max((pair for pair in similar if pair[0] > self.similarity), default=None)
                chosen = best[1] if best else min(free, key=lambda pair: pair[1].last_used)[0]
            slot = self.slots[chosen]
            slot.in_use, slot.last_used = True, time.monotonic()
            return chosen, min(shared[chosen], max(len(tokens) - 1, 0))  # the last token is always evaluated

    def give_back(self, slot: int | None, tokens: list[str]) -> None:
        if slot is None:
            return
        with self._lock:
            self.slots[slot].tokens = list(tokens)
            self.slots[slot].in_use = False


class BlockCache:
    """vLLM's global prefix cache: chained hashes of full blocks, least recently used evicted."""

    def __init__(self, capacity_blocks: int, block_size: int = BLOCK_SIZE) -> None:
        self.capacity = max(1, capacity_blocks)
        self.block_size = block_size
        self.blocks: OrderedDict[int, None] = OrderedDict()
        self._lock = threading.Lock()

    def _hashes(self, tokens: list[str]) -> list[int]:
        hashes, previous = [], 0
        for start in range(0, len(tokens) - self.block_size + 1, self.block_size):
            previous = hash((previous, tuple(tokens[start:start + self.block_size])))
            hashes.append(previous)
        return hashes

    def take(self, tokens: list[str]) -> tuple[None, int]:
        hashes = self._hashes(tokens)
        with self._lock:
            hit = 0
            for value in hashes:
                if value not in self.blocks:
                    break
                hit += 1
            for value in hashes:  # the prompt's blocks are cached now (and the most recently used)
                self.blocks[value] = None
                self.blocks.move_to_end(value)
            while len(self.blocks) > self.capacity:
                self.blocks.popitem(last=False)
        cached = hit * self.block_size
        most = (max(len(tokens) - 1, 0) // self.block_size) * self.block_size
        return None, min(cached, most)

    def give_back(self, slot: None, tokens: list[str]) -> None:
        return


def make_cache(profile: str, *, slots: int, context_length: int) -> SlotCache | BlockCache | None:
    """The prompt cache a model of this profile keeps with `slots` cache slots (0: none)."""
    if slots <= 0 or profile == "tgi2":
        return None
    if profile == "vllm":
        return BlockCache(slots * context_length // BLOCK_SIZE)
    return SlotCache(slots, similarity=SLOT_SIMILARITY if profile == "llamacpp" else None)
