"""Start the simulated Ollama in a child process and talk to its /_sim control endpoints."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx

from .config import SimConfig
from .stats import SimStats

_PROJECT_ROOT = Path(__file__).resolve().parents[2]


class SimProcess:
    """`with SimProcess(SimConfig(...)) as sim:` runs `python -m tests.ollama_sim` and exposes `sim.url`."""

    def __init__(self, config: SimConfig | None = None, *, port: int = 0) -> None:
        self.config = config or SimConfig()
        self.port = port
        self.url = ""
        self._proc: subprocess.Popen[str] | None = None
        self._config_path: Path | None = None

    def start(self) -> SimProcess:
        handle, name = tempfile.mkstemp(prefix="ollama-sim-", suffix=".json")
        with os.fdopen(handle, "w") as fh:
            json.dump(self.config.to_dict(), fh)
        self._config_path = Path(name)
        cmd = [sys.executable, "-m", "tests.ollama_sim", "--port", str(self.port), "--config", name]
        self._proc = subprocess.Popen(cmd, cwd=_PROJECT_ROOT, stdout=subprocess.PIPE, text=True)
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline().strip()  # blocks until the server prints its URL or dies
        if not line.startswith("http://"):
            self.stop()
            raise RuntimeError(f"simulated Ollama did not start (first line: {line!r})")
        self.url = line
        return self

    def stop(self) -> None:
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            if self._proc.stdout is not None:
                self._proc.stdout.close()
            self._proc = None
        if self._config_path is not None:
            self._config_path.unlink(missing_ok=True)
            self._config_path = None

    def __enter__(self) -> SimProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def stats(self) -> SimStats:
        return SimStats.from_dict(httpx.get(f"{self.url}/_sim/stats", timeout=10).raise_for_status().json())

    def configure(self, **changes: Any) -> dict[str, Any]:
        response = httpx.post(f"{self.url}/_sim/config", json=changes, timeout=10)
        return response.raise_for_status().json()

    def reset(self, *, stats: bool = True, models: bool = True) -> None:
        body = {"stats": stats, "models": models}
        httpx.post(f"{self.url}/_sim/reset", json=body, timeout=10).raise_for_status()
