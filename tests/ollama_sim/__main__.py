"""Run the simulated Ollama as a process: `python -m tests.ollama_sim --port N [--preset NAME | --models A,B]`.

A SIMULATION for trying the project without a GPU and for tests: no language model runs; every answer is
made up from the prompt's words (see answers.py). The first line on stdout is the server's URL (flushed at
once), so a parent process can read it before talking to the server; the notice that it is a simulation
goes to stderr. SIGTERM or SIGINT stops it.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

from evaluation.engine.presets import PRESETS

from .config import COUNT_MODES, SimConfig
from .profiles import PROFILES
from .server import OllamaSim


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.ollama_sim", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (default)")
    parser.add_argument("--config", type=Path, help="JSON file with SimConfig fields")
    parser.add_argument("--preset", choices=list(PRESETS), help="serve the models of this ensemble preset")
    parser.add_argument("--models", default="", help="comma-separated model tags to serve (added to --preset's)")
    parser.add_argument("--call-time", type=float, default=None, help="seconds of 'generation' per request")
    parser.add_argument("--profile", choices=[p for p in PROFILES if p], default=None,
                        help="behave as this real server does with long prompts, answer budgets and thinking")
    parser.add_argument("--context-length", type=int, default=None, help="every model's trained context length")
    parser.add_argument("--cache-slots", type=int, default=None,
                        help="prompt-cache slots per loaded model (0: no prompt cache); see prompt_cache.py")
    parser.add_argument("--count", choices=COUNT_MODES, default=None,
                        help="what prompt_eval_count reports: the whole prompt, only the evaluated tokens, or "
                             "nothing for a cached prompt")
    args = parser.parse_args(argv)

    try:
        data = json.loads(args.config.read_text()) if args.config else {}
        models = list(PRESETS[args.preset].annotators) + [PRESETS[args.preset].supervisor] if args.preset else []
        models += [m.strip() for m in args.models.split(",") if m.strip()]
        if models:
            data["models"] = list(dict.fromkeys([*data.get("models", []), *models]))
        if args.call_time is not None:
            data["call_time"] = args.call_time
        if args.profile is not None:
            data["profile"] = args.profile
        if args.context_length is not None:
            data["context_length"] = args.context_length
        if args.cache_slots is not None:
            data["cache_slots"] = args.cache_slots
        if args.count is not None:
            data["count"] = args.count
        config = SimConfig.from_dict(data)
    except (OSError, TypeError, ValueError) as exc:
        print(f"ollama_sim: bad config {args.config}: {exc}", file=sys.stderr)
        return 2

    # A woken request thread waits for the GIL up to the switch interval (5 ms by default), which
    # would show up as scheduling overhead in benchmarks; this process does little but wait.
    sys.setswitchinterval(0.0005)
    sim = OllamaSim(config, host=args.host, port=args.port)
    stop = threading.Event()

    def _on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()
        # A graceful stop that hangs (a stuck client connection) must not keep the process alive:
        # `kill PID` always ends it, within a few seconds at the latest.
        threading.Timer(5.0, os._exit, args=(0,)).start()

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    with sim:
        print(sim.url, flush=True)
        print(f"SIMULATED Ollama at {sim.url} - no model runs here; answers are made up from the prompt's words.\n"
              f"  Models it pretends to have: {', '.join(config.models)}\n  Stop it with Ctrl-C (or kill its pid).",
              file=sys.stderr, flush=True)
        stop.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
