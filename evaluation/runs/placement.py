"""Which server runs which model, and the least wall time a job could take on K servers (no database).

A server holds one model at a time (a 70-123B model fills a GPU), so a model's work on it is its load
plus its calls in rounds of P: `load + ceil(calls / P) * call`. Placement hands out models longest work
first, each to the least busy server that has it (the LPT rule: within 4/3 of the best spread, and exact
for equal models, the ensemble's usual case).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

DEFAULT_CALL_SECONDS = 20.0  # a call of a 70B model with a few hundred tokens out, before anything is measured
DEFAULT_LOAD_SECONDS = 30.0  # loading such a model from disk into GPU memory


@dataclass(frozen=True)
class ModelWork:
    model: str
    calls: int
    call_seconds: float = DEFAULT_CALL_SECONDS
    load_seconds: float = DEFAULT_LOAD_SECONDS

    def seconds(self, parallel: int, *, loaded: bool = False) -> float:
        """Expected seconds of this model's calls on one server with `parallel` in flight (0 with no calls);
        `loaded`: the server holds its models from its start (an OpenAI-compatible one), so there is no load."""
        if self.calls <= 0:
            return 0.0
        return (0.0 if loaded else self.load_seconds) + math.ceil(self.calls / parallel) * self.call_seconds


class PlacementError(Exception):
    """No server has one or more models; `models` lists them."""

    def __init__(self, models: Sequence[str]) -> None:
        super().__init__(f"no server has {', '.join(models)}")
        self.models = list(models)


@dataclass(frozen=True)
class Placement:
    models: dict[str, str]  # model -> server
    seconds: dict[str, float] = field(default_factory=dict)  # server -> expected seconds of its models

    def on(self, server: str) -> list[str]:
        return [model for model, where in self.models.items() if where == server]


def place(
    works: Sequence[ModelWork],
    servers: Mapping[str, Collection[str]],
    *,
    parallel: int | Mapping[str, int],
    busy: Mapping[str, float] | None = None,
    loaded: Collection[str] = (),
) -> Placement:
    """Put each model with calls left on a server that has it, balancing expected seconds.

    `servers` maps each usable server (in the job's order, which breaks ties) to the models it has;
    `parallel` is the requests in flight on every server, or per server (each serves only so many at once);
    `busy` is work the servers already carry (a hand-over adds to running servers); `loaded` names the servers
    that hold their models from their start (OpenAI-compatible ones load nothing per job). Models without
    calls need no server. Raise PlacementError naming every model no server has.
    """
    load = {server: float((busy or {}).get(server, 0.0)) for server in servers}
    order = list(servers)
    missing = [w.model for w in works if w.calls > 0 and not any(w.model in servers[s] for s in order)]
    if missing:
        raise PlacementError(missing)

    def at_once(server: str) -> int:
        return parallel if isinstance(parallel, int) else max(1, parallel.get(server, 1))

    widest = max((at_once(s) for s in order), default=1)
    chosen: dict[str, str] = {}
    # Longest first; sorted() is stable, so equal models keep the job's order. Each goes where it would end first
    # (the least busy server when all serve as many at once).
    for work in sorted((w for w in works if w.calls > 0), key=lambda w: -w.seconds(widest)):
        server = min((s for s in order if work.model in servers[s]),
                     key=lambda s: (load[s] + work.seconds(at_once(s), loaded=s in loaded), order.index(s)))
        chosen[work.model] = server
        load[server] += work.seconds(at_once(server), loaded=server in loaded)
    ordered = {w.model: chosen[w.model] for w in works if w.model in chosen}
    return Placement(ordered, {s: round(load[s], 3) for s in order})


def best_makespan(seconds: Sequence[float], servers: int) -> float:
    """The least time in which `servers` machines finish jobs of these lengths, one job at a time each.

    Exact (branch and bound over assignments, longest job first); meant for an ensemble's handful of models.
    """
    if servers < 1:
        raise ValueError("at least one server is needed")
    jobs = sorted((s for s in seconds if s > 0), reverse=True)
    if not jobs:
        return 0.0
    best = [max(sum(jobs) / servers, jobs[0]), sum(jobs)]  # [lower bound, best found so far]
    loads = [0.0] * min(servers, len(jobs))

    def assign(index: int) -> None:
        if index == len(jobs):
            best[1] = min(best[1], max(loads))
            return
        tried: set[float] = set()
        for machine, load in enumerate(loads):
            if load in tried or load + jobs[index] >= best[1]:
                continue  # an equally loaded machine gives the same outcome; a worse one cannot win
            tried.add(load)
            loads[machine] += jobs[index]
            assign(index + 1)
            loads[machine] -= jobs[index]
            if best[1] <= best[0]:
                return

    assign(0)
    return best[1]


def job_bound(annotators: Sequence[float], supervisor: float | None, servers: int, last_call: float) -> float:
    """A lower bound of an ensemble job's wall time on `servers` servers.

    Every model's work spread over the servers as well as possible; and, with a supervisor, the
    annotators' own best spread plus one supervisor call, since the last item's merge can only start
    once its last annotator answered (the pipelined supervisor waits for nothing else).
    """
    everything = best_makespan([*annotators, *([supervisor] if supervisor is not None else [])], servers)
    if supervisor is None:
        return everything
    return max(everything, best_makespan(annotators, servers) + last_call)


def placement_record(
    placement: Placement, kinds: Mapping[str, str], *, down: Mapping[str, str] | None = None,
    parallel: Mapping[str, tuple[int, str]] | None = None,
) -> dict[str, Any]:
    """The JSON stored on the run (`EvaluatorRun.placement`) and shown on its page: per server, in the
    job's order, its kind, its models, their expected seconds, the requests in flight on it and where that
    number comes from, and why it is left out if it is."""
    return {
        "servers": [
            {
                "server": server, "kind": kind, "models": placement.on(server),
                "expected_seconds": placement.seconds.get(server, 0.0),
                "state": f"left out: {(down or {})[server]}" if server in (down or {}) else "up",
                **({"parallel": parallel[server][0], "parallel_source": parallel[server][1]}
                   if parallel and server in parallel else {}),
            }
            for server, kind in kinds.items()
        ],
        "models": dict(placement.models),
        "handoffs": [],
    }
