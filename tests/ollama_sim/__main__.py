"""Run the simulated Ollama as a process: `python -m tests.ollama_sim --port N --config FILE.json`.

The first line on stdout is the server's URL (flushed at once), so a parent process can read it
before talking to the server. SIGTERM or SIGINT stops it.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

from .config import SimConfig
from .server import OllamaSim


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.ollama_sim", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (default)")
    parser.add_argument("--config", type=Path, help="JSON file with SimConfig fields")
    args = parser.parse_args(argv)

    try:
        data = json.loads(args.config.read_text()) if args.config else {}
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

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    with sim:
        print(sim.url, flush=True)
        stop.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
