"""The real-model tier's server: llama-cpp-python serving SmolLM2-135M-Instruct on loopback, once per session.

`scripts/small_model.sh` builds (or reuses) the server and the model under ~/.cache/spanjudge; these tests skip
only when it says the build is impossible here (its exit status 3), with its reason.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.conftest import REPO

N_CTX = 2048
ALIASES = ("smollm2-135m", "smollm2-135m-b")  # one GGUF under two names (scripts/small_model.sh)
START_SECONDS = 120


@dataclass(frozen=True)
class SmallModel:
    url: str  # http://127.0.0.1:PORT, the address the client talks to
    python: str  # the server virtualenv's interpreter (it has llama_cpp, for in-process reference scores)
    gguf: str
    log: Path

    @property
    def server(self) -> str:
        """The address as a job names an OpenAI-compatible server."""
        return f"openai+{self.url}"

    def tokens(self, text: str, model: str = ALIASES[0]) -> int:
        """The server's own token count of `text` (its /extras/tokenize, special tokens read as such)."""
        answer = httpx.post(f"{self.url}/extras/tokenize", json={"input": text, "model": model}, timeout=60)
        answer.raise_for_status()
        return len(answer.json()["tokens"])


def _prepare() -> dict[str, str]:
    done = subprocess.run(["bash", "scripts/small_model.sh", "prepare"], cwd=REPO, capture_output=True, text=True)
    if done.returncode == 3:
        pytest.skip(f"the small real model cannot be built here: {done.stderr.strip().splitlines()[-1]}")
    if done.returncode != 0:
        pytest.fail(f"scripts/small_model.sh prepare failed:\n{done.stderr[-3000:]}")
    return dict(line.split("=", 1) for line in done.stdout.split() if "=" in line)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def small_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SmallModel]:
    paths = _prepare()
    port = _free_port()
    log = tmp_path_factory.mktemp("small-model") / "server.log"
    with log.open("w") as handle:
        proc = subprocess.Popen(["bash", "scripts/small_model.sh", "serve", str(port), str(N_CTX)], cwd=REPO,
                                stdout=handle, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_SECONDS
        while True:
            try:
                if httpx.get(f"{url}/v1/models", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the llama-cpp-python server did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.5)
        yield SmallModel(url=url, python=paths["SPANJUDGE_LLAMA_PYTHON"], gguf=paths["SPANJUDGE_SMOLLM2_GGUF"],
                         log=log)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
